//! Encrypted states in the reference's password format (`0x26 0x01`): read
//! by every command whatever wrote them, with `HUB_CRYPTO_PASSWORD`;
//! refused with a clear error without it; the password never shown.

use crate::common::{demo_copy, files_below, pinned_command, Output};
use hub_state::crypto;
use std::path::Path;

const PASSWORD: &str = "pw-Zq81-never-printed";

/// Runs hub in `dir` with pinned values and `HUB_CRYPTO_PASSWORD` set to
/// `password`, or unset.
fn hub(dir: &Path, args: &[&str], password: Option<&str>) -> Output {
    let mut command = pinned_command(dir, args);
    command.env_remove(crypto::PASSWORD_VARIABLE);
    if let Some(password) = password {
        command.env(crypto::PASSWORD_VARIABLE, password);
    }
    Output::of(command.output().expect("run hub"), dir)
}

/// The demo deployed into `plain.state`, and `sealed.state`: the same
/// state encrypted with [`PASSWORD`].
fn sealed_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = demo_copy();
    let deploy = ["deploy", "hub.yaml", "params.yaml", "-s", "plain.state"];
    hub(&dir, &deploy, None).success();
    let plain = std::fs::read(dir.join("plain.state")).expect("state");
    let sealed = crypto::seal(PASSWORD, &plain).expect("seal");
    std::fs::write(dir.join("sealed.state"), sealed).expect("write");
    (tmp, dir)
}

/// The commands that read `STATE` and write nothing.
fn readers(state: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["state", "pull", state],
        vec!["explain", state, "--json"],
        vec!["plan", "hub.yaml", "params.yaml", "-s", state],
    ]
}

#[test]
fn plan_explain_and_state_pull_read_a_sealed_state_as_its_plain_copy() {
    let (_tmp, dir) = sealed_demo();
    let sealed_bytes = std::fs::read(dir.join("sealed.state")).expect("sealed");
    for (sealed, plain) in readers("sealed.state")
        .into_iter()
        .zip(readers("plain.state"))
    {
        let from_sealed = hub(&dir, &sealed, Some(PASSWORD));
        from_sealed.success();
        let from_plain = hub(&dir, &plain, None);
        from_plain.success();
        assert_eq!(
            from_sealed.stdout.replace("sealed.state", "plain.state"),
            from_plain.stdout,
            "{sealed:?}"
        );
        assert!(!from_sealed.stdout.is_empty(), "{sealed:?}");
    }
    assert_eq!(
        std::fs::read(dir.join("sealed.state")).expect("sealed"),
        sealed_bytes,
        "readers leave the sealed file as it was"
    );
}

#[test]
fn without_the_password_a_sealed_state_is_refused_naming_the_file_and_the_variable() {
    let (_tmp, dir) = sealed_demo();
    for args in readers("sealed.state") {
        let out = hub(&dir, &args, None);
        out.failure()
            .stderr_has("cannot decrypt `sealed.state`")
            .stderr_has("HUB_CRYPTO_PASSWORD");
    }
}

#[test]
fn a_wrong_password_is_refused_without_being_printed() {
    let (_tmp, dir) = sealed_demo();
    let guess = "guess-Yx4-not-it";
    for args in readers("sealed.state") {
        let out = hub(&dir, &args, Some(guess));
        out.failure()
            .stderr_has("cannot decrypt `sealed.state`: wrong password or damaged file");
        assert!(!out.stderr.contains(guess) && !out.stdout.contains(guess));
    }
}

#[test]
fn a_state_encrypted_with_a_key_service_is_refused_by_name() {
    let (_tmp, dir) = demo_copy();
    let mut kms = vec![0x26, 0x02];
    kms.extend_from_slice(&[7u8; 400]);
    std::fs::write(dir.join("kms.state"), kms).expect("write");
    hub(&dir, &["state", "pull", "kms.state"], Some(PASSWORD))
        .failure()
        .stderr_has("cannot decrypt `kms.state`")
        .stderr_has("AWS KMS");
}

/// No `--debug` flag exists here: every output of a deploy over a sealed
/// state (`--why`, the summary, the state, the logs, the report) is
/// searched for the password instead.
#[test]
fn the_password_appears_in_no_output_and_no_file() {
    let (_tmp, dir) = sealed_demo();
    let args = [
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        "sealed.state",
        "--why",
        "--report",
        "report.json",
    ];
    let out = hub(&dir, &args, Some(PASSWORD));
    out.success();
    assert!(!out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD));
    for entry in files_below(&dir) {
        let bytes = std::fs::read(&entry).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(PASSWORD), "{}", entry.display());
    }
}

#[test]
fn a_deploy_over_a_sealed_local_state_writes_it_plain() {
    let (_tmp, dir) = sealed_demo();
    let args = ["deploy", "hub.yaml", "params.yaml", "-s", "sealed.state"];
    hub(&dir, &args, Some(PASSWORD)).success();
    let written = std::fs::read(dir.join("sealed.state")).expect("state");
    assert!(!crypto::is_sealed(&written));
    let state = crate::common::read_documents(&dir.join("sealed.state")).remove(0);
    assert_eq!(state["components"]["app"]["status"], "deployed");
}

#[test]
fn encrypted_true_without_a_password_is_refused_before_anything_runs() {
    let (_tmp, dir) = demo_copy();
    let args = [
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        "new.state",
        "--encrypted=true",
    ];
    let out = hub(&dir, &args, None);
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("--encrypted")
        .stderr_has("HUB_CRYPTO_PASSWORD");
    assert!(!dir.join("new.state").exists());
    let off = [
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        "new.state",
        "--encrypted=false",
    ];
    hub(&dir, &off, None).success();
    assert!(!crypto::is_sealed(
        &std::fs::read(dir.join("new.state")).expect("state")
    ));
}
