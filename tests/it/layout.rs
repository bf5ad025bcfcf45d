//! `scripts/check-layout` on small trees planted in a temporary directory:
//! a circle of files of any length fails the check with the line of each
//! import, and so does a crate holding more than its share of the
//! production lines without a reason in ARCHITECTURE.md.

use std::path::Path;
use std::process::Command;

fn check_layout(root: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-layout");
    let out = Command::new("python3")
        .arg(&script)
        .arg(root)
        .output()
        .expect("python3 runs scripts/check-layout");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "check-layout wrote to stderr:\n{stderr}");
    (out.status.success(), stdout)
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Three crates of the same size, so that none is over the share; the
/// first holds `lib.rs` declaring modules `a`, `b` and `c` with the given
/// texts.
fn tree(a: &str, b: &str, c: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "crates/one/src/lib.rs", "mod a;\nmod b;\nmod c;\n");
    write(root, "crates/one/src/a.rs", a);
    write(root, "crates/one/src/b.rs", b);
    write(root, "crates/one/src/c.rs", c);
    let lines = [a, b, c].iter().map(|t| t.lines().count()).sum::<usize>() + 3;
    for other in ["two", "three"] {
        let body = "pub fn f() {}\n".repeat(lines);
        write(root, &format!("crates/{other}/src/lib.rs"), &body);
    }
    dir
}

#[test]
fn a_circle_of_three_files_fails_with_the_line_of_each_import() {
    let dir = tree(
        "use crate::b::B;\npub struct A(pub B);\n",
        "\nuse crate::c::C;\npub struct B(pub C);\n",
        "pub struct C;\n\n\npub fn a() -> Option<crate::a::A> {\n    None\n}\n",
    );
    let (ok, out) = check_layout(dir.path());
    assert!(!ok, "a three-file circle passed:\n{out}");
    assert!(
        out.contains(
            "file circle of 3 files: crates/one/src/a.rs -> crates/one/src/b.rs -> crates/one/src/c.rs -> crates/one/src/a.rs"
        ),
        "{out}"
    );
    assert!(
        out.contains("crates/one/src/a.rs:1 names crates/one/src/b.rs: use crate::b::B"),
        "{out}"
    );
    assert!(
        out.contains("crates/one/src/b.rs:2 names crates/one/src/c.rs: use crate::c::C"),
        "{out}"
    );
    assert!(
        out.contains("crates/one/src/c.rs:4 names crates/one/src/a.rs: crate::a::A"),
        "{out}"
    );
    assert!(
        out.contains(
            "files in the circle: crates/one/src/a.rs, crates/one/src/b.rs, crates/one/src/c.rs"
        ),
        "{out}"
    );
    assert!(out.contains("check-layout: FAILED"), "{out}");
}

#[test]
fn the_same_files_without_the_closing_import_pass() {
    let dir = tree(
        "use crate::b::B;\npub struct A(pub B);\n",
        "\nuse crate::c::C;\npub struct B(pub C);\n",
        "pub struct C;\n\n\npub fn a() -> Option<u8> {\n    None\n}\n",
    );
    let (ok, out) = check_layout(dir.path());
    assert!(ok, "a chain without a circle failed:\n{out}");
    assert!(out.contains("check-layout: ok"), "{out}");
}

#[test]
fn a_crate_over_its_share_fails_unless_architecture_gives_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "crates/big/src/lib.rs", &"pub fn f() {}\n".repeat(60));
    // Test code does not count: a file a `#[cfg(test)] mod` declares, or an
    // inline test module.
    let small = "pub fn f() {}\n".repeat(20)
        + "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod inline {\n    fn g() {}\n}\n";
    write(root, "crates/small/src/lib.rs", &small);
    write(
        root,
        "crates/small/src/tests.rs",
        &"fn t() {}\n".repeat(500),
    );
    write(
        root,
        "crates/other/src/lib.rs",
        &"pub fn f() {}\n".repeat(20),
    );

    let (ok, out) = check_layout(root);
    assert!(!ok, "a crate with 60 % of the lines passed:\n{out}");
    assert!(
        out.contains("crate share: big: 60 of 100 production lines (60%), over 35%"),
        "{out}"
    );
    assert!(!out.contains("crate share: small"), "{out}");

    write(
        root,
        "ARCHITECTURE.md",
        "# Architecture\n\n- Over the share by design: `big`: being split.\n",
    );
    let (ok, out) = check_layout(root);
    assert!(ok, "the reason in ARCHITECTURE.md was not found:\n{out}");
    assert!(
        out.contains("ARCHITECTURE.md gives the reason: being split."),
        "{out}"
    );
}
