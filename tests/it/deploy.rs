//! `hub deploy`, `hub undeploy` and `hub invoke` on the fixtures of
//! deploy.md §14 (F0, F1, F2), the demo stack, locking, bad input and
//! interrupts. Cases are named after the numbered cases of §14.

use crate::common::{demo_copy, read_documents, Output, Test};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

// ---------------------------------------------------------------- fixtures

/// Fixture F0: `b` consumes `a`'s output.
#[derive(Default)]
struct F0 {
    stack_params: &'static str,
    stack_extra: &'static str,
    lifecycle_extra: &'static str,
    a_params: &'static str,
    a_outputs: &'static str,
    a_extra: &'static str,
    b_params: &'static str,
    b_outputs: Option<&'static str>,
    b_extra: &'static str,
    b_independent: bool,
    a_deploy: Option<&'static str>,
    b_deploy: Option<&'static str>,
}

const A_DEPLOY: &str = "#!/bin/sh\nenv | sort > env.out; pwd > pwd.out; echo \"$#\" > argc.out; echo a >> ../order.log\necho; echo Outputs:; echo \"host = a.$DOMAIN\"; echo\n";
const B_DEPLOY: &str = "#!/bin/sh\nenv | sort > env.out; echo b >> ../order.log\n";

impl F0 {
    fn text(&self) -> String {
        let depends = if self.b_independent {
            ""
        } else {
            ", depends: [a]"
        };
        format!(
            "version: 1\nkind: stack\nmeta: {{name: demo}}\ncomponents:\n- {{name: a, source: {{dir: a}}}}\n- {{name: b, source: {{dir: b}}{depends}}}\nlifecycle: {{verbs: [deploy, undeploy], order: [a, b]{lifecycle}}}\nparameters:\n- {{name: dns.domain, value: example.com}}\n{params}{stack_extra}---\nversion: 1\nkind: component\nmeta: {{name: a, kind: a, origin: a}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n{a_params}outputs:\n- {{name: host, fromTfVar: host}}\n{a_outputs}{a_extra}---\nversion: 1\nkind: component\nmeta: {{name: b, kind: b, origin: b}}\nparameters:\n- {{name: host, env: HOST}}\n{b_params}outputs:\n{b_outputs}{b_extra}",
            lifecycle = self.lifecycle_extra,
            params = items(self.stack_params),
            stack_extra = block(self.stack_extra),
            a_params = items(self.a_params),
            a_outputs = items(self.a_outputs),
            a_extra = block(self.a_extra),
            b_params = items(self.b_params),
            b_outputs = items(self.b_outputs.unwrap_or("{name: url, value: \"https://${host}\"}")),
            b_extra = block(self.b_extra),
        )
    }

    fn build(&self) -> Test {
        scripts(
            Test::new()
                .file("hub.yaml.elaborate", &self.text())
                .file("a/deploy.sh", self.a_deploy.unwrap_or(A_DEPLOY))
                .file(
                    "a/undeploy.sh",
                    "#!/bin/sh\nenv | sort > env.undeploy.out; echo u:a >> ../order.log\n",
                )
                .file("b/deploy.sh", self.b_deploy.unwrap_or(B_DEPLOY))
                .file(
                    "b/undeploy.sh",
                    "#!/bin/sh\nenv | sort > env.undeploy.out; echo u:b >> ../order.log\n",
                ),
        )
    }
}

/// Fixture F1: one component `c` whose stdout is `c/stdout.txt`.
#[derive(Default)]
struct F1 {
    stack_params: &'static str,
    stack_extra: &'static str,
    lifecycle_extra: &'static str,
    c_params: &'static str,
    c_outputs: &'static str,
    c_extra: &'static str,
    stdout: Option<&'static str>,
    deploy: Option<&'static str>,
}

impl F1 {
    fn text(&self) -> String {
        format!(
            "version: 1\nkind: stack\nmeta: {{name: one}}\ncomponents: [{{name: c, source: {{dir: c}}}}]\nlifecycle: {{verbs: [deploy, undeploy], order: [c]{lifecycle}}}\nparameters:\n{params}{stack_extra}---\nversion: 1\nkind: component\nmeta: {{name: c, kind: c}}\nparameters:\n{c_params}outputs:\n{c_outputs}{c_extra}",
            lifecycle = self.lifecycle_extra,
            params = list(self.stack_params),
            stack_extra = block(self.stack_extra),
            c_params = list(self.c_params),
            c_outputs = list(self.c_outputs),
            c_extra = block(self.c_extra),
        )
    }

    fn build(&self) -> Test {
        let mut test = Test::new()
            .file("hub.yaml.elaborate", &self.text())
            .file(
                "c/deploy.sh",
                self.deploy.unwrap_or(
                    "#!/bin/sh\nenv | sort > env.out; cat stdout.txt 2>/dev/null; exit 0\n",
                ),
            )
            .file("c/undeploy.sh", "#!/bin/sh\necho u:c >> ../order.log\n");
        if let Some(stdout) = self.stdout {
            test = test.bytes("c/stdout.txt", stdout.as_bytes());
        }
        scripts(test)
    }
}

/// Fixture F2: independent `x`, `y`, `z`; `y` reads `x.o`, `z` reads `y.o`.
fn f2() -> Test {
    let component = |n: &str, param: &str| {
        let params = if param.is_empty() {
            "[]".to_string()
        } else {
            format!(
                "\n- {{name: {param}.o, env: {}O, default: none}}",
                param.to_uppercase()
            )
        };
        format!("version: 1\nkind: component\nmeta: {{name: {n}, kind: {n}}}\nparameters: {params}\noutputs:\n- {{name: {n}.o, fromTfVar: o}}\n")
    };
    let text = format!(
        "version: 1\nkind: stack\nmeta: {{name: three}}\ncomponents:\n- {{name: x, source: {{dir: x}}}}\n- {{name: y, source: {{dir: y}}}}\n- {{name: z, source: {{dir: z}}}}\nlifecycle: {{verbs: [deploy, undeploy], order: [x, y, z]}}\n---\n{}---\n{}---\n{}",
        component("x", ""),
        component("y", "x"),
        component("z", "y")
    );
    let mut test = Test::new().file("hub.yaml.elaborate", &text);
    for n in ["x", "y", "z"] {
        test = test
            .file(
                &format!("{n}/deploy.sh"),
                &format!("#!/bin/sh\nenv | sort > env.out; echo {n} >> ../order.log; echo; echo Outputs:; echo \"o = {n}-value\"; echo\n"),
            )
            .file(&format!("{n}/undeploy.sh"), &format!("#!/bin/sh\necho u:{n} >> ../order.log\n"));
    }
    scripts(test)
}

/// `- item` lines from one item per line.
fn items(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("- {l}\n"))
        .collect()
}

/// Like [`items`], or `  []` when there are none.
fn list(text: &str) -> String {
    match items(text) {
        empty if empty.is_empty() => "  []\n".into(),
        some => some,
    }
}

/// Extra top-level YAML, unindented.
fn block(text: &str) -> String {
    if text.trim().is_empty() {
        return String::new();
    }
    crate::common::unindent(text)
}

/// Makes every script of the fixture executable.
fn scripts(test: Test) -> Test {
    fn walk(dir: &Path) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path);
            } else if path.extension().is_some_and(|e| e == "sh") || path.extension().is_none() {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
    }
    walk(test.root());
    test
}

// ---------------------------------------------------------------- running

const DEPLOY: &[&str] = &["deploy", "hub.yaml.elaborate", "-s", "hub.yaml.state"];
const UNDEPLOY: &[&str] = &["undeploy", "hub.yaml.elaborate", "-s", "hub.yaml.state"];

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_env(test, args, &[])
}

/// Runs hub in the fixture with a reduced environment (§14.1).
fn hub_env(test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
    crate::common::hub_isolated(test, args, env)
}

fn state(test: &Test) -> Value {
    read_documents(&test.root().join("hub.yaml.state")).remove(0)
}

fn get<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(value, |v, key| match key.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[key],
        })
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => yaml_serde::to_string(other)
            .expect("yaml")
            .trim()
            .to_string(),
    }
}

/// `S.out(c:n)` of §14.1, from the top-level or a component's snapshot.
fn out_of(outputs: &Value, qualified: &str) -> Option<Value> {
    let (component, name) = qualified.split_once(':').expect("c:n");
    outputs.as_sequence()?.iter().find_map(|o| {
        (text(&o["component"]) == component && text(&o["name"]) == name).then(|| o["value"].clone())
    })
}

fn param(state: &Value, qualified: &str) -> Option<Value> {
    state["stackParameters"]
        .as_sequence()?
        .iter()
        .find_map(|p| {
            let q = match text(&p["component"]) {
                c if c.is_empty() => text(&p["name"]),
                c => format!("{}|{c}", text(&p["name"])),
            };
            (q == qualified).then(|| p["value"].clone())
        })
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_sequence()
        .map(|s| s.iter().map(|o| text(&o[key])).collect())
        .unwrap_or_default()
}

fn qualified_names(list: &Value) -> Vec<String> {
    list.as_sequence()
        .map(|s| {
            s.iter()
                .map(|o| format!("{}:{}", text(&o["component"]), text(&o["name"])))
                .collect()
        })
        .unwrap_or_default()
}

