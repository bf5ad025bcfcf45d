//! Plans that show the change (issue 39, items 5 and 6): a text or
//! markdown plan shows each component's action and only the parameters
//! that differ from the state, one line for a component that does not
//! change, everything with `--verbose`; `rerun` (deployed again) and
//! `replace` (undeployed, then deployed) are two actions. On a real stack
//! of five components: `net` and `dns` first, `db` and `cache` after
//! `net`, `app` after both.

use crate::common::{hub_isolated, Output, Test};
use std::path::Path;

const STACK: &str = "
version: 1
kind: stack
meta: {name: five}
components:
  - {name: net, source: {dir: components/net}}
  - {name: db, source: {dir: components/db}, depends: [net]}
  - {name: cache, source: {dir: components/cache}, depends: [net]}
  - {name: app, source: {dir: components/app}, depends: [db, cache]}
  - {name: dns, source: {dir: components/dns}}
";

/// The parameters each component reads, with the variable it gets.
const READS: [(&str, &[(&str, &str)]); 5] = [
    ("net", &[("net.cidr", "CIDR")]),
    ("db", &[("db.size", "SIZE"), ("db.password", "PASSWORD")]),
    ("cache", &[("cache.flavor", "FLAVOR")]),
    ("app", &[("app.replicas", "REPLICAS"), ("app.tier", "TIER")]),
    ("dns", &[("dns.zone", "ZONE")]),
];

const VALUES: [(&str, &str); 7] = [
    ("net.cidr", "10.0.0.0/16"),
    ("db.size", "small"),
    ("db.password", "hunter2-secret"),
    ("cache.flavor", "redis"),
    ("app.replicas", "3"),
    ("app.tier", "web"),
    ("dns.zone", "example.org"),
];

/// The stack with `lifecycle` appended; each component records its run in
/// `runs.log` and fails when a file `fail-NAME` is there.
fn stack(lifecycle: &str) -> Test {
    let mut test = Test::new().file("hub.yaml", &format!("{STACK}{lifecycle}"));
    for (name, reads) in READS {
        let params: String = reads
            .iter()
            .map(|(p, env)| format!("  - {{name: {p}, env: {env}}}\n"))
            .collect();
        let manifest =
            format!("version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n{params}");
        let deploy = format!(
            "#!/bin/sh\necho {name} >> ../../runs.log\nif [ -f ../../fail-{name} ]; then exit 3; fi\n"
        );
        test = test
            .file(&format!("components/{name}/hub-component.yaml"), &manifest)
            .script(&format!("components/{name}/deploy.sh"), &deploy)
            .script(
                &format!("components/{name}/undeploy.sh"),
                &format!("#!/bin/sh\necho undeploy {name} >> ../../runs.log\n"),
            );
    }
    params(test.root(), &[]);
    test
}

/// Writes `params.yaml`: [`VALUES`] with `changed` in place of theirs.
fn params(root: &Path, changed: &[(&str, &str)]) {
    let mut text = String::from("parameters:\n");
    for (name, value) in VALUES {
        let value = changed
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(value, |(_, v)| v);
        text.push_str(&format!("  - {{name: {name}, value: \"{value}\"}}\n"));
    }
    std::fs::write(root.join("params.yaml"), text).expect("write params");
}

