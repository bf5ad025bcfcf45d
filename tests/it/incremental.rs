//! `hub deploy --changed` (skip what did not change since its last deploy),
//! `--why`, and the `--report` of a run, on a real stack:
//! `net` → `db` → `app`, and `dns` on its own.

use crate::common::{hub_isolated, Output, Test};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const STACK: &str = "
version: 1
kind: stack
meta: {name: inc}
components:
  - {name: net, source: {dir: components/net}}
  - {name: db, source: {dir: components/db}, depends: [net]}
  - {name: app, source: {dir: components/app}, depends: [db]}
  - {name: dns, source: {dir: components/dns}}
parameters:
  - {name: net.cidr, value: 10.0.0.0/16}
  - {name: db.size, value: small}
  - {name: dns.zone, value: example.org}
";

/// A component that records each run in `../runs.log` and prints
/// `key = value` outputs taken from its environment.
fn component(name: &str, params: &[(&str, &str)], output: Option<(&str, &str)>) -> String {
    let params: String = params
        .iter()
        .map(|(p, env)| format!("  - {{name: {p}, env: {env}}}\n"))
        .collect();
    let outputs = match output {
        Some((o, _)) => format!("outputs:\n  - {{name: {o}, fromTfVar: value}}\n"),
        None => String::new(),
    };
    format!("version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n{params}{outputs}")
}

fn script(name: &str, output: Option<(&str, &str)>) -> String {
    let outputs = match output {
        Some((_, value)) => format!("echo; echo Outputs:; echo \"value = {value}\"; echo\n"),
        None => String::new(),
    };
    format!("#!/bin/sh\necho {name} >> ../../runs.log\n{outputs}")
}