/// `env(c)`: the variables a component dumped, by name.
fn env_of(test: &Test, file: &str) -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(test.root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn var(test: &Test, file: &str, name: &str) -> Option<String> {
    env_of(test, file)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn read(test: &Test, file: &str) -> String {
    std::fs::read_to_string(test.root().join(file)).unwrap_or_default()
}

fn exists(test: &Test, file: &str) -> bool {
    test.root().join(file).exists()
}

fn order_log(test: &Test) -> Vec<String> {
    read(test, "order.log").lines().map(String::from).collect()
}

fn last_operation(state: &Value) -> &Value {
    let operations = state["operations"].as_sequence().expect("operations");
    operations.last().expect("an operation")
}

fn phases(operation: &Value) -> Vec<String> {
    operation["phases"]
        .as_sequence()
        .map(|s| {
            s.iter()
                .map(|p| format!("{}: {}", text(&p["phase"]), text(&p["status"])))
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------- cases

#[test]
fn deploy_case_01_basic_deploy() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    assert_eq!(order_log(&t), ["a", "b"]);
    let s = state(&t);
    assert_eq!(s["version"], Value::from(1));
    assert_eq!(text(&s["kind"]), "state");
    assert_eq!(text(&s["meta"]["kind"]), "stack");
    assert_eq!(text(&s["meta"]["name"]), "demo");
    assert_eq!(s["lifecycle"]["order"], crate::common::yaml("[a, b]"));
    assert_eq!(text(&s["status"]), "deployed");
    assert_eq!(text(get(&s, "components.a.status")), "deployed");
    assert_eq!(text(get(&s, "components.b.status")), "deployed");
    assert_eq!(
        out_of(&s["capturedOutputs"], "a:host"),
        Some(Value::from("a.example.com"))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "b:url"),
        Some(Value::from("https://a.example.com"))
    );
    assert_eq!(
        var(&t, "a/env.out", "DOMAIN").as_deref(),
        Some("example.com")
    );
    assert_eq!(var(&t, "a/env.out", "COMPONENT_NAME").as_deref(), Some("a"));
    assert_eq!(var(&t, "a/env.out", "HUB_COMPONENT").as_deref(), Some("a"));
    assert_eq!(
        var(&t, "b/env.out", "HOST").as_deref(),
        Some("a.example.com")
    );
    let operations = s["operations"].as_sequence().expect("operations");
    assert_eq!(operations.len(), 1);
    let op = &operations[0];
    assert_eq!(text(&op["operation"]), "deploy");
    assert_eq!(text(&op["status"]), "success");
    assert_eq!(text(&op["initiator"]), "tester");
    assert_eq!(phases(op), ["a: success", "b: success"]);
}

fn deploy_in_the_reference_layout(t: &Test) {
    let mut args = DEPLOY.to_vec();
    args.extend(["--state-format", "reference"]);
    hub(t, &args).success();
}

#[test]
fn deploy_case_02_snapshots() {
    let t = F0::default().build();
    deploy_in_the_reference_layout(&t);
    let s = state(&t);
    assert_eq!(
        qualified_names(get(&s, "components.a.capturedOutputs")),
        ["a:host"]
    );
    assert_eq!(
        qualified_names(get(&s, "components.b.capturedOutputs")),
        ["a:host", "b:url"]
    );
    assert_eq!(
        s["capturedOutputs"],
        *get(&s, "components.b.capturedOutputs")
    );
    assert_eq!(
        *get(&s, "components.a.rawOutputs"),
        crate::common::yaml("[{name: host, value: a.example.com}]")
    );
    for output in s["capturedOutputs"].as_sequence().expect("outputs") {
        let component = text(&output["component"]);
        assert_eq!(text(&output["componentOrigin"]), component);
        assert_eq!(text(&output["componentKind"]), component);
    }
}

/// The default layout writes each snapshot as its difference against the
/// previous entry's; hub reads back the snapshots the reference layout
/// holds.
#[test]
fn deploy_case_02_snapshots_in_the_linear_layout() {
    let t = F0::default().build();
    hub(&t, &["deploy", "hub.yaml.elaborate", "-s", "linear.state"]).success();
    deploy_in_the_reference_layout(&t);
    let s = read_documents(&t.root().join("linear.state")).remove(0);
    assert_eq!(
        qualified_names(get(&s, "components.b.capturedOutputs")),
        ["b:url"]
    );
    assert_eq!(text(get(&s, "components.b.capturedOutputsBase")), "a");
    let read = |name: &str| {
        hub_state::read(
            &t.root().join(name),
            &mut hub_manifest::diag::Warnings::default(),
        )
        .expect("readable")
        .expect("present")
    };
    let (linear, whole) = (read("linear.state"), read("hub.yaml.state"));
    for component in ["a", "b"] {
        assert_eq!(
            linear.components[component].captured_outputs.to_vec(),
            whole.components[component].captured_outputs.to_vec(),
            "snapshot of {component}"
        );
    }
}

#[test]
fn deploy_case_03_implicit_parameters_in_the_state() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    let id = text(&param(&s, "hub.deploymentId").expect("deployment id"));
    let uuid =
        regex::Regex::new("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
            .unwrap();
    assert!(uuid.is_match(&id), "{id}");
    assert_eq!(param(&s, "hub.stackName"), Some(Value::from("demo")));
    let a = get(&s, "components.a.parameters")
        .as_sequence()
        .expect("parameters");
    assert_eq!(
        a[0],
        crate::common::yaml("{name: hub.componentName, value: a}")
    );
    assert_eq!(
        a[a.len() - 1],
        crate::common::yaml("{name: hub.provides, value: '', env: HUB_PROVIDES}")
    );
    assert!(a.iter().all(|p| p.get("component").is_none()));
    let stack: Vec<String> = names(&s["stackParameters"], "name");
    let mut sorted = stack.clone();
    sorted.sort();
    assert_eq!(stack, sorted);
}

#[test]
fn deploy_case_04_deployment_id_is_stable() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let first = param(&state(&t), "hub.deploymentId");
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(param(&s, "hub.deploymentId"), first);
    assert_eq!(s["operations"].as_sequence().map(Vec::len), Some(2));
}

#[test]
fn hub_deployment_id_pins_a_new_states_id_and_never_replaces_a_kept_one() {
    let t = F0::default().build();
    hub_env(&t, DEPLOY, &[("HUB_DEPLOYMENT_ID", "pinned-id-1")]).success();
    let id = || param(&state(&t), "hub.deploymentId");
    assert_eq!(id(), Some(Value::from("pinned-id-1")));
    hub_env(&t, DEPLOY, &[("HUB_DEPLOYMENT_ID", "another-id")]).success();
    assert_eq!(
        id(),
        Some(Value::from("pinned-id-1")),
        "the state's id is kept"
    );
    let params = hub_env(
        &t,
        &["params", "hub.yaml.elaborate"],
        &[("HUB_DEPLOYMENT_ID", "for-params")],
    );
    params.success();
    assert!(params.stdout.contains("for-params"), "{}", params.stdout);
}

#[test]
fn deploy_case_17_underivable_parameter_fails_the_component() {
    let t = F1 {
        c_params: "{name: d, default: dv, env: D}\n{name: e, empty: allow, env: E}\n{name: m}",
        ..F1::default()
    }
    .build();
    // Nothing can give `m`: the deploy refuses before anything runs.
    hub(&t, DEPLOY)
        .failure()
        .stderr_has("component `c`: would fail: its parameters cannot be expanded")
        .stderr_has("m|c");
    assert!(!exists(&t, "c/env.out"));
    assert!(!exists(&t, "hub.yaml.state"));
    // With --force the run goes on, and `c` fails as the spec says.
    let mut forced = DEPLOY.to_vec();
    forced.push("--force");
    hub(&t, &forced).stderr_has("m|c");
    assert!(!exists(&t, "c/env.out"));
    let s = state(&t);
    assert_eq!(text(get(&s, "components.c.status")), "error");
    assert!(!text(get(&s, "components.c.message")).is_empty());
    assert_eq!(text(&s["status"]), "incomplete");
    // `--force` goes on after the failure: the operation is not an error.
    let op = last_operation(&s);
    assert_eq!(text(&op["status"]), "success");
    assert_eq!(phases(op), ["c: error"]);
    let t = F1 {
        c_params: "{name: d, default: dv, env: D}\n{name: e, empty: allow, env: E}",
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "c/env.out", "D").as_deref(), Some("dv"));
    assert_eq!(var(&t, "c/env.out", "E").as_deref(), Some(""));
}

#[test]
fn deploy_case_19_environment_formatting() {
    let t = F1 {
        c_params: "{name: n, value: 3, env: N}\n{name: l, value: [a, b], env: L}\n{name: s, value: ' padded ', env: S}\n{name: sp, value: ' ', env: SP}\n{name: m, value: {k: v}, env: M}",
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let v = |n: &str| var(&t, "c/env.out", n);
    assert_eq!(v("N").as_deref(), Some("3"));
    assert_eq!(v("L").as_deref(), Some(r#"["a","b"]"#));
    assert_eq!(v("S").as_deref(), Some("padded"));
    assert_eq!(v("SP").as_deref(), Some(""));
    assert_eq!(v("M").as_deref(), Some(r#"{"k":"v"}"#));
}

#[test]
fn deploy_case_20_component_name_variables() {
    // (the component's parameters, COMPONENT_NAME); HUB_COMPONENT and
    // hubctl's HUB_COMPONENT_NAME stay the name.
    let cases = [
        ("", "c"),
        ("{name: n, value: custom, env: COMPONENT_NAME}", "custom"),
        ("{name: hub.componentName, env: HUB_COMPONENT_NAME}", "c"),
    ];
    for (c_params, component_name) in cases {
        let t = F1 {
            c_params,
            ..F1::default()
        }
        .build();
        hub(&t, DEPLOY).success();
        let v = |name: &str| var(&t, "c/env.out", name);
        assert_eq!(
            v("COMPONENT_NAME").as_deref(),
            Some(component_name),
            "{c_params}"
        );
        assert_eq!(v("HUB_COMPONENT").as_deref(), Some("c"), "{c_params}");
        assert_eq!(v("HUB_COMPONENT_NAME").as_deref(), Some("c"), "{c_params}");
    }
}

#[test]
fn deploy_case_21_hub_random() {
    use base64::Engine;
    let decode = |text: &str| {
        base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(text)
            .expect("base64")
    };
    let t = F1::default().build();
    hub(&t, DEPLOY).success();
    let first = var(&t, "c/env.out", "HUB_RANDOM").expect("HUB_RANDOM");
    assert_eq!(first.len(), 171);
    assert!(!first.contains('='));
    assert_eq!(decode(&first).len(), 128);
    hub(&t, DEPLOY).success();
    assert_ne!(var(&t, "c/env.out", "HUB_RANDOM"), Some(first));
    let t = F1 {
        c_extra: "lifecycle: {options: {random: {bytes: 16}}}",
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let short = var(&t, "c/env.out", "HUB_RANDOM").expect("HUB_RANDOM");
    assert_eq!(short.len(), 22);
    assert_eq!(decode(&short).len(), 16);
}

#[test]
fn deploy_case_22_os_environment_modes() {
    let t = F1::default().build();
    let extra = [("TF_VAR_x", "1"), ("FOO", "2")];
    hub_env(&t, DEPLOY, &extra).success();
    assert_eq!(var(&t, "c/env.out", "FOO").as_deref(), Some("2"));
    assert_eq!(var(&t, "c/env.out", "TF_VAR_x"), None);
    let everything = [DEPLOY, &["--os-environment", "everything"]].concat();
    hub_env(&t, &everything, &extra).success();
    assert_eq!(var(&t, "c/env.out", "TF_VAR_x").as_deref(), Some("1"));
    assert_eq!(var(&t, "c/env.out", "FOO").as_deref(), Some("2"));
    let strict = [DEPLOY, &["--os-environment", "strict"]].concat();
    hub_env(&t, &strict, &extra).success();
    assert_eq!(var(&t, "c/env.out", "TF_VAR_x"), None);
    assert_eq!(var(&t, "c/env.out", "FOO"), None);
    for kept in ["PATH", "HOME", "HUB"] {
        assert!(var(&t, "c/env.out", kept).is_some(), "{kept}");
    }
    let bogus = [DEPLOY, &["--os-environment", "bogus"]].concat();
    hub(&t, &bogus).failure();
}

#[test]
fn deploy_case_23_nested_cli_variables() {
    let t = F1::default().build();
    hub(&t, &[DEPLOY, &["-b", "/some/dir"]].concat()).success();
    let root = std::fs::canonicalize(t.root()).expect("root");
    let v = |n: &str| var(&t, "c/env.out", n).unwrap_or_default();
    let hub_path = PathBuf::from(v("HUB"));
    assert!(
        hub_path.is_absolute() && hub_path.ends_with("hub"),
        "{hub_path:?}"
    );
    let same = |a: &str, b: &Path| std::fs::canonicalize(a).ok().as_deref() == Some(b);
    assert!(same(&v("HUB_ELABORATE"), &root.join("hub.yaml.elaborate")));
    assert!(same(&v("HUB_STATE"), &root.join("hub.yaml.state")));
    assert!(same(&v("HUB_COMPONENT_DIR"), &root.join("c")));
    assert!(same(&v("HUB_BASE_DIR"), &root));
    assert_eq!(v("HUB_COMPONENTS_BASEDIR"), "/some/dir");
}

#[test]
fn deploy_case_24_overrides_are_not_exported() {
    let t = F1::default().build();
    hub(&t, &[DEPLOY, &["-e", "FOO=bar"]].concat()).success();
    assert_eq!(var(&t, "c/env.out", "FOO"), None);
}

#[test]
fn deploy_case_25_implementation_precedence() {
    let script = "#!/bin/sh\necho script > impl.out\n";
    let t = scripts(
        F1::default()
            .build()
            .file("c/deploy.sh", script)
            .file("c/Makefile", "deploy:\n\techo make > impl.out\n"),
    );
    hub(&t, DEPLOY).success();
    assert_eq!(read(&t, "c/impl.out"), "make\n");
    let t = scripts(
        F1::default()
            .build()
            .file("c/deploy.sh", script)
            .file("c/Makefile", "other:\n\techo make > impl.out\n"),
    );
    hub(&t, DEPLOY).success();
    assert_eq!(read(&t, "c/impl.out"), "script\n");
    let t = scripts(
        F1::default()
            .build()
            .file("c/deploy.sh", script)
            .file("c/bin/deploy", "#!/bin/sh\necho bin > impl.out\n"),
    );
    hub(&t, DEPLOY).success();
    assert_eq!(read(&t, "c/impl.out"), "bin\n");
    let t = scripts(
        F1::default()
            .build()
            .file("c/deploy.sh", script)
            .file("c/deploy", "#!/bin/sh\necho deploy > impl.out\n"),
    );
    hub(&t, DEPLOY).success();
    assert_eq!(read(&t, "c/impl.out"), "deploy\n");
}

#[test]
fn deploy_case_26_missing_implementation() {
    let t = F0::default().build();
    std::fs::remove_file(t.root().join("b/deploy.sh")).expect("rm");
    hub(&t, DEPLOY).failure().stderr_has("bare");
    assert!(!exists(&t, "a/env.out"));
    assert!(!exists(&t, "hub.yaml.state"));
    let t = F0 {
        b_outputs: Some("{name: greeting, value: hello}"),
        b_extra: "lifecycle: {bare: allow}",
        ..F0::default()
    }
    .build();
    std::fs::remove_file(t.root().join("b/deploy.sh")).expect("rm");
    std::fs::remove_file(t.root().join("b/undeploy.sh")).expect("rm");
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(text(get(&s, "components.b.status")), "deployed");
    assert_eq!(
        out_of(&s["capturedOutputs"], "b:greeting"),
        Some(Value::from("hello"))
    );
}

#[test]
fn deploy_case_27_invocation_details() {
    let t = F0 {
        a_deploy: Some("#!/bin/sh\npwd > pwd.out; echo \"$#\" > argc.out\nif read x; then echo data; else echo eof; fi > stdin.out\necho; echo Outputs:; echo \"host = a.$DOMAIN\"; echo\n"),
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let real = std::fs::canonicalize(t.root().join("a")).expect("a");
    assert_eq!(read(&t, "a/pwd.out").trim(), real.display().to_string());
    assert_eq!(read(&t, "a/argc.out"), "0\n");
    assert_eq!(read(&t, "a/stdin.out"), "eof\n");
}

#[test]
fn deploy_case_28_curly_templates() {
    let t = F0 {
        a_extra: "templates: {files: [\"*.template\"]}",
        a_deploy: Some("#!/bin/sh\ncp conf.txt seen.txt\necho; echo Outputs:; echo \"host = a.$DOMAIN\"; echo\n"),
        ..F0::default()
    }
    .build()
    .file("a/conf.txt.template", "d=${dns.domain} b=${dns.domain/base64} n=${hub.componentName}");
    std::fs::set_permissions(
        t.root().join("a/conf.txt.template"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    hub(&t, DEPLOY).success();
    assert_eq!(
        read(&t, "a/conf.txt").trim_end(),
        "d=example.com b=ZXhhbXBsZS5jb20= n=a"
    );
    assert_eq!(read(&t, "a/seen.txt"), read(&t, "a/conf.txt"));
    let mode = std::fs::metadata(t.root().join("a/conf.txt"))
        .expect("conf")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640);
}

/// The implementation found before the run is used, except for a
/// component whose templates are rendered: it is looked for again then, so
/// a `Makefile` rendered from a template takes precedence over `deploy.sh`.
#[test]
fn a_makefile_rendered_from_a_template_is_what_runs() {
    let t = F0 {
        a_extra: "templates: {files: [\"*.template\"]}",
        ..F0::default()
    }
    .build()
    .file(
        "a/Makefile.template",
        "deploy:\n\techo make > impl.out\n\tsh deploy.sh\n",
    );
    hub(&t, DEPLOY).success();
    assert_eq!(read(&t, "a/impl.out"), "make\n");
}

#[test]
fn deploy_case_29_template_sees_only_component_parameters() {
    let t = F0 {
        stack_params: "{name: cloud.region, value: eu-west-1}",
        a_extra: "templates: {files: [\"*.template\"]}",
        ..F0::default()
    }
    .build()
    .file("a/conf.txt.template", "r=${cloud.region}");
    let out = hub(&t, DEPLOY);
    out.failure().stderr_has("cloud.region");
    assert!(!exists(&t, "a/env.out"));
    assert_eq!(text(get(&state(&t), "components.a.status")), "error");
}

fn f30(depends: &str) -> Test {
    let component = |n: &str| {
        format!("version: 1\nkind: component\nmeta: {{name: {n}, kind: {n}}}\noutputs:\n- {{name: endpoint, fromTfVar: endpoint}}\n")
    };
    let text = format!(
        "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n- {{name: a1, source: {{dir: a1}}}}\n- {{name: a2, source: {{dir: a2}}}}\n- {{name: b, source: {{dir: b}}{depends}}}\nlifecycle: {{order: [a1, a2, b]}}\n---\n{}---\n{}---\nversion: 1\nkind: component\nmeta: {{name: b, kind: b}}\nparameters:\n- {{name: endpoint, env: EP}}\n",
        component("a1"),
        component("a2")
    );
    scripts(
        Test::new()
            .file("hub.yaml.elaborate", &text)
            .file(
                "a1/deploy.sh",
                "#!/bin/sh\necho Outputs:; echo endpoint = e1; echo\n",
            )
            .file(
                "a2/deploy.sh",
                "#!/bin/sh\necho Outputs:; echo endpoint = e2; echo\n",
            )
            .file("b/deploy.sh", "#!/bin/sh\nenv | sort > env.out\n"),
    )
}

#[test]
fn deploy_case_30_depends_disambiguates() {
    for (depends, expected) in [
        (", depends: [a2]", "e2"),
        (", depends: [a1]", "e1"),
        ("", "e2"),
    ] {
        let t = f30(depends);
        hub(&t, DEPLOY).success();
        assert_eq!(
            var(&t, "b/env.out", "EP").as_deref(),
            Some(expected),
            "{depends}"
        );
    }
}

#[test]
fn deploy_case_32_output_beats_plain_stack_parameter() {
    let f = |stack_params: &'static str| F0 {
        stack_params,
        a_outputs: "{name: dns.domain, fromTfVar: d}",
        a_deploy: Some(
            "#!/bin/sh\necho Outputs:; echo \"host = a.$DOMAIN\"; echo d = a.com; echo\n",
        ),
        b_params: "{name: dns.domain, env: D}",
        b_independent: true,
        ..F0::default()
    };
    let t = f("").build();
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "b/env.out", "D").as_deref(), Some("a.com"));
    let t = f("{name: dns.domain, component: b, value: q.com}").build();
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "b/env.out", "D").as_deref(), Some("q.com"));
}

#[test]
fn deploy_case_33_outputs_block_parsing() {
    let t = F1 {
        c_outputs: "{name: k1, fromTfVar: k1}\n{name: k2, fromTfVar: k2}\n{name: k3, fromTfVar: k3}",
        stdout: Some("noise = 1\nOutputs:\nk1 = v1\nk2=\"quoted \\\"x\\\"\"\n# comment = no\nk3 = a = b\n\nafter = blank\nOutputs:\nk1 = v2\n"),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:k1"),
        Some(Value::from("v1,v2"))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:k2"),
        Some(Value::from("quoted \"x\""))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:k3"),
        Some(Value::from("a = b"))
    );
    assert_eq!(
        names(get(&s, "components.c.rawOutputs"), "name"),
        ["k1", "k2", "k3"]
    );
}

#[test]
fn deploy_case_35_missing_raw_output() {
    let t = F1 {
        c_outputs: "{name: out, fromTfVar: nothere}",
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("nothere");
    assert_eq!(text(get(&state(&t), "components.c.status")), "error");
}

#[test]
fn deploy_case_36_encodings() {
    let outputs = "{name: ob, fromTfVar: b/base64}\n{name: oj, fromTfVar: j/json}\n{name: obj, fromTfVar: bj/json/base64}";
    let stdout = "Outputs:\nb = aGVsbG8=\nj = {\"x\":[1,2]}\nbj = eyJ4IjoxfQ==\n\n";
    let t = F1 {
        c_outputs: outputs,
        stdout: Some(stdout),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:ob"),
        Some(Value::from("hello"))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:oj"),
        Some(crate::common::yaml("{x: [1, 2]}"))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:obj"),
        Some(crate::common::yaml("{x: 1}"))
    );
    let t = F1 {
        c_outputs: "{name: bad, fromTfVar: b/rot13}",
        stdout: Some(stdout),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("rot13");
}

#[test]
fn deploy_case_37_file_values() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("abs.txt"), "abs").expect("abs");
    let stdout: &'static str = Box::leak(
        format!(
            "Outputs:\nf1 = file://one.txt\nf2 = file://multi.txt\nf3 = file://{}\nf4 = file://missing.txt\n\n",
            dir.path().join("abs.txt").display()
        )
        .into_boxed_str(),
    );
    let t = F1 {
        c_outputs: "{name: f1, fromTfVar: f1}\n{name: f2, fromTfVar: f2}\n{name: f3, fromTfVar: f3}\n{name: f4, fromTfVar: f4}",
        stdout: Some(stdout),
        ..F1::default()
    }
    .build()
    .file("c/one.txt", "line\n")
    .bytes("c/multi.txt", b"l1\nl2\n");
    hub(&t, DEPLOY).success();
    let s = state(&t);
    let out = |n: &str| out_of(&s["capturedOutputs"], n).map(|v| text(&v));
    assert_eq!(out("c:f1").as_deref(), Some("line"));
    assert_eq!(out("c:f2").as_deref(), Some("l1\nl2\n"));
    assert_eq!(out("c:f3").as_deref(), Some("abs"));
    assert_eq!(out("c:f4").as_deref(), Some("file://missing.txt"));
}

#[test]
fn deploy_case_39_secret_outputs() {
    let t = F1 {
        c_outputs: "{name: password, fromTfVar: password, kind: secret}\n{name: user, fromTfVar: user}",
        deploy: Some("#!/bin/sh\necho; echo Outputs:; printf 'password = s3cret\\nuser = admin\\n' | \"$HUB\" util otp; echo\n"),
        ..F1::default()
    }
    .build();
    let out = hub(&t, DEPLOY);
    out.success();
    assert!(!out.stdout.contains("s3cret") && !out.stderr.contains("s3cret"));
    let s = state(&t);
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:password"),
        Some(Value::from("s3cret"))
    );
    assert_eq!(
        out_of(&s["capturedOutputs"], "c:user"),
        Some(Value::from("admin"))
    );
    let raw = names(get(&s, "components.c.rawOutputs"), "name");
    for key in ["secrets", "password", "user"] {
        assert!(raw.contains(&key.to_string()), "{raw:?}");
    }
}

#[test]
fn deploy_case_40_undeclared_raw_outputs() {
    let t = F1 {
        stdout: Some("Outputs:\nextra = 1\n\n"),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(out_of(&s["capturedOutputs"], "c:extra"), None);
    assert_eq!(
        *get(&s, "components.c.rawOutputs"),
        crate::common::yaml("[{name: extra, value: '1'}]")
    );
}

#[test]
fn deploy_case_41_stack_outputs() {
    let t = F0 {
        stack_extra: "outputs:\n- {name: \"b:url\"}\n- {name: api, value: \"${b:url}/api\"}\n- {name: domain, value: \"${dns.domain}\"}\n- {name: nope, value: \"${missing}\"}\n- {name: cel, value: \"#{1}\"}\n- {name: lit, value: 42}\n",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(
        names(&s["stackOutputs"], "name"),
        ["b:url", "api", "domain", "lit"]
    );
    assert_eq!(
        names(&s["stackOutputs"], "value"),
        [
            "https://a.example.com",
            "https://a.example.com/api",
            "example.com",
            "42"
        ]
    );
}

#[test]
fn deploy_case_42_static_and_dynamic_provides() {
    let t = F0 {
        a_extra: "provides: [net]",
        a_deploy: Some("#!/bin/sh\nenv | sort > env.out\necho Outputs:; echo \"host = a.$DOMAIN\"; echo provides = tls,dns; echo\n"),
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(
        s["provides"],
        crate::common::yaml("{dns: [a], net: [a], tls: [a]}")
    );
    assert_eq!(
        var(&t, "b/env.out", "HUB_PROVIDES").as_deref(),
        Some("dns net tls")
    );
    assert_eq!(var(&t, "a/env.out", "HUB_PROVIDES").as_deref(), Some(""));
}

#[test]
fn deploy_case_43_hard_requirement() {
    let t = F0 {
        b_extra: "requires: [zz]",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("zz");
    let s = state(&t);
    assert_eq!(text(get(&s, "components.a.status")), "deployed");
    assert_eq!(text(get(&s, "components.b.status")), "error");
    assert!(!exists(&t, "b/env.out"));
    assert_eq!(text(&s["status"]), "incomplete");
}

#[test]
fn deploy_case_44_optional_requirement() {
    for tuning in [
        ", requires: {optional: [zz]}",
        ", requires: {optional: [\"zz:b\"]}",
    ] {
        let t = F0 {
            b_extra: "requires: [zz]",
            lifecycle_extra: tuning,
            ..F0::default()
        }
        .build();
        hub(&t, DEPLOY).success();
        assert!(!exists(&t, "b/env.out"));
        let s = state(&t);
        assert_eq!(text(&s["status"]), "deployed", "{tuning}");
        assert!(s["components"].get("b").is_none(), "{tuning}");
    }
    let t = F0 {
        b_extra: "requires: [zz]",
        lifecycle_extra: ", requires: {optional: [\"zz:a\"]}",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("zz");
}

#[test]
fn deploy_case_45_conditional_deployment() {
    let off = [
        "\"false\"",
        "false",
        "\"\"",
        "\"0\"",
        "0",
        "\"no\"",
        "\"(unknown)\"",
        "",
    ];
    for value in off {
        let stack_params: &'static str = if value.is_empty() {
            ""
        } else {
            Box::leak(format!("{{name: feature.b, value: {value}}}").into_boxed_str())
        };
        let t = F0 {
            stack_params,
            lifecycle_extra: ", requires: {optional: [\"feature.b:b\"]}",
            ..F0::default()
        }
        .build();
        hub(&t, DEPLOY).success();
        assert!(!exists(&t, "b/env.out"), "{value}");
        let s = state(&t);
        assert!(s["components"].get("b").is_none(), "{value}");
        assert_eq!(text(&s["status"]), "deployed", "{value}");
    }
    for value in ["\"False\"", "\"true\"", "\"1\"", "\"yes\""] {
        let stack_params: &'static str =
            Box::leak(format!("{{name: feature.b, value: {value}}}").into_boxed_str());
        let t = F0 {
            stack_params,
            lifecycle_extra: ", requires: {optional: [\"feature.b:b\"]}",
            ..F0::default()
        }
        .build();
        hub(&t, DEPLOY).success();
        assert!(exists(&t, "b/env.out"), "{value}");
    }
}

#[test]
fn deploy_case_46_wildcard_condition() {
    let t = F0 {
        lifecycle_extra: ", requires: {optional: [feature.all]}",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    assert_eq!(order_log(&t), ["a", "b"]);
    let t = F0 {
        stack_params: "{name: feature.all, value: \"0\"}",
        lifecycle_extra: ", requires: {optional: [feature.all]}",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY)
        .success()
        .stderr_has("feature.all:<component>");
    assert!(order_log(&t).is_empty());
}

#[test]
fn deploy_case_47_stack_requirement_from_the_environment() {
    let bin = tempfile::tempdir().expect("bin");
    let fake = bin.path().join("terraform");
    std::fs::write(&fake, "#!/bin/sh\necho Terraform v1.5.7\n").expect("fake");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let t = F1 {
        stack_extra: "requires: [terraform]",
        c_extra: "requires: [terraform]",
        ..F1::default()
    }
    .build();
    hub_env(&t, DEPLOY, &[("PATH", &path)]).success();
    assert_eq!(
        var(&t, "c/env.out", "HUB_PROVIDES").as_deref(),
        Some("terraform")
    );
    assert!(state(&t).get("provides").is_none());
    let t = F1 {
        stack_extra: "requires: [terraform]",
        c_extra: "requires: [terraform]",
        ..F1::default()
    }
    .build();
    let empty = tempfile::tempdir().expect("empty");
    let no_tool = format!("{}:/usr/bin:/bin", empty.path().display());
    hub_env(&t, DEPLOY, &[("PATH", &no_tool)])
        .failure()
        .stderr_has("terraform");
    assert!(!exists(&t, "hub.yaml.state"));
    let t = F1 {
        stack_extra: "requires: [terraform]",
        c_extra: "requires: [terraform]",
        lifecycle_extra: ", requires: {optional: [terraform]}",
        ..F1::default()
    }
    .build();
    hub_env(&t, DEPLOY, &[("PATH", &no_tool)]).success();
    assert!(!exists(&t, "c/env.out"));
}

#[test]
fn deploy_case_48_platform_provides() {
    let t = F1 {
        stack_extra: "requires: [cdn]\nplatform: {provides: [cdn]}",
        c_extra: "requires: [cdn]",
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    assert_eq!(
        state(&t)["provides"],
        crate::common::yaml("{cdn: ['*platform*']}")
    );
    assert_eq!(var(&t, "c/env.out", "HUB_PROVIDES").as_deref(), Some("cdn"));
}

#[test]
fn deploy_case_49_mandatory_failure() {
    let t = F0 {
        a_deploy: Some("#!/bin/sh\necho boom\nexit 3\n"),
        ..F0::default()
    }
    .build();
    let out = hub(&t, DEPLOY);
    out.failure();
    assert_eq!(out.status, 1);
    assert!(!exists(&t, "b/env.out"));
    let s = state(&t);
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert!(text(get(&s, "components.a.message")).contains('3'));
    assert!(s["components"].get("b").is_none());
    assert_eq!(text(&s["status"]), "incomplete");
    let op = last_operation(&s);
    assert_eq!(text(&op["status"]), "error");
    assert_eq!(phases(op), ["a: error"]);
    assert!(text(&op["logs"]).contains("boom"));
}

#[test]
fn deploy_case_50_optional_failure_and_dependents() {
    let t = F0 {
        lifecycle_extra: ", optional: [a]",
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("`a`");
    let s = state(&t);
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert_eq!(text(get(&s, "components.b.status")), "error");
    assert!(text(get(&s, "components.b.message")).contains("failed"));
    for lifecycle in [", optional: [a]", ", mandatory: [b]"] {
        let t = F0 {
            lifecycle_extra: lifecycle,
            a_deploy: Some("#!/bin/sh\nexit 3\n"),
            b_params: "",
            b_independent: true,
            ..F0::default()
        };
        let text_with_default = t.text().replace(
            "{name: host, env: HOST}",
            "{name: host, env: HOST, default: none}",
        );
        let t = scripts(t.build().file("hub.yaml.elaborate", &text_with_default));
        hub(&t, DEPLOY).success();
        assert_eq!(
            var(&t, "b/env.out", "HOST").as_deref(),
            Some("none"),
            "{lifecycle}"
        );
        let s = state(&t);
        assert_eq!(text(&s["status"]), "deployed", "{lifecycle}");
        assert_eq!(text(get(&s, "components.a.status")), "error");
        assert_eq!(text(get(&s, "components.b.status")), "deployed");
    }
}

#[test]
fn deploy_case_52_force() {
    let f = F0 {
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        b_independent: true,
        ..F0::default()
    };
    let text_with_default = f.text().replace(
        "{name: host, env: HOST}",
        "{name: host, env: HOST, default: none}",
    );
    let t = scripts(f.build().file("hub.yaml.elaborate", &text_with_default));
    hub(&t, &[DEPLOY, &["--force"]].concat()).success();
    let s = state(&t);
    assert_eq!(text(get(&s, "components.b.status")), "deployed");
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert_eq!(text(&s["status"]), "incomplete");
}

#[test]
fn deploy_case_53_placeholders_propagate_after_a_non_fatal_capture_failure() {
    let t = F0 {
        lifecycle_extra: ", optional: [a]",
        a_deploy: Some("#!/bin/sh\necho no outputs\n"),
        b_independent: true,
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let s = state(&t);
    assert_eq!(
        out_of(&s["capturedOutputs"], "a:host"),
        Some(Value::from("(unknown)"))
    );
    assert_eq!(var(&t, "b/env.out", "HOST").as_deref(), Some("(unknown)"));
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert_eq!(text(get(&s, "components.b.status")), "deployed");
}

#[test]
fn deploy_case_54_offset_and_limit() {
    let t = f2();
    hub(&t, DEPLOY).success();
    let before = state(&t);
    std::fs::remove_file(t.root().join("order.log")).expect("rm");
    hub(&t, &[DEPLOY, &["-o", "y", "-l", "y"]].concat()).success();
    assert_eq!(order_log(&t), ["y"]);
    assert_eq!(var(&t, "y/env.out", "XO").as_deref(), Some("x-value"));
    let after = state(&t);
    for c in ["x", "z"] {
        assert_eq!(after["components"][c], before["components"][c], "{c}");
    }
}

#[test]
fn deploy_case_55_argument_validation() {
    let t = f2();
    let cases: &[&[&str]] = &[
        &["deploy"],
        &["deploy", "hub.yaml.elaborate", "hub.yaml.elaborate"],
        &["deploy", "hub.yaml.elaborate", "-c", "y", "-o", "y"],
        &["deploy", "hub.yaml.elaborate", "-c", "y", "-n"],
        &["deploy", "hub.yaml.elaborate", "-o", "z", "-l", "x"],
        &["deploy", "hub.yaml.elaborate", "-c", "nope"],
        &["deploy", "hub.yaml.elaborate", "-e", "FOO"],
        &["deploy", "hub.yaml.elaborate", "--clouds", "mars"],
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-c",
            "y",
            "-s",
            "missing.state",
        ],
    ];
    for args in cases {
        let out = hub(&t, args);
        assert_ne!(out.status, 0, "{args:?}\n{}", out.stderr);
        assert!(out.stderr.contains("error"), "{args:?}: {}", out.stderr);
        assert!(order_log(&t).is_empty(), "{args:?} ran something");
    }
}

#[test]
fn deploy_case_56_components_order_and_preloading() {
    let t = f2();
    hub(&t, DEPLOY).success();
    hub(&t, &[DEPLOY, &["-c", "z,x"]].concat()).success();
    let log = order_log(&t);
    assert_eq!(log[log.len() - 2..], ["x", "z"]);
    assert_eq!(var(&t, "z/env.out", "YO").as_deref(), Some("y-value"));
}

#[test]
fn deploy_case_57_full_undeploy() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let deployed = state(&t);
    hub(&t, UNDEPLOY).success();
    assert_eq!(order_log(&t), ["a", "b", "u:b", "u:a"]);
    let s = state(&t);
    assert_eq!(text(get(&s, "components.a.status")), "undeployed");
    assert_eq!(text(get(&s, "components.b.status")), "undeployed");
    assert_eq!(text(&s["status"]), "undeployed");
    assert!(s.get("provides").is_none());
    assert_eq!(s["capturedOutputs"], deployed["capturedOutputs"]);
    for c in ["a", "b"] {
        assert_eq!(
            s["components"][c]["capturedOutputs"],
            deployed["components"][c]["capturedOutputs"]
        );
        assert_eq!(
            s["components"][c]["parameters"],
            deployed["components"][c]["parameters"]
        );
    }
    let operations = s["operations"].as_sequence().expect("operations");
    assert_eq!(operations.len(), 2);
    assert_eq!(text(&operations[1]["operation"]), "undeploy");
    assert_eq!(text(&operations[1]["status"]), "success");
}

#[test]
fn deploy_case_58_guessing_the_starting_point() {
    let t = f2();
    hub(&t, &[DEPLOY, &["-l", "x"]].concat()).success();
    hub(&t, UNDEPLOY).success();
    assert_eq!(order_log(&t), ["x", "u:x"]);
    let t = f2();
    hub(&t, &[DEPLOY, &["-l", "x"]].concat()).success();
    hub(&t, &[UNDEPLOY, &["--guess=false"]].concat()).success();
    assert_eq!(order_log(&t), ["x", "u:z", "u:y", "u:x"]);
}

#[test]
fn deploy_case_59_undeploy_sees_stored_outputs() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    hub(&t, UNDEPLOY).success();
    assert_eq!(
        var(&t, "b/env.undeploy.out", "HOST").as_deref(),
        Some("a.example.com")
    );
}

#[test]
fn deploy_case_60_undeploy_ignores_missing_hard_requirements() {
    let t = F0 {
        a_extra: "provides: [zz]",
        b_extra: "requires: [zz]",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    // `b` still uses `zz` from `a`: only `-f` takes `a` down first.
    hub(&t, &[UNDEPLOY, &["-c", "a", "-f"]].concat())
        .success()
        .stderr_has("`b` depends on `a` (`depends`, provides `zz`)");
    let out = hub(&t, &[UNDEPLOY, &["-c", "b"]].concat());
    out.success().stderr_has("zz");
    assert_eq!(text(get(&state(&t), "components.b.status")), "undeployed");
}

#[test]
fn deploy_case_61_undeploy_without_state() {
    let t = F1::default().build();
    hub(&t, UNDEPLOY).success();
    assert_eq!(order_log(&t), ["u:c"]);
    assert!(!exists(&t, "hub.yaml.state"));
}

#[test]
fn deploy_case_62_state_format() {
    let t = F0 {
        stack_extra: "outputs:\n- {name: \"b:url\"}\n",
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let raw = crate::common::unframed(&read(&t, "hub.yaml.state"));
    let top: Vec<&str> = raw
        .lines()
        .filter(|l| !l.starts_with([' ', '-']))
        .filter_map(|l| l.split(':').next())
        .filter(|k| !matches!(*k, "serial" | "lineage"))
        .collect();
    assert_eq!(
        top,
        [
            "version",
            "kind",
            "timestamp",
            "status",
            "meta",
            "lifecycle",
            "stackParameters",
            "capturedOutputs",
            "stackOutputs",
            "components",
            "operations"
        ]
    );
    let s = state(&t);
    assert!(hub_state::is_rfc3339(&text(&s["timestamp"])));
    for c in ["a", "b"] {
        let start = text(get(&s, &format!("components.{c}.timestamps.start")));
        let end = text(get(&s, &format!("components.{c}.timestamps.end")));
        assert!(start <= end, "{c}: {start} > {end}");
    }
    for output in s["capturedOutputs"].as_sequence().expect("outputs") {
        for key in [
            "component",
            "name",
            "value",
            "componentOrigin",
            "componentKind",
        ] {
            assert!(output.get(key).is_some(), "{key}");
        }
    }
}

#[test]
fn deploy_case_63_compression() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    assert!(read(&t, "hub.yaml.state").starts_with("# hub-state:"));
    assert!(crate::common::unframed(&read(&t, "hub.yaml.state")).starts_with("version: 1"));
    hub(&t, &[DEPLOY, &["--compressed"]].concat()).success();
    let bytes = std::fs::read(t.root().join("hub.yaml.state")).expect("state");
    assert_eq!(bytes[..2], [0x1f, 0x8b]);
    hub(&t, UNDEPLOY).success();
    assert_eq!(text(&state(&t)["status"]), "undeployed");
}

#[test]
fn deploy_case_64_lock_file() {
    let t = F0::default().build().file("hub.yaml.state.lock", "");
    hub(&t, DEPLOY).failure().stderr_has("hub.yaml.state.lock");
    assert!(order_log(&t).is_empty());
}

#[test]
fn deploy_case_65_invalid_state() {
    for content in ["version: 1\nkind: foo\n", "version: 2\nkind: state\n"] {
        let t = F0::default().build().file("hub.yaml.state", content);
        hub(&t, UNDEPLOY).failure();
        hub(&t, DEPLOY).failure();
        assert!(order_log(&t).is_empty());
        assert_eq!(
            read(&t, "hub.yaml.state"),
            content,
            "never replaced silently"
        );
    }
}

#[test]
fn deploy_case_67_state_manifest_mismatch() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let edited = crate::common::unframed(&read(&t, "hub.yaml.state"))
        .replace("  name: demo\n", "  name: other\n");
    std::fs::write(t.root().join("hub.yaml.state"), edited).expect("edit");
    let out = hub(&t, &[DEPLOY, &["-c", "b"]].concat());
    out.failure().stderr_has("other").stderr_has("demo");
    hub(&t, &[DEPLOY, &["-c", "b", "--force"]].concat()).success();
}

#[test]
fn deploy_case_69_checkpoint_before_invocation() {
    let t = F0 {
        // The state as hub reads it: the checkpoint is in its journal.
        b_deploy: Some("#!/bin/sh\n\"$HUB\" state pull ../hub.yaml.state ../during.yaml\n"),
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    let during = read_documents(&t.root().join("during.yaml")).remove(0);
    assert_eq!(text(get(&during, "components.b.status")), "deploying");
    assert_eq!(text(&during["status"]), "deploying");
    assert_eq!(text(get(&during, "components.a.status")), "deployed");
    let op = last_operation(&during);
    assert_eq!(text(&op["status"]), "in-progress");
    assert_eq!(phases(op), ["a: success", "b: in-progress"]);
}

#[test]
fn deploy_case_70_interrupt() {
    let t = F1 {
        deploy: Some("#!/bin/sh\necho started > started.out\nsleep 30\n"),
        ..F1::default()
    }
    .build();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(t.root())
        .args(DEPLOY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn hub");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !exists(&t, "c/started.out") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(exists(&t, "c/started.out"), "the component started");
    let started = std::time::Instant::now();
    // SAFETY: sending a signal to a child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "hub stopped promptly"
    );
    assert_eq!(status.code(), Some(130));
    let s = state(&t);
    assert_eq!(text(get(&s, "components.c.status")), "error");
    assert!(text(get(&s, "components.c.message")).contains("interrupted"));
    assert_ne!(text(&last_operation(&s)["status"]), "success");
    assert_eq!(text(&s["status"]), "incomplete");
    assert!(!exists(&t, "hub.yaml.state.lock"), "the lock is released");
}

/// `p` and `q` run at once with `-j 3`; `r` runs after `p`. No
/// `lifecycle.order`: it comes from `depends`, which leaves `q` free.
fn parallel_sleepers() -> Test {
    let text = "version: 1\nkind: stack\nmeta: {name: par}\ncomponents:\n- {name: p, source: {dir: p}}\n- {name: q, source: {dir: q}}\n- {name: r, source: {dir: r}, depends: [p]}\nlifecycle: {verbs: [deploy, undeploy]}\n---\nversion: 1\nkind: component\nmeta: {name: p}\n---\nversion: 1\nkind: component\nmeta: {name: q}\n---\nversion: 1\nkind: component\nmeta: {name: r}\n";
    let mut test = Test::new().file("hub.yaml.elaborate", text);
    for n in ["p", "q", "r"] {
        test = test
            .file(
                &format!("{n}/deploy.sh"),
                &format!("#!/bin/sh\necho started > ../{n}.started\nsleep 30\n"),
            )
            .file(&format!("{n}/undeploy.sh"), "#!/bin/sh\n");
    }
    scripts(test)
}

#[test]
fn interrupting_a_parallel_run_stops_every_running_component() {
    let t = parallel_sleepers();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(t.root())
        .args([DEPLOY, &["-j", "3"]].concat())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn hub");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !(exists(&t, "p.started") && exists(&t, "q.started"))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(exists(&t, "q.started"), "p and q run at once");
    let started = std::time::Instant::now();
    // SAFETY: sending a signal to a child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(status.code(), Some(130));
    let s = state(&t);
    for n in ["p", "q"] {
        let path = format!("components.{n}.message");
        assert!(text(get(&s, &path)).contains("interrupted"), "{n}");
    }
    assert!(!exists(&t, "r.started"), "nothing starts after the signal");
    assert!(get(&s, "components.r").is_null());
    assert_eq!(text(&s["status"]), "incomplete");
    assert!(!exists(&t, "hub.yaml.state.lock"), "the lock is released");
}

#[test]
fn deploy_case_74_invoke() {
    let t = F0 {
        a_extra: "lifecycle: {verbs: [deploy, undeploy, ping]}",
        b_deploy: Some("#!/bin/sh\n\"$HUB\" invoke a ping -e EXTRA=1 || exit 1\nif \"$HUB\" invoke a nope; then echo yes > nope.out; else echo no > nope.out; fi\n"),
        ..F0::default()
    }
    .build()
    .file("a/ping.sh", "#!/bin/sh\nenv | sort > ping.out\n");
    let t = scripts(t);
    hub(&t, DEPLOY).success();
    assert_eq!(
        var(&t, "a/ping.out", "DOMAIN").as_deref(),
        Some("example.com")
    );
    assert_eq!(var(&t, "a/ping.out", "EXTRA").as_deref(), Some("1"));
    assert_eq!(read(&t, "b/nope.out"), "no\n");
}

// ---------------------------------------------------------------- more

#[test]
fn demo_deploys_and_undeploys() {
    let (_dir, demo) = demo_copy();
    let run = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("hub")
            .expect("hub")
            .current_dir(&demo)
            .args(args)
            .env("USER", "tester")
            .env_remove("HUB_FORCE")
            .write_stdin(Vec::new())
            .output()
            .expect("run")
    };
    let out = run(&["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("app | database password: (masked)"),
        "{stdout}"
    );
    assert!(!stdout.contains("pw-demo") && !stderr.contains("pw-demo"));
    assert!(stderr.contains("monitoring  skipped"), "{stderr}");
    assert!(stderr.contains("stack: deployed"), "{stderr}");
    let s = read_documents(&demo.join("demo.state")).remove(0);
    assert_eq!(text(&s["status"]), "deployed");
    assert_eq!(
        out_of(&s["capturedOutputs"], "app:component.app.url"),
        Some(Value::from("https://app.demo.local"))
    );
    assert_eq!(param(&s, "env.owner"), Some(Value::from("tester")));
    assert_eq!(param(&s, "app.tier"), Some(Value::from("ha")));
    let conf = std::fs::read_to_string(demo.join("components/app/app.conf")).expect("rendered");
    assert!(conf.contains("server_name app.demo.local;"), "{conf}");
    assert!(demo.join("demo.state.logs/app.log").is_file());
    let out = run(&["undeploy", "hub.yaml", "params.yaml", "-s", "demo.state"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let undeploy_log = String::from_utf8_lossy(&out.stderr);
    assert!(
        undeploy_log.contains("stack: undeployed") && !undeploy_log.contains("outputs:"),
        "an undeploy shows no stack outputs:\n{undeploy_log}"
    );
    let s = read_documents(&demo.join("demo.state")).remove(0);
    assert_eq!(text(&s["status"]), "undeployed");
    for c in ["network", "database", "app"] {
        assert_eq!(text(&s["components"][c]["status"]), "undeployed", "{c}");
    }
}

#[test]
fn a_second_deploy_fails_at_once_naming_the_holder() {
    let t = F1 {
        deploy: Some("#!/bin/sh\necho started > started.out\nsleep 5\n"),
        ..F1::default()
    }
    .build();
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(t.root())
        .args(DEPLOY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn hub");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !exists(&t, "c/started.out") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let started = std::time::Instant::now();
    let second = hub(&t, DEPLOY);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "failed at once"
    );
    second
        .failure()
        .stderr_has("locked")
        .stderr_has(&first.id().to_string());
    assert!(first.wait().expect("wait").success());
    assert_eq!(text(&state(&t)["status"]), "deployed");
}

/// A parallel run marks each component's log on the component's thread:
/// the mark of the run comes before anything the component wrote in that
/// run, once per run.
#[test]
fn each_log_is_marked_before_the_component_writes_in_a_parallel_run() {
    let t = F0 {
        b_independent: true,
        ..F0::default()
    }
    .build();
    let parallel: Vec<&str> = DEPLOY.iter().copied().chain(["-j", "4"]).collect();
    for run in 1..=2 {
        hub(&t, &parallel).success();
        for name in ["a", "b"] {
            let log = read(&t, &format!("hub.yaml.state.logs/{name}.log"));
            let lines: Vec<&str> = log.lines().collect();
            let marks: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("--- hub run "))
                .collect();
            assert_eq!(marks.len(), run, "{name}.log:\n{log}");
            assert_eq!(marks[0], 0, "{name}.log starts with a mark:\n{log}");
            // Each run's part: its mark, then what the component wrote.
            for (i, &at) in marks.iter().enumerate() {
                let end = marks.get(i + 1).copied().unwrap_or(lines.len());
                assert!(end > at + 1, "nothing after a mark in {name}.log:\n{log}");
            }
        }
    }
}

#[test]
fn bad_input_gives_clear_errors() {
    let t = Test::new().file(
        "hub.yaml.elaborate",
        "version: 1\nkind: stack\nmeta: {name: x\ncomponents: [\n",
    );
    let out = hub(&t, DEPLOY);
    out.failure()
        .stderr_has("hub.yaml.elaborate")
        .stderr_has("help:");
    assert_eq!(out.status, 1);

    let t = F0 {
        a_deploy: Some("#!/bin/sh\necho failing >&2\nexit 7\n"),
        ..F0::default()
    }
    .build();
    let out = hub(&t, DEPLOY);
    out.failure()
        .stderr_has("component `a` failed")
        .stderr_has("exited with code 7");
    assert!(out.stderr.contains("a | failing"), "{}", out.stderr);
    assert!(read(&t, "hub.yaml.state.logs/a.log").contains("failing"));
    // `b` never started: no log file of it is left, though one may have
    // been made ahead of it.
    assert!(!exists(&t, "hub.yaml.state.logs/b.log"));

    let t = F0::default()
        .build()
        .file("hub.yaml.state", "version: 1\nkind: state\ncomponents: [\n");
    hub(&t, DEPLOY)
        .failure()
        .stderr_has("hub.yaml.state")
        .stderr_has("help:");

    let t = F0::default().build();
    std::fs::remove_file(t.root().join("a/deploy.sh")).expect("rm");
    hub(&t, DEPLOY)
        .failure()
        .stderr_has("no implementation of `deploy`");

    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let out = hub_env(
        &t,
        &[
            "invoke",
            "a",
            "nope",
            "-m",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
        ],
        &[],
    );
    out.failure().stderr_has("does not implement verb `nope`");

    let t = F0::default().build();
    let text_with_unknown = F0::default()
        .text()
        .replace("order: [a, b]", "order: [a, b, c]");
    let t = t.file("hub.yaml.elaborate", &text_with_unknown);
    hub(&t, DEPLOY).failure().stderr_has("lifecycle.order");
}

#[test]
fn summary_lists_every_component() {
    let t = f2();
    let out = hub(&t, DEPLOY);
    out.success();
    for c in ["x", "y", "z"] {
        assert!(
            out.stderr
                .lines()
                .any(|l| l.trim_start().starts_with(c) && l.contains("deployed")),
            "{}",
            out.stderr
        );
    }
    assert!(
        out.stderr.contains("stack: deployed (3 components"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.is_empty() || out.stdout.lines().all(|l| l.contains(" |")),
        "{}",
        out.stdout
    );
}

#[test]
fn no_state_writes_nothing() {
    let t = F0::default().build();
    hub(&t, &["deploy", "hub.yaml.elaborate", "-n"]).success();
    assert_eq!(order_log(&t), ["a", "b"]);
    assert!(!exists(&t, "hub.yaml.state"));
    assert!(!exists(&t, "hub.yaml.state.logs"));
}

fn f31(pg2_kind: &str) -> Test {
    let text = format!(
        "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n- {{name: pg1, source: {{dir: pg1}}}}\n- {{name: pg2, source: {{dir: pg2}}}}\nlifecycle: {{order: [pg1, pg2]}}\n---\nversion: 1\nkind: component\nmeta: {{name: pg1, kind: postgresql}}\noutputs:\n- {{name: host, fromTfVar: host}}\n---\nversion: 1\nkind: component\nmeta: {{name: pg2, kind: {pg2_kind}}}\nparameters:\n- {{name: host, default: none, env: HOST}}\n"
    );
    scripts(
        Test::new()
            .file("hub.yaml.elaborate", &text)
            .file(
                "pg1/deploy.sh",
                "#!/bin/sh\necho Outputs:; echo host = h1; echo\n",
            )
            .file("pg2/deploy.sh", "#!/bin/sh\nenv | sort > env.out\n"),
    )
}

#[test]
fn deploy_case_31_same_kind_outputs_are_invisible() {
    let t = f31("postgresql");
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "pg2/env.out", "HOST").as_deref(), Some("none"));
    let t = f31("other");
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "pg2/env.out", "HOST").as_deref(), Some("h1"));
}

#[test]
fn deploy_case_68_several_state_locations() {
    let t = F0::default().build();
    hub(
        &t,
        &["deploy", "hub.yaml.elaborate", "-s", "s1.state,s2.state"],
    )
    .success();
    assert_eq!(order_log(&t), ["a", "b"]);
    let first = read(&t, "s1.state");
    assert!(first.contains("status: deployed"), "{first}");
    assert_eq!(read(&t, "s2.state"), first, "the same bytes everywhere");
    assert!(!exists(&t, "hub.yaml.state"));
    // Logs beside the first location; HUB_STATE is the first location.
    assert!(exists(&t, "s1.state.logs/a.log") && !exists(&t, "s2.state.logs"));
    let root = std::fs::canonicalize(t.root()).expect("root");
    let hub_state = var(&t, "a/env.out", "HUB_STATE").unwrap_or_default();
    assert!(PathBuf::from(&hub_state).is_absolute(), "{hub_state}");
    assert_eq!(
        std::fs::canonicalize(&hub_state).ok(),
        Some(root.join("s1.state"))
    );

    std::fs::remove_file(t.root().join("s2.state")).expect("delete s2.state");
    hub(
        &t,
        &["undeploy", "hub.yaml.elaborate", "-s", "s1.state,s2.state"],
    )
    .success();
    assert_eq!(order_log(&t), ["a", "b", "u:b", "u:a"]);
    let after = read(&t, "s1.state");
    assert_eq!(read(&t, "s2.state"), after, "both rewritten");
    let s = crate::common::parse_documents(&after).remove(0);
    assert_eq!(text(&s["status"]), "undeployed");
    let operations = s["operations"].as_sequence().expect("operations");
    assert_eq!(operations.len(), 2, "the history comes from s1.state");
    for lock in ["s1.state.lock", "s2.state.lock"] {
        assert!(!exists(&t, lock), "{lock} is released");
    }
}

#[test]
fn invoke_of_an_unknown_component_fails() {
    let t = F0::default().build();
    hub(&t, DEPLOY).success();
    let out = hub(
        &t,
        &[
            "invoke",
            "nope",
            "deploy",
            "-m",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
        ],
    );
    out.failure().stderr_has("`nope` is not in the stack");
}

#[test]
fn hub_force_in_the_environment_is_force() {
    let t = F0 {
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        lifecycle_extra: "",
        ..F0::default()
    }
    .build();
    hub_env(&t, DEPLOY, &[("HUB_FORCE", "1")]).success();
    assert_eq!(text(get(&state(&t), "components.a.status")), "error");
    hub_env(&t, DEPLOY, &[("HUB_FORCE", "0")]).failure();
}

/// A local HTTP server answering every request with `status`.
fn serve(status: u16) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0u8; 1024];
            let _ = stream.read(&mut buffer);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    port
}

fn f72(url: String) -> Test {
    let c_extra: &'static str = Box::leak(
        format!("lifecycle: {{readyConditions: [{{url: \"{url}\", waitSeconds: 2}}]}}")
            .into_boxed_str(),
    );
    F1 {
        c_extra,
        ..F1::default()
    }
    .build()
}

#[test]
fn deploy_case_72_ready_conditions() {
    let t = f72(format!("http://127.0.0.1:{}/", serve(404)));
    hub(&t, DEPLOY).success();
    assert_eq!(text(get(&state(&t), "components.c.status")), "deployed");
    let t = f72(format!("http://127.0.0.1:{}/", serve(503)));
    let started = std::time::Instant::now();
    hub(&t, DEPLOY).failure().stderr_has("503");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_eq!(text(get(&state(&t), "components.c.status")), "error");
    let t = f72("ftp://x".into());
    let started = std::time::Instant::now();
    hub(&t, DEPLOY).failure().stderr_has("http://");
    // Refused at once, not after the default wait of 1200 s.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn ready_conditions_are_waited_for_in_a_parallel_run() {
    let parallel = [DEPLOY, &["-j", "2"]].concat();
    let t = f72(format!("http://127.0.0.1:{}/", serve(404)));
    hub(&t, &parallel).success();
    assert_eq!(text(get(&state(&t), "components.c.status")), "deployed");
    let t = f72(format!("http://127.0.0.1:{}/", serve(503)));
    hub(&t, &parallel).failure().stderr_has("503");
    assert_eq!(text(get(&state(&t), "components.c.status")), "error");
    assert_eq!(text(&state(&t)["status"]), "incomplete");
}

#[test]
fn stack_ready_conditions_run_after_the_last_component() {
    let port = serve(503);
    let lifecycle_extra: &'static str = Box::leak(
        format!(", readyConditions: [{{url: \"http://127.0.0.1:{port}/\", waitSeconds: 1}}]")
            .into_boxed_str(),
    );
    let t = F1 {
        lifecycle_extra,
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("not ready");
    let s = state(&t);
    assert_eq!(text(get(&s, "components.c.status")), "deployed");
    assert_eq!(text(&s["status"]), "incomplete");
    assert_eq!(text(&last_operation(&s)["status"]), "error");
    hub(&t, &[DEPLOY, &["--force"]].concat()).success();
}

#[test]
fn deploy_case_34_marker_strictness() {
    let k = "{name: k, fromTfVar: k}";
    let t = F1 {
        c_outputs: k,
        stdout: Some("xOutputs:\nk = 1\n"),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("`k`");
    let t = F1 {
        c_outputs: k,
        stdout: Some("Outputs:\n\nk = 1\n\n"),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).success();
    assert_eq!(
        out_of(&state(&t)["capturedOutputs"], "c:k"),
        Some(Value::from("1"))
    );
    let t = F1 {
        c_outputs: "{name: k, fromTfVar: k}\n{name: late, fromTfVar: late}",
        stdout: Some("Outputs:\n\n\nk = 1\n\nlate = 2\n"),
        ..F1::default()
    }
    .build();
    hub(&t, DEPLOY).failure().stderr_has("late");
}

#[test]
fn deploy_case_73_dry_run() {
    let t = scripts(
        F1 {
            deploy: Some("#!/bin/sh\necho real > impl.out\n"),
            ..F1::default()
        }
        .build()
        .file("c/deploy-test.sh", "#!/bin/sh\necho dry > impl.out\n")
        .file("c/undeploy-test.sh", "#!/bin/sh\n"),
    );
    hub(&t, &[DEPLOY, &["--dry"]].concat()).success();
    assert_eq!(read(&t, "c/impl.out"), "dry\n");
    assert!(!exists(&t, "hub.yaml.state"), "a dry run writes no state");
    std::fs::remove_file(t.root().join("c/deploy-test.sh")).expect("rm");
    hub(&t, &[DEPLOY, &["-y"]].concat())
        .failure()
        .stderr_has("deploy-test");
}

#[test]
fn deploy_case_51_lifecycle_mandatory() {
    // `mandatory: [b]` makes `a` optional (§9.1): T50 expressed that way.
    let t = F0 {
        lifecycle_extra: ", mandatory: [b]",
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        ..F0::default()
    }
    .build();
    let out = hub(&t, DEPLOY);
    out.failure().stderr_has("`a`");
    assert_eq!(out.status, 1);
    assert!(!exists(&t, "b/env.out"), "b depends on the failed a");
    let s = state(&t);
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert_eq!(text(get(&s, "components.b.status")), "error");
    assert!(text(get(&s, "components.b.message")).contains("failed"));
    assert_eq!(text(&s["status"]), "incomplete");

    // The variant: `b` without `depends`, `host` defaulted.
    let f = F0 {
        lifecycle_extra: ", mandatory: [b]",
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        b_independent: true,
        ..F0::default()
    };
    let text_with_default = f.text().replace(
        "{name: host, env: HOST}",
        "{name: host, env: HOST, default: none}",
    );
    let t = scripts(f.build().file("hub.yaml.elaborate", &text_with_default));
    hub(&t, DEPLOY).success();
    assert_eq!(var(&t, "b/env.out", "HOST").as_deref(), Some("none"));
    let s = state(&t);
    assert_eq!(text(&s["status"]), "deployed");
    assert_eq!(text(get(&s, "components.a.status")), "error");
    assert_eq!(text(get(&s, "components.b.status")), "deployed");
    let op = last_operation(&s);
    assert_eq!(phases(op), ["a: error", "b: success"]);

    // The other way round, `mandatory: [a]`: a failing `a` ends the run
    // before `b`.
    let t = F0 {
        lifecycle_extra: ", mandatory: [a]",
        a_deploy: Some("#!/bin/sh\nexit 3\n"),
        b_independent: true,
        ..F0::default()
    }
    .build();
    hub(&t, DEPLOY).failure();
    assert!(order_log(&t).is_empty());
    assert!(
        !exists(&t, "b/env.out"),
        "a mandatory failure stops the run"
    );
    let s = state(&t);
    assert!(s["components"].get("b").is_none());
    assert_eq!(text(&s["status"]), "incomplete");
}

#[test]
fn a_state_location_that_cannot_be_written_is_a_warning() {
    // Its folder is missing: it cannot even be locked, and is left out.
    let t = F0::default().build();
    let out = hub(
        &t,
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "s1.state,gone/s2.state",
        ],
    );
    out.success()
        .stderr_has("warning: gone/s2.state")
        .stderr_has("left out");
    assert_eq!(order_log(&t), ["a", "b"]);
    assert_eq!(
        text(&read_documents(&t.root().join("s1.state"))[0]["status"]),
        "deployed"
    );
    assert!(!exists(&t, "gone"));

    // A link into a missing folder: its lock goes beside the file the
    // link names, which cannot be created either.
    let t = F0::default().build();
    std::os::unix::fs::symlink("gone/s2.state", t.root().join("s2.state")).expect("link");
    let out = hub(
        &t,
        &["deploy", "hub.yaml.elaborate", "-s", "s1.state,s2.state"],
    );
    out.success()
        .stderr_has("warning: s2.state: cannot create its lock file")
        .stderr_has("left out");
    assert_eq!(order_log(&t), ["a", "b"]);
    assert!(read(&t, "s1.state").contains("status: deployed"));
    assert!(!exists(&t, "s1.state.lock") && !exists(&t, "s2.state.lock"));
}

#[test]
fn no_writable_state_location_fails_before_any_component() {
    // Links into missing folders: locked nowhere (the locks go beside the
    // files the links name), refused as for one location.
    let t = F0::default().build();
    for name in ["s1.state", "s2.state"] {
        std::os::unix::fs::symlink(format!("gone/{name}"), t.root().join(name)).expect("link");
    }
    let out = hub(
        &t,
        &["deploy", "hub.yaml.elaborate", "-s", "s1.state,s2.state"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("cannot create the lock file");
    assert!(order_log(&t).is_empty());
    assert!(!exists(&t, "s1.state.lock") && !exists(&t, "s2.state.lock"));

    // Locked nowhere (no folder exists): refused, as for one location.
    let t = F0::default().build();
    let out = hub(
        &t,
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "gone/s1.state,gone/s2.state",
        ],
    );
    out.failure().stderr_has("gone/s1.state.lock");
    assert!(order_log(&t).is_empty());
}

#[test]
fn remote_and_empty_state_locations_are_refused() {
    let t = F0::default().build();
    hub(
        &t,
        &["deploy", "hub.yaml.elaborate", "-s", "s1.state,s3://b"],
    )
    .failure()
    .stderr_has("`s3://b` is not a remote state location");
    assert!(!exists(&t, "s1.state.lock") && !exists(&t, "s1.state"));
    hub(&t, &["deploy", "hub.yaml.elaborate", "-s", ","])
        .failure()
        .stderr_has("-n");
    assert!(order_log(&t).is_empty());
}

/// Elaborate and deploy flatten groups by the same rule: a leaf without a
/// name is `group.` in both, so the stack's value reaches the component.
#[test]
fn an_unnamed_leaf_gets_its_stack_value() {
    let t = Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n- {name: c, source: {dir: c}}\nparameters:\n- {name: grp., component: c, value: from-stack}\n",
        )
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n- name: grp\n  parameters:\n  - {name: '', env: LEAF}\n",
        )
        .file("c/deploy.sh", "#!/bin/sh\necho \"$LEAF\" > leaf.out\n");
    let script = t.root().join("c/deploy.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    hub(&t, &["deploy", "hub.yaml", "-s", "s.state"]).success();
    assert_eq!(read(&t, "c/leaf.out"), "from-stack\n");
}
