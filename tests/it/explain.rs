//! `hub explain`: every output format on a deployed demo, secrets, the
//! state locations a deploy accepts, and shell output that survives `eval`.

use crate::common::{demo_copy, Output, Test};
use std::path::Path;

fn hub(dir: &Path, args: &[&str]) -> Output {
    crate::common::hub_pinned(dir, args)
}

/// The demo deployed once into `demo.state`, and the deployment id a new
/// state gets at random (to be replaced in snapshots).
pub(crate) fn deployed_demo() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let (tmp, dir) = demo_copy();
    hub(
        &dir,
        &["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
    )
    .success();
    let state = crate::common::read_documents(&dir.join("demo.state")).remove(0);
    let id = state["stackParameters"]
        .as_sequence()
        .expect("stack parameters")
        .iter()
        .find(|p| p["name"] == "hub.deploymentId")
        .and_then(|p| p["value"].as_str())
        .expect("a deployment id")
        .to_string();
    (tmp, dir, id)
}

const REFERENCE_TOP_KEYS: [&str; 8] = [
    "meta",
    "timestamp",
    "status",
    "message",
    "stackParameters",
    "stackOutputs",
    "provides",
    "components",
];
const REFERENCE_COMPONENT_KEYS: [&str; 7] = [
    "timestamp",
    "timestamps",
    "status",
    "message",
    "parameters",
    "outputs",
    "rawOutputs",
];

#[test]
fn json_of_the_deployed_demo_has_the_reference_keys_and_masks_secrets() {
    let (_tmp, dir, id) = deployed_demo();
    let out = hub(&dir, &["explain", "demo.state", "--json", "-r"]);
    out.success();
    insta::assert_snapshot!(
        "explain_demo_json",
        out.stdout
            .replace(&id, "00000000-0000-0000-0000-000000000000")
    );
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let top = document.as_object().expect("an object");
    for key in top.keys() {
        assert!(
            REFERENCE_TOP_KEYS.contains(&key.as_str()),
            "unknown key {key}"
        );
    }
    for (name, component) in top["components"].as_object().expect("components") {
        for key in component.as_object().expect("a component").keys() {
            assert!(
                REFERENCE_COMPONENT_KEYS.contains(&key.as_str()),
                "unknown key {key} of {name}"
            );
        }
    }
    assert_eq!(
        document["stackOutputs"]["database:component.database.password"],
        "(masked)"
    );
    assert!(!out.stdout.contains("pw-demo"), "{}", out.stdout);
}