fn stack(params: &str) -> Test {
    let parts = [
        (
            "net",
            component("net", &[("net.cidr", "CIDR")], Some(("net.subnet", ""))),
            script("net", Some(("", "${CIDR%/16}/24"))),
        ),
        (
            "db",
            component(
                "db",
                &[("db.size", "SIZE"), ("net.subnet", "SUBNET")],
                Some(("db.host", "")),
            ),
            script("db", Some(("", "db-$SIZE.$SUBNET"))),
        ),
        (
            "app",
            component("app", &[("db.host", "DB")], None),
            script("app", None),
        ),
        (
            "dns",
            component("dns", &[("dns.zone", "ZONE")], None),
            script("dns", None),
        ),
    ];
    let mut test = Test::new()
        .file("hub.yaml", STACK)
        .file("params.yaml", params);
    for (name, manifest, deploy) in parts {
        test = test
            .file(&format!("components/{name}/hub-component.yaml"), &manifest)
            .file(&format!("components/{name}/deploy.sh"), &deploy)
            .file(&format!("components/{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    for name in ["net", "db", "app", "dns"] {
        for verb in ["deploy", "undeploy"] {
            let path = test.root().join(format!("components/{name}/{verb}.sh"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    test
}

fn deploy(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec!["deploy", "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    args.extend_from_slice(extra);
    hub_isolated(test, &args, &[("HUB_NOW", "2026-01-01T00:00:00Z")])
}

/// The components that ran since the last call, and forgets them.
fn runs(test: &Test) -> Vec<String> {
    let path = test.root().join("runs.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let mut names: Vec<String> = text.lines().map(String::from).collect();
    names.sort();
    names
}

fn summary_line<'a>(output: &'a Output, component: &str) -> &'a str {
    output
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{component} ")))
        .unwrap_or_else(|| panic!("no summary line for {component}:\n{}", output.stderr))
}

fn write(root: &Path, path: &str, text: &str) {
    std::fs::write(root.join(path), text).expect("write");
}

#[test]
fn nothing_runs_again_when_nothing_changed() {
    let t = stack("parameters: []\n");
    deploy(&t, &[]).success();
    assert_eq!(runs(&t), ["app", "db", "dns", "net"]);
    let out = deploy(&t, &["--changed"]);
    out.success();
    assert!(runs(&t).is_empty(), "{}", out.stderr);
    for name in ["net", "db", "app", "dns"] {
        assert!(
            summary_line(&out, name).contains("unchanged"),
            "{}",
            out.stderr
        );
    }
    assert!(out.stderr.contains("stack: deployed"), "{}", out.stderr);
    // Downstream parameters still got the outputs recorded last time.
    let state = &out.documents("hub.yaml.state")[0];
    let outputs = format!("{:?}", state["capturedOutputs"]);
    assert!(outputs.contains("db-small.10.0.0.0/24"), "{outputs}");
}

/// The state file's inode, modification time and bytes.
fn file_as_is(path: &Path) -> (u64, std::time::SystemTime, Vec<u8>) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).expect("state file");
    let modified = meta.modified().expect("mtime");
    (meta.ino(), modified, std::fs::read(path).expect("read"))
}

#[test]
fn a_changed_run_that_changes_nothing_leaves_the_state_file_as_it_is() {
    let t = stack("parameters: []\n");
    deploy(&t, &[]).success();
    runs(&t);
    let path = t.root().join("hub.yaml.state");
    let backup = t.root().join("hub.yaml.state.backup");
    let (state, kept) = (file_as_is(&path), file_as_is(&backup));
    let out = deploy(&t, &["--changed", "-j", "2"]);
    out.success();
    assert!(runs(&t).is_empty(), "{}", out.stderr);
    assert!(out.stderr.contains("stack: deployed"), "{}", out.stderr);
    assert!(
        file_as_is(&path) == state,
        "the state file was written again: {}",
        out.stderr
    );
    assert!(file_as_is(&backup) == kept, "the backup was written again");
    assert!(!t.root().join("hub.yaml.state.journal").exists());
    // A run that changes something writes as before: the new value, and
    // the two runs that did something (the quiet one is not recorded).
    write(
        t.root(),
        "params.yaml",
        "parameters:\n  - {name: db.size, value: large}\n",
    );
    let out = deploy(&t, &["--changed"]);
    out.success();
    assert_eq!(runs(&t), ["app", "db"], "{}", out.stderr);
    let written = &out.documents("hub.yaml.state")[0];
    let text = format!("{written:?}");
    assert!(text.contains("db-large.10.0.0.0/24"), "{text}");
    let serial = |doc: &yaml_serde::Value| doc["serial"].as_u64().expect("serial");
    let before = &crate::common::parse_documents(&String::from_utf8_lossy(&state.2))[0];
    assert!(serial(written) > serial(before), "{text}");
    let operations = written["operations"].as_sequence().expect("operations");
    assert_eq!(operations.len(), 2, "{text}");
    assert_eq!(written["status"].as_str(), Some("deployed"), "{text}");
    // A stack parameter no component reads changes the state's record of
    // them: written, though no component runs.
    let note = format!("{STACK}  - {{name: note, value: hi}}\n");
    write(t.root(), "hub.yaml", &note);
    let state = file_as_is(&path);
    let out = deploy(&t, &["--changed"]);
    out.success();
    assert!(runs(&t).is_empty(), "{}", out.stderr);
    assert!(
        file_as_is(&path).2 != state.2,
        "the new parameter was not recorded"
    );
    let written = format!(
        "{:?}",
        out.documents("hub.yaml.state")[0]["stackParameters"]
    );
    assert!(written.contains("note"), "{written}");
}

#[test]
fn a_changed_parameter_runs_its_component_and_what_reads_its_outputs() {
    let t = stack("parameters: []\n");
    deploy(&t, &[]).success();
    runs(&t);
    write(
        t.root(),
        "params.yaml",
        "parameters:\n  - {name: db.size, value: large}\n",
    );
    let out = deploy(&t, &["--changed", "--why"]);
    out.success();
    // db's output changed, so app (which reads it) runs; net and dns do not.
    assert_eq!(runs(&t), ["app", "db"], "{}", out.stderr);
    out.stderr_has("hub: db runs: parameters changed: db.size")
        .stderr_has("hub: app runs: parameters changed: db.host; outputs of `db` changed")
        .stderr_has("hub: net unchanged");
}

#[test]
fn a_component_whose_upstream_outputs_did_not_change_is_skipped() {
    let t = stack("parameters: []\n");
    deploy(&t, &[]).success();
    runs(&t);
    // A new file in net's folder: net runs again, but prints the same
    // subnet, so db and app are left alone.
    write(t.root(), "components/net/README", "notes\n");
    let out = deploy(&t, &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["net"], "{}", out.stderr);
    out.stderr_has("hub: net runs: folder content changed");
}

#[test]
fn files_listed_in_hubignore_do_not_count() {
    let t = stack("parameters: []\n");
    write(t.root(), "components/dns/.hubignore", "*.tmp\n");
    deploy(&t, &[]).success();
    runs(&t);
    write(t.root(), "components/dns/scratch.tmp", "x\n");
    deploy(&t, &["--changed"]).success();
    assert!(runs(&t).is_empty());
}

#[test]
fn a_component_that_failed_last_time_runs_again() {
    let t = stack("parameters: []\n");
    write(
        t.root(),
        "components/dns/deploy.sh",
        "#!/bin/sh\necho dns >> ../../runs.log\nexit 3\n",
    );
    deploy(&t, &["-j", "2"]).failure();
    assert_eq!(runs(&t), ["app", "db", "dns", "net"]);
    write(
        t.root(),
        "components/dns/deploy.sh",
        "#!/bin/sh\necho dns >> ../../runs.log\n",
    );
    let out = deploy(&t, &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["dns"], "{}", out.stderr);
    out.stderr_has("hub: dns runs: its last run failed (`error`)");
}

#[test]
fn without_changed_why_says_everything_runs() {
    let t = stack("parameters: []\n");
    deploy(&t, &["--why"])
        .success()
        .stderr_has("hub: net runs: never deployed");
    deploy(&t, &["--why"])
        .success()
        .stderr_has("hub: net runs: runs again: no --changed");
}

#[test]
fn changed_is_refused_for_undeploy() {
    let t = stack("parameters: []\n");
    deploy(&t, &[]).success();
    let out = hub_isolated(
        &t,
        &[
            "undeploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "hub.yaml.state",
            "--changed",
        ],
        &[],
    );
    out.failure().stderr_has("--changed");
    assert_eq!(out.status, 2);
}

#[test]
fn the_report_says_what_happened_to_each_component() {
    let t = stack("parameters: []\n");
    write(
        t.root(),
        "components/db/deploy.sh",
        "#!/bin/sh\necho boom\nexit 4\n",
    );
    let out = deploy(&t, &["-j", "3", "--report", "report.json"]);
    out.failure();
    let text = std::fs::read_to_string(t.root().join("report.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&text).expect("json");
    let schema: serde_json::Value =
        serde_json::from_str(&hub_view::report::schema_text()).expect("schema");
    assert!(jsonschema::is_valid(&schema, &report), "{text}");
    assert_eq!(report["kind"], "deploy");
    assert_eq!(report["jobs"], 3);
    assert_eq!(report["result"], "failure");
    assert_eq!(report["status"], "incomplete");
    assert_eq!(report["started"], "2026-01-01T00:00:00Z");
    let status = |name: &str| {
        let entry = report["components"]
            .as_array()
            .expect("components")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        (entry["status"].clone(), entry["reason"].clone())
    };
    assert_eq!(status("net").0, "deployed");
    assert_eq!(status("dns").0, "deployed");
    assert_eq!(status("db").0, "error");
    assert_eq!(
        status("app"),
        ("cancelled".into(), "upstream `db` failed".into())
    );
    let names: Vec<&str> = report["components"]
        .as_array()
        .expect("components")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["net", "db", "app", "dns"], "in the stack's order");
    assert_eq!(
        report["components"][0]["outputs"],
        serde_json::json!(["net.subnet"])
    );
    // The failed component's output is repeated before the summary.
    out.stderr_has("--- output of failed component `db`:\ndb | boom\n");
}

#[test]
fn a_report_that_cannot_be_written_fails_the_run_without_losing_the_state() {
    let t = stack("parameters: []\n");
    let out = deploy(&t, &["--report", "missing/report.json"]);
    out.failure().stderr_has("missing/report.json");
    let state = &out.documents("hub.yaml.state")[0];
    assert_eq!(state["status"].as_str(), Some("deployed"));
}

/// `hub deploy` of a demo copy, as user `demo`.
fn deploy_demo(demo: &Path, extra: &[&str]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub");
    command
        .current_dir(demo)
        .args(["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"])
        .args(extra)
        .env("USER", "demo")
        .write_stdin(Vec::new());
    Output::of(command.output().expect("run hub"), demo)
}

#[test]
fn the_demo_deploys_in_parallel_and_then_has_nothing_to_do() {
    let (_dir, demo) = crate::common::demo_copy();
    let run = |extra: &[&str]| deploy_demo(&demo, &[&["-j", "0"], extra].concat());
    run(&[]).success().stderr_has("stack: deployed");
    let out = run(&["--changed"]);
    out.success();
    for name in ["network", "database", "app"] {
        assert!(
            summary_line(&out, name).contains("unchanged"),
            "{}",
            out.stderr
        );
    }
    assert!(summary_line(&out, "monitoring").contains("skipped"));
    assert!(!out.stdout.contains("creating network"), "{}", out.stdout);
}

#[test]
fn changed_needs_a_state() {
    let t = stack("parameters: []\n");
    let out = hub_isolated(
        &t,
        &["deploy", "hub.yaml", "params.yaml", "-n", "--changed"],
        &[],
    );
    out.failure().stderr_has("-s STATE");
    assert_eq!(out.status, 2);
    assert!(runs(&t).is_empty());
}

/// Runs `hub deploy -j 3` of the demo on a pseudo-terminal (`script`, from
/// util-linux) and returns what the terminal showed.
fn deploy_on_a_terminal(demo: &Path) -> String {
    let hub = assert_cmd::cargo::cargo_bin("hub");
    let command = format!(
        "{} deploy hub.yaml params.yaml -s demo.state -j 3 < /dev/null",
        hub.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(demo)
        .env("USER", "demo")
        .output()
        .expect("util-linux `script` runs hub on a pseudo-terminal");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_parallel_run_on_a_terminal_shows_live_status_lines() {
    let (_dir, demo) = crate::common::demo_copy();
    let screen = deploy_on_a_terminal(&demo);
    // Status lines are redrawn in place (erase-line sequences) and show the
    // component's name in bold; output lines and the summary stay whole.
    assert!(screen.contains("\u{1b}[2K"), "{screen:?}");
    assert!(screen.contains("\u{1b}[1mnetwork\u{1b}[0m"), "{screen:?}");
    assert!(
        screen.contains("network | creating network 10.0.0.0/16"),
        "{screen:?}"
    );
    assert!(screen.contains("hub: app deployed ("), "{screen:?}");
    assert!(
        screen.contains("stack: deployed (4 components"),
        "{screen:?}"
    );
}

#[test]
fn without_a_terminal_a_parallel_run_prints_plain_lines() {
    let (_dir, demo) = crate::common::demo_copy();
    let out = deploy_demo(&demo, &["-j", "3"]);
    out.success()
        .stderr_has("hub: deploy network (1/4)\n")
        .stderr_has("hub: network deployed (");
    assert!(!out.stderr.contains('\u{1b}'), "{}", out.stderr);
}