fn hub(test: &Test, verb: &str, extra: &[&str]) -> Output {
    let mut args = vec![verb, "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    args.extend_from_slice(extra);
    hub_isolated(test, &args, &[("HUB_NOW", "2026-01-01T00:00:00Z")])
}

/// The stack, deployed once.
fn deployed(lifecycle: &str) -> Test {
    let test = stack(lifecycle);
    hub(&test, "deploy", &[]).success();
    let _ = std::fs::remove_file(test.root().join("runs.log"));
    test
}

/// A plan's text with the state's serial, which depends on how many
/// writes a deploy made, as `N`.
fn plan_text(test: &Test, extra: &[&str]) -> String {
    let out = hub(test, "plan", extra);
    out.success();
    let mut text = out.stdout.clone();
    if let Some(start) = text.find("(serial ") {
        let digits = text[start + "(serial ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        let end = start + "(serial ".len() + digits;
        text.replace_range(start..end, "(serial N");
    }
    text
}

#[test]
fn a_no_op_changed_plan_is_one_line_per_component() {
    let test = deployed("");
    let text = plan_text(&test, &["--changed"]);
    insta::assert_snapshot!(text, @r"
    plan: deploy stack `five`
    state: hub.yaml.state (serial N)
    jobs: 1

    net: no-op
    db: no-op
    cache: no-op
    app: no-op
    dns: no-op

    Plan: 0 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 5 unchanged, 0 skipped, 0 would fail
    ");
    assert!(text.lines().count() <= 12, "{text}");
}

#[test]
fn a_one_parameter_change_shows_that_parameter_alone() {
    let test = deployed("");
    params(test.root(), &[("app.replicas", "5")]);
    insta::assert_snapshot!(plan_text(&test, &["--changed"]), @r"
    plan: deploy stack `five`
    state: hub.yaml.state (serial N)
    jobs: 1
    waves:
      1. net, dns
      2. db, cache
      3. app

    net: no-op
    db: no-op
    cache: no-op

    app: update (parameters changed: app.replicas)
      runs: deploy.sh
      waits for: db (`depends`); cache (`depends`)
      parameters:
        ~ app.replicas = 3 → 5
        (3 unchanged; --verbose shows every parameter)

    dns: no-op

    Plan: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 4 unchanged, 0 skipped, 0 would fail
    ");
}

#[test]
fn after_a_full_deploy_a_plan_without_changed_says_what_runs_again_in_one_line_each() {
    let test = deployed("");
    insta::assert_snapshot!(plan_text(&test, &[]), @r"
    plan: deploy stack `five`
    state: hub.yaml.state (serial N)
    jobs: 1
    waves:
      1. net, dns
      2. db, cache
      3. app

    net: update (runs again: no --changed)
    db: update (runs again: no --changed)
    cache: update (runs again: no --changed)
    app: update (runs again: no --changed)
    dns: update (runs again: no --changed)

    Plan: 0 to create, 5 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail
    ");
}

#[test]
fn the_markdown_plan_details_only_the_components_that_change() {
    let test = deployed("");
    params(test.root(), &[("app.replicas", "5")]);
    insta::assert_snapshot!(plan_text(&test, &["--changed", "--format", "markdown"]), @r"
    ### Plan: deploy stack `five`

    **0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 4 unchanged, 0 skipped, 0 would fail**

    State: `hub.yaml.state` (serial N) · jobs: 1

    | Component | Action | Why |
    |---|---|---|
    | `net` | no-op |  |
    | `db` | no-op |  |
    | `cache` | no-op |  |
    | `app` | **update** | parameters changed: app.replicas |
    | `dns` | no-op |  |

    <details><summary><code>app</code>: update</summary>

    Runs: deploy.sh

    Waits for: db (`depends`); cache (`depends`)

    ```diff
    ~ app.replicas = 3 → 5
    ```

    (3 unchanged; --verbose shows every parameter)

    </details>
    ");
}

#[test]
fn verbose_shows_every_parameter_and_a_changed_secret_stays_masked() {
    let test = deployed("");
    params(
        test.root(),
        &[("app.replicas", "5"), ("db.password", "hunter3-secret")],
    );
    let text = plan_text(&test, &["--changed"]);
    assert!(
        text.contains("\n    ~ db.password = (masked) → (masked)\n"),
        "{text}"
    );
    assert!(!text.contains("db.size"), "unchanged, not shown: {text}");
    assert!(!text.contains("hunter"), "{text}");
    for format in ["text", "markdown"] {
        let verbose = plan_text(&test, &["--changed", "--verbose", "--format", format]);
        for line in [
            "  db.size = small",
            "~ db.password = (masked) → (masked)",
            "  app.tier = web",
            "~ app.replicas = 3 → 5",
            "  dns.zone = example.org",
            "  net.cidr = 10.0.0.0/16",
        ] {
            assert!(verbose.contains(line), "{format}: {line:?} in {verbose}");
        }
        assert!(!verbose.contains("hunter"), "{verbose}");
        assert!(!verbose.contains("--verbose shows"), "{verbose}");
    }
    // JSON keeps every parameter, with or without `--verbose`.
    let json: serde_json::Value =
        serde_json::from_str(&plan_text(&test, &["--changed", "--format", "json"])).expect("JSON");
    let dns = &json["components"][4];
    assert_eq!(dns["name"], "dns");
    assert!(dns["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .any(|p| p["name"] == "dns.zone" && p["change"] == "unchanged"));
}

#[test]
fn a_failed_component_is_rerun_and_a_replacement_undeploys_first() {
    let test = deployed("lifecycle:\n  replaceTriggeredBy: {cache: [cache.flavor]}\n");
    std::fs::write(test.root().join("fail-dns"), "").expect("write");
    hub(&test, "deploy", &["-c", "dns"]).failure();
    std::fs::remove_file(test.root().join("fail-dns")).expect("remove");
    params(test.root(), &[("cache.flavor", "valkey")]);
    let _ = std::fs::remove_file(test.root().join("runs.log"));
    let text = plan_text(&test, &["--changed"]);
    for line in [
        "dns: rerun (its last run failed (`error`))",
        "cache: replace (undeploy, then deploy: parameter `cache.flavor` changed (`lifecycle.replaceTriggeredBy`))",
        "Plan: 0 to create, 0 to update, 1 to replace, 1 to rerun, 0 to delete, 3 unchanged, 0 skipped, 0 would fail",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&plan_text(&test, &["--changed", "--format", "json"])).expect("JSON");
    assert_eq!(json["counts"]["rerun"], 1, "{json}");
    assert_eq!(json["counts"]["replace"], 1, "{json}");
    // What each word does: `rerun` deploys, `replace` undeploys first.
    hub(&test, "deploy", &["--changed"]).success();
    let log = std::fs::read_to_string(test.root().join("runs.log")).expect("runs.log");
    let mut ran: Vec<&str> = log.lines().collect();
    ran.sort_unstable();
    assert_eq!(ran, ["cache", "dns", "undeploy cache"], "{log}");
    // `--replace` is a `rerun` too: nothing is undeployed.
    let replaced = plan_text(&test, &["--changed", "--replace", "net"]);
    assert!(
        replaced.contains("\nnet: rerun (`--replace`: runs even if unchanged)\n"),
        "{replaced}"
    );
}

/// A plan saved by a hub before `rerun` (format version 2) is applied when
/// none of its components is `replace`, which meant a rerun too; one with
/// a `replace` is refused, saying why.
#[test]
fn a_version_2_saved_plan_is_applied_unless_it_says_replace() {
    let test = deployed("");
    params(test.root(), &[("app.replicas", "5")]);
    hub(&test, "plan", &["--changed", "--out", "plan.json"]).success();
    let path = test.root().join("plan.json");
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("plan")).expect("JSON");
    assert_eq!(plan["version"], 3);
    plan["version"] = serde_json::json!(2);
    let mut ambiguous = plan.clone();
    ambiguous["components"][3]["action"] = serde_json::json!("replace");
    std::fs::write(test.root().join("old.json"), ambiguous.to_string()).expect("write");
    let deploy = |file: &str| {
        hub_isolated(
            &test,
            &["deploy", "--plan", file],
            &[("HUB_NOW", "2026-01-01T00:00:00Z")],
        )
    };
    deploy("old.json").failure().stderr_has(
        "the plan `old.json` has format version 2, in which `replace` (here for `app`) meant either a rerun or an undeploy then a deploy",
    );
    assert!(!test.root().join("runs.log").exists(), "nothing ran");
    std::fs::write(&path, plan.to_string()).expect("write");
    let out = deploy("plan.json");
    out.success();
    let log = std::fs::read_to_string(test.root().join("runs.log")).expect("runs.log");
    assert_eq!(log, "app\n", "{}", out.stderr);
}

/// The text of the changes shows a component that does not change as one
/// line, but a rule still reads every parameter of it: the plan it is
/// given is whole.
#[test]
fn a_rule_reads_the_parameters_of_a_component_the_text_shows_as_one_line() {
    let test = deployed("");
    std::fs::write(
        test.root().join("rules.yaml"),
        "- name: old-network\n  \
         deny: >-\n    \
         plan.components.exists(c, c.name == 'net' &&\n    \
         c.parameters.exists(p, p.name == 'net.cidr' && p.value == '10.0.0.0/16'))\n  \
         message: the old network is still planned\n",
    )
    .expect("write rules");
    let out = hub(&test, "plan", &["--changed", "--policy", "rules.yaml"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(out.stdout.contains("\nnet: no-op\n"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("denied by policy `old-network`: the old network is still planned"),
        "{}",
        out.stderr
    );
    // Without the rule the same plan passes, its text unchanged.
    let text = plan_text(&test, &["--changed"]);
    assert!(text.contains("\nnet: no-op\n"), "{text}");
}