#[test]
fn reveal_shows_secrets_in_every_format() {
    let (_tmp, dir, _) = deployed_demo();
    for format in [&["--json"][..], &["--yaml"], &["--kv"], &["--sh"], &[]] {
        let args =
            |extra: &[&'static str]| [&["explain", "demo.state", "-r"][..], format, extra].concat();
        let out = hub(&dir, &args(&["--reveal"]));
        out.success();
        assert!(
            out.stdout.contains("pw-demo-small-"),
            "{format:?}:\n{}",
            out.stdout
        );
        let out = hub(&dir, &args(&[]));
        out.success();
        assert!(
            !out.stdout.contains("pw-demo"),
            "{format:?}:\n{}",
            out.stdout
        );
        assert!(
            out.stdout.contains("(masked)"),
            "{format:?}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn yaml_is_the_json_document() {
    let (_tmp, dir, _) = deployed_demo();
    let json = hub(&dir, &["explain", "demo.state", "--json"]);
    let yaml = hub(&dir, &["explain", "demo.state", "--yaml"]);
    let from_json: serde_json::Value = serde_json::from_str(&json.success().stdout).expect("json");
    let from_yaml: serde_json::Value = yaml_serde::from_str(&yaml.success().stdout).expect("yaml");
    assert_eq!(from_json, from_yaml);
}

#[test]
fn text_view_is_a_table_without_colour_off_a_terminal() {
    let (_tmp, dir, id) = deployed_demo();
    let out = hub(&dir, &["explain", "hub.yaml.elaborate", "demo.state"]);
    // No elaborated file was written: reading it fails, naming it.
    out.failure().stderr_has("hub.yaml.elaborate");
    hub(&dir, &["elaborate", "hub.yaml", "params.yaml"]).success();
    let out = hub(
        &dir,
        &[
            "explain",
            "hub.yaml.elaborate",
            "demo.state",
            "-c",
            "app",
            "-g",
        ],
    );
    out.success();
    assert!(!out.stdout.contains('\x1b'), "{}", out.stdout);
    insta::assert_snapshot!(
        "explain_demo_text_app",
        out.stdout
            .replace(&id, "00000000-0000-0000-0000-000000000000")
    );
}

#[test]
fn global_and_component_select_parts() {
    let (_tmp, dir, _) = deployed_demo();
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["explain", "demo.state", "--json"];
        all.extend(args);
        serde_json::from_str(&hub(&dir, &all).success().stdout).expect("json")
    };
    let global = json(&["-g"]);
    assert!(global.get("components").is_none());
    assert!(global.get("stackOutputs").is_some());
    let one = json(&["-c", "database"]);
    assert!(one.get("stackParameters").is_none());
    let names: Vec<&String> = one["components"]
        .as_object()
        .expect("components")
        .keys()
        .collect();
    assert_eq!(names, ["database"]);
    assert_eq!(
        one["components"]["database"]["outputs"]["component.database.host"],
        "db.10.0.0.0"
    );
    // The outputs of a component are its own, not those of the components before it.
    assert!(one["components"]["database"]["outputs"]
        .get("component.network.subnet")
        .is_none());
    let both = json(&["-c", "database", "-g"]);
    assert!(both.get("stackParameters").is_some() && both.get("components").is_some());
}

#[test]
fn an_unknown_component_is_an_error_with_a_suggestion() {
    let (_tmp, dir, _) = deployed_demo();
    hub(&dir, &["explain", "demo.state", "-c", "databse"])
        .failure()
        .stderr_has("component `databse` is not in the stack")
        .stderr_has("did you mean `database`?");
}

#[test]
fn op_log_is_text_only() {
    let (_tmp, dir, _) = deployed_demo();
    let out = hub(&dir, &["explain", "demo.state", "-l"]);
    out.success();
    assert!(
        out.stdout
            .starts_with("operations\n  deploy op-1: success, at 2026-01-01T00:00:00Z by tester\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("    database: success\n"),
        "{}",
        out.stdout
    );
    let out = hub(&dir, &["explain", "demo.state", "-l", "--json"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
}

#[test]
fn a_missing_state_is_an_error() {
    let test = Test::new().args(&["explain", "nowhere.state"]);
    test.run()
        .failure()
        .stderr_has("no state file at `nowhere.state`");
    let remote = Test::new().args(&["explain", "here.state,s3://bucket/hub.yaml.state"]);
    remote
        .run()
        .failure()
        .stderr_has("s3://bucket/hub.yaml.state");
}

/// A state written by hand: values no shell may expand.
const TRICKY_STATE: &str = r#"
version: 1
kind: state
timestamp: 2026-01-01T00:00:00Z
status: deployed
meta:
  kind: stack
  name: tricky
stackOutputs:
- name: spaces
  value: "a  b   c"
- name: quotes
  value: "it's \"quoted\""
- name: dollar
  value: "$HOME $(touch pwned) `touch pwned2` ${USER}"
- name: lines
  value: "first\nsecond\n"
- name: back.slash
  value: 'C:\dir\n'
"#;

#[test]
fn sh_output_evals_to_the_exact_values() {
    let test = Test::new().file("tricky.state", TRICKY_STATE);
    let out = hub(test.root(), &["explain", "tricky.state", "-g", "--sh"]);
    out.success();
    let script = format!(
        "{}\nprintf '%s|' \"$stackOutputs_spaces\" \"$stackOutputs_quotes\" \"$stackOutputs_dollar\" \"$stackOutputs_lines\" \"$stackOutputs_back_slash\"",
        out.stdout
    );
    let shell = std::process::Command::new("bash")
        .current_dir(test.root())
        .args([
            "-c",
            &format!("eval \"$(cat <<'HUB_EOF'\n{script}\nHUB_EOF\n)\""),
        ])
        .output()
        .expect("bash");
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&shell.stdout),
        "a  b   c|it's \"quoted\"|$HOME $(touch pwned) `touch pwned2` ${USER}|first\nsecond\n|C:\\dir\\n|"
    );
    assert!(!test.root().join("pwned").exists() && !test.root().join("pwned2").exists());
}

#[test]
fn kv_keeps_each_value_on_its_line() {
    let test = Test::new().file("tricky.state", TRICKY_STATE);
    let out = hub(test.root(), &["explain", "tricky.state", "-g", "--kv"]);
    out.success();
    assert!(
        out.stdout
            .contains("stackOutputs.lines=first\\nsecond\\n\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("stackOutputs.back.slash=C:\\\\dir\\\\n\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn reads_the_newest_of_several_locations_and_gzip() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(TRICKY_STATE.replace("tricky", "zipped").as_bytes())
        .expect("gzip");
    let test = Test::new()
        .file("old.state", &TRICKY_STATE.replace("tricky", "old"))
        .bytes("new.state", &gz.finish().expect("gzip"));
    crate::common::age_by_an_hour(&test.root().join("old.state"));
    let out = hub(
        test.root(),
        &[
            "explain",
            "old.state,new.state,absent.state",
            "--json",
            "-g",
        ],
    );
    out.success();
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(document["meta"]["name"], "zipped");
}
