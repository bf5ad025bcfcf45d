//! `hub util otp`: the component side of secret outputs (deploy.md §7.4),
//! checked against the library's decoder with the same pad.

use crate::common::Output;
use hub_engine::child::capture::{decode_secrets, parse_outputs};
use hub_engine::child::otp;

/// A fixed 32-byte pad and its `HUB_RANDOM` text.
fn pad() -> (Vec<u8>, String) {
    let pad: Vec<u8> = (0..32u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    let text = otp::pad_to_env(&pad);
    (pad, text)
}

/// Runs `hub util otp ARGS` with `stdin` and `HUB_RANDOM` (when given)
/// in an otherwise reduced environment. The shared harness has no stdin,
/// so this drives the binary directly.
fn otp_with_stdin(stdin: &str, random: Option<&str>, args: &str) -> Output {
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub binary");
    command
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["util", "otp"])
        .args(args.split_whitespace())
        .write_stdin(stdin.as_bytes().to_vec());
    if let Some(random) = random {
        command.env("HUB_RANDOM", random);
    }
    Output::of(command.output().expect("run hub"), dir.path())
}

#[test]
fn deploy_case_39_otp_output_decodes_back_with_the_pad() {
    let (pad, random) = pad();
    let out = otp_with_stdin("password = s3cret\nuser = admin\n", Some(&random), "");
    out.success();
    assert!(out.stdout.starts_with("secrets = "), "{}", out.stdout);
    assert!(out.stdout.ends_with('\n'));
    assert_eq!(out.stdout.lines().count(), 1);
    assert!(!out.stdout.contains("s3cret"));
    let blob = out.stdout.trim_end().trim_start_matches("secrets = ");
    assert!(!blob.contains('='), "no base64 padding: {blob}");

    let mut raw = parse_outputs(&format!("Outputs:\n{}\n", out.stdout));
    let mut warnings = hub_manifest::diag::Warnings::default();
    decode_secrets(&mut raw, &pad, &mut warnings);
    assert_eq!(warnings.iter().count(), 0);
    assert_eq!(raw["password"], "s3cret");
    assert_eq!(raw["user"], "admin");
}

#[test]
fn deploy_case_39_otp_accepts_the_encode_argument() {
    let (pad, random) = pad();
    let out = otp_with_stdin("k = v\n", Some(&random), "encode");
    out.success();
    let blob = out.stdout.trim_end().trim_start_matches("secrets = ");
    assert_eq!(otp::decode(blob, &pad).expect("decodes"), b"k = v\n");
}

#[test]
fn deploy_case_39_otp_requires_hub_random() {
    otp_with_stdin("k = v\n", None, "")
        .failure()
        .stderr_has("HUB_RANDOM")
        .stderr_has("hub deploy");
}

#[test]
fn deploy_case_39_otp_prints_nothing_for_blank_input() {
    let (_, random) = pad();
    for stdin in ["", " \r\n\n  "] {
        let out = otp_with_stdin(stdin, Some(&random), "");
        out.success();
        assert_eq!(out.stdout, "", "{stdin:?}");
    }
}

#[test]
fn otp_input_longer_than_the_pad_fails_with_a_hint() {
    let (_, random) = pad();
    let long = format!("token = {}\n", "x".repeat(40));
    otp_with_stdin(&long, Some(&random), "")
        .failure()
        .stderr_has("longer than the 32-byte one-time pad")
        .stderr_has("lifecycle.options.random.bytes");
}

#[test]
fn otp_rejects_a_bad_pad_and_other_arguments() {
    otp_with_stdin("k = v\n", Some("not base64!"), "")
        .failure()
        .stderr_has("HUB_RANDOM");
    let (_, random) = pad();
    otp_with_stdin("k = v\n", Some(&random), "decode")
        .failure()
        .stderr_has("decode");
}

/// Issue 25, item 3: a line of an `Outputs:` block that is not
/// `name = value` is a warning naming the component and the line; a
/// declared output it leaves empty is an error quoting that line.
#[test]
fn malformed_outputs_lines_are_warnings_and_an_output_they_leave_empty_an_error() {
    let test = crate::common::Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: mal}
            components:
            - name: db
              source: {dir: db}
            lifecycle: {order: [db]}
            ",
        )
        .file(
            "db/hub-component.yaml",
            "
            kind: component
            meta: {name: db}
            outputs:
            - {name: url, fromTfVar: url}
            - {name: host, fromTfVar: host}
            ",
        )
        .script(
            "db/deploy.sh",
            "#!/bin/sh\necho Outputs:\necho url https://db.nowhere\necho '= empty-name'\necho 'port = '\necho 'host = db.local'\n",
        );
    let out =
        crate::common::hub_isolated(&test, &["deploy", "hub.yaml", "-s", "hub.yaml.state"], &[]);
    out.failure();
    for line in [
        "warning: component `db` printed `url https://db.nowhere` in an `Outputs:` block: it has no `=`; \
         expected `name = value`",
        "warning: component `db` printed `= empty-name` in an `Outputs:` block: it has no name before `=`; \
         expected `name = value`",
        "warning: component `db` printed `port =` in an `Outputs:` block: it has no value after `=`; \
         expected `name = value`",
        "error: component `db` failed: output `url`: raw output `url` is empty because the line \
         `url https://db.nowhere` of the `Outputs:` block gave no value (it has no `=`); print it as \
         `url = value`",
    ] {
        assert!(
            out.stderr.lines().any(|l| l == line),
            "missing line {line:?} in:\n{}",
            out.stderr
        );
    }
}
