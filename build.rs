//! Records the git commit hub is built from (`HUB_GIT_COMMIT`), or
//! `unknown` when there is no git or no checkout: the build never fails
//! for want of one.
//!
//! Only files that exist are watched: Cargo treats a watched file that is
//! missing as changed, so watching `packed-refs` in a checkout without one
//! rebuilt hub on every `cargo build`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=HUB_GIT_COMMIT={commit}");
    // The commit changes when HEAD names another branch or when the branch
    // it names moves: a loose ref file, or a line of packed-refs.
    for file in ["HEAD", "packed-refs"] {
        if let Some(path) = git_path(file).filter(|path| path.is_file()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]).and_then(|b| git_path(&b)) {
        if branch.is_file() {
            println!("cargo:rerun-if-changed={}", branch.display());
        } else if let Some(folder) = branch.parent().filter(|folder| folder.is_dir()) {
            // A branch only in packed-refs gets its loose file at the next
            // commit: watch the folder it will appear in.
            println!("cargo:rerun-if-changed={}", folder.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// Where git keeps `file` of this checkout.
fn git_path(file: &str) -> Option<PathBuf> {
    git(&["rev-parse", "--git-path", file]).map(PathBuf::from)
}

/// The trimmed output of a successful `git` command.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}
