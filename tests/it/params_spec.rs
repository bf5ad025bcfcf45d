//! Parameter engine: the parameter-related cases of deploy.md §14 (named
//! after their numbers), `hub params`, `hub cel` and the CEL vectors.

use crate::common::{yaml, Test};
use indexmap::IndexMap;
use std::path::PathBuf;
use yaml_serde::Value;

// ---------------------------------------------------------------- CEL vectors

fn vectors_file() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/cel-vectors.yaml");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing; CEL vectors cannot be checked",
        path.display()
    );
    crate::common::skipped(&format!("{} not found", path.display()));
    None
}

fn bindings_of(vector: &Value) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    if let Some(Value::Mapping(map)) = vector.get("bindings") {
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.clone(),
                other => yaml_serde::to_string(other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            out.insert(k.as_str().unwrap_or_default().to_string(), text);
        }
    }
    out
}

fn check(
    kind: &str,
    input: &str,
    vector: &Value,
    outcome: Result<String, String>,
) -> Option<String> {
    let expects_error = vector
        .get("error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let expected = vector.get("result");
    match (expects_error, expected, outcome) {
        (true, _, Err(_)) => None,
        (true, _, Ok(got)) => Some(format!("{kind} {input:?}: expected an error, got {got:?}")),
        (false, Some(Value::String(want)), Ok(got)) if &got == want => None,
        // YAML reads an unquoted `1e+21` as a number: compare as numbers.
        (false, Some(Value::Number(want)), Ok(got)) if got.parse::<f64>().ok() == want.as_f64() => {
            None
        }
        (false, want, got) => Some(format!("{kind} {input:?}: expected {want:?}, got {got:?}")),
    }
}

/// The expression as written in the file: YAML reads unquoted `1e21` as a
/// number, whose shortest form is also valid CEL.
fn source_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => format!("{:e}", n.as_f64().unwrap_or_default()),
        other => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

#[test]
fn cel_vectors_give_the_listed_results() {
    let Some(path) = vectors_file() else { return };
    let text = std::fs::read_to_string(&path).expect("read vectors");
    let doc: Value = yaml_serde::from_str(&text).expect("vectors are YAML");
    let mut failures = Vec::new();
    let mut count = 0;
    for vector in doc
        .get("vectors")
        .and_then(Value::as_sequence)
        .expect("vectors list")
    {
        let expr = source_text(vector.get("expr").expect("expr"));
        let outcome =
            hub_params::evaluate_cel(&expr, &bindings_of(vector)).map_err(|e| e.to_string());
        failures.extend(check("expr", &expr, vector, outcome));
        count += 1;
    }
    for vector in doc
        .get("yaml_values")
        .and_then(Value::as_sequence)
        .expect("yaml_values list")
    {
        let value = vector.get("value").and_then(Value::as_str).expect("value");
        let outcome = hub_params::evaluate_template(value, &bindings_of(vector))
            .map(|(text, _)| text)
            .map_err(|e| e.to_string());
        failures.extend(check("value", value, vector, outcome));
        count += 1;
    }
    assert!(count > 100, "only {count} vectors read");
    assert!(
        failures.is_empty(),
        "{} of {count} vectors fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------- hub cel

#[test]
fn cel_command_prints_the_result() {
    let out = Test::new()
        .args(&[
            "cel",
            "--",
            "3 - int({\"prime\": \"7\"}[prime])",
            "prime=prime",
        ])
        .run();
    out.success();
    assert_eq!(out.stdout, "-4\n");
    let out = Test::new().args(&["cel", "a + '-' + b", "a=x=y,b=z"]).run();
    out.success();
    assert_eq!(out.stdout, "x=y-z\n");
}

#[test]
fn cel_command_yaml_value_warns_about_references() {
    let out = Test::new()
        .args(&[
            "cel",
            "-y",
            "https://${host}/#{env == \"prod\" ? \"live\" : \"stage\"}",
            "host=h,env=dev",
        ])
        .run();
    out.success()
        .stderr_has("`${host}` is not a CEL substitution");
    assert_eq!(out.stdout, "https://h/stage\n");
}

#[test]
fn cel_command_errors_exit_1() {
    let out = Test::new().args(&["cel", "size(x > 0"]).run();
    out.failure().stderr_has("CEL parse error");
    assert_eq!(out.status, 1);
    let out = Test::new().args(&["cel", "missing"]).run();
    out.failure().stderr_has("CEL evaluation error");
}

/// An expression deep enough to overflow the parser's stack (5,000
/// chained additions aborted hub) is refused before it is parsed, with
/// what to do; in a stack file the error names the file and line.
#[test]
fn an_expression_too_deep_for_the_stack_is_refused_with_a_hint() {
    let chain = vec!["1"; 5000].join("+");
    let out = Test::new().args(&["cel", &chain]).run();
    out.failure()
        .stderr_has("CEL parse error")
        .stderr_has("4999 operators")
        .stderr_has("split it into parameters");
    assert_eq!(out.status, 1);
    let nested = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    let out = Test::new().args(&["cel", &nested]).run();
    out.failure().stderr_has("nests 200 brackets deep");
    let stack = format!("{{name: p, value: \"#{{{nested}}}\"}}");
    let out = run_params(&f1(&stack, ""), &[]);
    out.failure()
        .stderr_has("hub.yaml.elaborate:7")
        .stderr_has("brackets deep");
    assert_eq!(out.status, 1);
}

/// A literal where a field name goes (`a.?0`) is a syntax error: it used
/// to evaluate, as `optional.none()`, through a parse shared with
/// expressions of the same shape.
#[test]
fn a_literal_after_a_dot_is_a_parse_error() {
    let out = Test::new().args(&["cel", "a . ? 0", "a=1"]).run();
    out.failure().stderr_has("CEL parse error");
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    let stack = r##"{name: p, value: "#{dns.?0}"}"##;
    let out = run_params(&f1(stack, ""), &[]);
    out.failure()
        .stderr_has("hub.yaml.elaborate:7")
        .stderr_has("parse error");
    assert_eq!(out.status, 1);
}

// ---------------------------------------------------------------- fixtures

/// Fixture F1 of deploy.md §14 with extra stack and component parameters.
fn f1(stack_params: &str, component_params: &str) -> String {
    format!(
        "version: 1\nkind: stack\nmeta: {{name: one}}\ncomponents: [{{name: c, source: {{dir: c}}}}]\nlifecycle: {{verbs: [deploy, undeploy], order: [c]}}\nparameters:\n{}---\nversion: 1\nkind: component\nmeta: {{name: c, kind: c}}\nparameters:\n{}outputs: []\n",
        block(stack_params),
        block(component_params)
    )
}

fn block(items: &str) -> String {
    if items.trim().is_empty() {
        return "  []\n".into();
    }
    items
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("- {}\n", l.trim()))
        .collect()
}

/// Fixture F0 of deploy.md §14 with extra stack parameters.
fn f0(stack_params: &str, a_params: &str, b_params: &str) -> String {
    format!(
        "version: 1\nkind: stack\nmeta: {{name: demo}}\ncomponents:\n- {{name: a, source: {{dir: a}}}}\n- {{name: b, source: {{dir: b}}, depends: [a]}}\nlifecycle: {{verbs: [deploy, undeploy], order: [a, b]}}\nparameters:\n- {{name: dns.domain, value: example.com}}\n{}---\nversion: 1\nkind: component\nmeta: {{name: a, kind: a, origin: a}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n{}outputs:\n- {{name: host, fromTfVar: host}}\n---\nversion: 1\nkind: component\nmeta: {{name: b, kind: b, origin: b}}\nparameters:\n- {{name: host, env: HOST}}\n{}outputs:\n- {{name: url, value: \"https://${{host}}\"}}\n",
        lines(stack_params),
        lines(a_params),
        lines(b_params)
    )
}

fn lines(items: &str) -> String {
    items
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("- {}\n", l.trim()))
        .collect()
}

/// `hub params` on `elaborate` text; returns the printed parameters by
/// qualified name.
fn params_of(out: &crate::common::Output) -> IndexMap<String, Value> {
    out.success();
    let docs = out.stdout_documents();
    let mut by_name = IndexMap::new();
    for p in docs[0]
        .get("parameters")
        .and_then(Value::as_sequence)
        .expect("parameters")
    {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let key = match p.get("component").and_then(Value::as_str) {
            Some(c) => format!("{name}|{c}"),
            None => name.to_string(),
        };
        by_name.insert(key, p.clone());
    }
    by_name
}

fn value_of(params: &IndexMap<String, Value>, name: &str) -> Value {
    params
        .get(name)
        .and_then(|p| p.get("value"))
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {params:?}"))
}

fn from_of(params: &IndexMap<String, Value>, name: &str) -> String {
    params
        .get(name)
        .and_then(|p| p.get("from"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn run_params(elaborate: &str, args: &[&str]) -> crate::common::Output {
    let mut all = vec!["params", "hub.yaml.elaborate"];
    all.extend_from_slice(args);
    Test::new()
        .file("hub.yaml.elaborate", elaborate)
        .args(&all)
        .run()
}

// ---------------------------------------------------------------- §14 cases

#[test]
fn deploy_case_03_implicit_parameters() {
    let out = run_params(&f0("", "", ""), &[]);
    let params = params_of(&out);
    let id = value_of(&params, "hub.deploymentId");
    let id = id.as_str().expect("id is text");
    let uuid =
        regex::Regex::new("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
            .unwrap();
    assert!(uuid.is_match(id), "{id}");
    assert_eq!(
        params["hub.deploymentId"].get("env"),
        Some(&yaml("DEPLOYMENT_ID"))
    );
    assert_eq!(value_of(&params, "hub.stackName"), yaml("demo"));
    assert_eq!(
        params["hub.stackName"].get("env"),
        Some(&yaml("STACK_NAME"))
    );

    let out = run_params(&f0("", "", ""), &["-c", "a"]);
    out.success();
    let doc = &out.stdout_documents()[0];
    let list = doc.get("parameters").and_then(Value::as_sequence).unwrap();
    assert_eq!(list[0].get("name"), Some(&yaml("hub.componentName")));
    assert_eq!(list[0].get("value"), Some(&yaml("a")));
    let last = list.last().unwrap();
    assert_eq!(last.get("name"), Some(&yaml("hub.provides")));
    assert_eq!(last.get("env"), Some(&yaml("HUB_PROVIDES")));
}

#[test]
fn deploy_case_04_deployment_id_kept_from_state() {
    let state = "version: 1\nkind: state\nstackParameters:\n- {name: hub.deploymentId, value: 3f2a6c1e-0000-4000-8000-000000000001, env: DEPLOYMENT_ID}\n";
    let out = Test::new()
        .file("hub.yaml.elaborate", &f0("", "", ""))
        .file("hub.yaml.state", state)
        .args(&["params", "hub.yaml.elaborate", "-s", "hub.yaml.state"])
        .run();
    let params = params_of(&out);
    assert_eq!(
        value_of(&params, "hub.deploymentId"),
        yaml("3f2a6c1e-0000-4000-8000-000000000001")
    );
}

#[test]
fn deploy_case_05_expressions() {
    let stack = r##"
        {name: dns.name, value: demo}
        {name: later, value: "${dns.domain}/x"}
        {name: dns.domain, value: "${dns.name}.example.com"}
        {name: n, value: "#{1 + 2}"}
        {name: t, value: "#{dns.name == 'demo'}"}
    "##;
    let params = params_of(&run_params(&f1(stack, ""), &[]));
    assert_eq!(value_of(&params, "dns.domain"), yaml("demo.example.com"));
    assert_eq!(value_of(&params, "n"), yaml("'3'"));
    assert_eq!(value_of(&params, "t"), yaml("'true'"));
    assert_eq!(value_of(&params, "later"), yaml("demo.example.com/x"));
    assert_eq!(
        params["dns.domain"].get("expression"),
        Some(&yaml("'${dns.name}.example.com'"))
    );
}

#[test]
fn deploy_case_06_from_env_precedence() {
    let stack = "{name: region, kind: user, fromEnv: REGION, default: us-east-1}";
    let t = || Test::new().file("hub.yaml.elaborate", &f1(stack, ""));
    let base = ["params", "hub.yaml.elaborate"];
    // (a) nothing set: the default
    let params = params_of(&t().args(&base).run());
    assert_eq!(value_of(&params, "region"), yaml("us-east-1"));
    assert_eq!(from_of(&params, "region"), "default");
    // (b) the OS environment
    let params = params_of(&t().args(&base).env("REGION", "eu-west-1").run());
    assert_eq!(value_of(&params, "region"), yaml("eu-west-1"));
    assert_eq!(from_of(&params, "region"), "fromEnv REGION (environment)");
    // (c) -e wins over the OS environment; an `-e` value is the
    // runner's, shown only with `--reveal`
    let params = params_of(
        &t().args(&base)
            .args(&["-e", "REGION=ap-south-1", "--reveal"])
            .env("REGION", "eu-west-1")
            .run(),
    );
    assert_eq!(value_of(&params, "region"), yaml("ap-south-1"));
    assert_eq!(from_of(&params, "region"), "fromEnv REGION (-e)");
    let masked = params_of(
        &t().args(&base)
            .args(&["-e", "REGION=ap-south-1"])
            .env("REGION", "eu-west-1")
            .run(),
    );
    assert_eq!(value_of(&masked, "region"), yaml("(masked)"));
    assert_eq!(from_of(&params, "region"), "fromEnv REGION (-e)");
    // (d) a value beats fromEnv
    let with_value =
        "{name: region, kind: user, fromEnv: REGION, default: us-east-1, value: fixed}";
    let out = Test::new()
        .file("hub.yaml.elaborate", &f1(with_value, ""))
        .args(&base)
        .env("REGION", "eu-west-1")
        .run();
    assert_eq!(value_of(&params_of(&out), "region"), yaml("fixed"));
    // (e) set but empty counts as found
    let params = params_of(&t().args(&base).env("REGION", "").run());
    assert_eq!(value_of(&params, "region"), yaml("''"));
}

#[test]
fn deploy_case_07_missing_user_parameters_reported_together() {
    let stack = "{name: p1, kind: user}\n{name: p2, kind: user, brief: Second, fromEnv: P2}";
    let out = run_params(&f1(stack, ""), &[]);
    out.failure()
        .stderr_has("p1")
        .stderr_has("p2")
        .stderr_has("Second")
        .stderr_has("-e P2=");
    assert_eq!(out.status, 1);
    assert!(out.stdout.is_empty(), "nothing printed: {}", out.stdout);
    assert_eq!(
        out.stderr.matches("error:").count(),
        1,
        "one message:\n{}",
        out.stderr
    );
}

#[test]
fn deploy_case_08_empty_allow() {
    let stack = "{name: opt, kind: user, empty: allow}";
    let params = params_of(&run_params(&f1(stack, "{name: opt, env: OPT}"), &[]));
    assert_eq!(value_of(&params, "opt"), yaml("''"));
    assert_eq!(from_of(&params, "opt"), "empty: allow");
    let out = run_params(&f1(stack, "{name: opt, env: OPT}"), &["-c", "c"]);
    let params = params_of(&out);
    assert_eq!(value_of(&params, "opt"), yaml("''"));
}

#[test]
fn deploy_case_09_non_user_default_ignored_and_empty_satisfies() {
    let elaborate = f1("{name: x, default: d}", "{name: x, env: X}");
    let out = run_params(&elaborate, &[]);
    out.stderr_has("`x`").stderr_has("default");
    assert_eq!(value_of(&params_of(&out), "x"), Value::Null);
    let params = params_of(&run_params(&elaborate, &["-c", "c"]));
    assert_eq!(value_of(&params, "x"), Value::Null);
}

#[test]
fn deploy_case_10_from_file() {
    let stack = "{name: pw, kind: user, fromFile: pw.txt}";
    let t = |stack: &str| {
        Test::new()
            .file("hub.yaml.elaborate", &f1(stack, "{name: pw, env: PW}"))
            .bytes("pw.txt", b"s3cr3t\n")
    };
    let out = t(stack)
        .args(&["params", "hub.yaml.elaborate", "--reveal"])
        .run();
    let params = params_of(&out);
    assert_eq!(value_of(&params, "pw"), Value::String("s3cr3t\n".into()));
    assert_eq!(from_of(&params, "pw"), "fromFile pw.txt");
    // the path from the environment, or from -e
    let by_var = "{name: pw, kind: user, fromFile: $PWFILE}";
    let out = t(by_var)
        .args(&["params", "hub.yaml.elaborate"])
        .env("PWFILE", "pw.txt")
        .run();
    assert_eq!(
        value_of(&params_of(&out), "pw"),
        Value::String("s3cr3t\n".into())
    );
    let out = t(by_var)
        .args(&["params", "hub.yaml.elaborate", "-e", "PWFILE=pw.txt"])
        .run();
    assert_eq!(
        value_of(&params_of(&out), "pw"),
        Value::String("s3cr3t\n".into())
    );
    // an unreadable file
    let out = t("{name: pw, kind: user, fromFile: missing.txt}")
        .args(&["params", "hub.yaml.elaborate"])
        .run();
    out.failure().stderr_has("missing.txt");
}

#[test]
fn deploy_case_11_unknown_references_reported_together() {
    let out = run_params(
        &f1(
            "{name: a, value: \"${nope}.${also.nope}\"}\n{name: b, value: \"${gone}\"}",
            "",
        ),
        &[],
    );
    out.failure()
        .stderr_has("`nope`")
        .stderr_has("`also.nope`")
        .stderr_has("`gone`");
    out.stderr_has("`a` references unknown")
        .stderr_has("`b` references unknown");
    assert!(!out.stderr.contains("(unknown)"), "{}", out.stderr);
}

#[test]
fn deploy_case_12_cycle() {
    let out = run_params(
        &f1(
            "{name: a, value: \"x${b}\"}\n{name: b, value: \"y${a}\"}",
            "",
        ),
        &[],
    );
    out.failure().stderr_has("cycle").stderr_has("a → b → a");
    // where each member was declared: lines of the stack's parameters
    out.stderr_has("`a` declared at hub.yaml.elaborate:7")
        .stderr_has("`b` declared at hub.yaml.elaborate:8");
    assert!(!out.stderr.contains("(loop)"), "{}", out.stderr);
}

#[test]
fn deploy_case_12_every_cycle_reported() {
    let stack = "{name: a, value: \"${b}\"}\n{name: b, value: \"${a}\"}\n{name: c, value: \"#{d}\"}\n{name: d, value: \"${e}\"}\n{name: e, value: \"${c}\"}\n{name: s, value: \"${s}\"}\n{name: ok, value: fine}";
    let out = run_params(&f1(stack, ""), &[]);
    out.failure()
        .stderr_has("a → b → a")
        .stderr_has("c → d → e → c")
        .stderr_has("s → s");
    assert_eq!(
        out.stderr.matches("reference cycle").count(),
        3,
        "{}",
        out.stderr
    );
}

#[test]
fn deploy_case_13_long_acyclic_chain() {
    let mut stack = String::new();
    for i in 0..12 {
        stack.push_str(&format!("{{name: p{i}, value: \"${{p{}}}\"}}\n", i + 1));
    }
    stack.push_str("{name: p12, value: end}\n");
    let params = params_of(&run_params(&f1(&stack, ""), &[]));
    for i in 0..=12 {
        assert_eq!(value_of(&params, &format!("p{i}")), yaml("end"), "p{i}");
    }
}

#[test]
fn deploy_case_13_ten_thousand_long_chain() {
    let count = 10_000;
    let mut stack = String::new();
    for i in 0..count {
        stack.push_str(&format!("{{name: p{i}, value: \"${{p{}}}\"}}\n", i + 1));
    }
    stack.push_str(&format!("{{name: p{count}, value: end}}\n"));
    let params = params_of(&run_params(&f1(&stack, ""), &[]));
    assert_eq!(value_of(&params, "p0"), yaml("end"));
    assert_eq!(value_of(&params, &format!("p{}", count - 1)), yaml("end"));
}

#[test]
fn deploy_case_14_component_qualified_parameters() {
    let elaborate = f0(
        "{name: x, value: plain}\n{name: x, component: a, value: qual}",
        "{name: x, env: X}",
        "{name: x, env: X}",
    );
    let params = params_of(&run_params(&elaborate, &[]));
    assert_eq!(value_of(&params, "x|a"), yaml("qual"));
    assert_eq!(value_of(&params, "x"), yaml("plain"));
    let a = params_of(&run_params(&elaborate, &["-c", "a"]));
    assert_eq!(value_of(&a, "x"), yaml("qual"));
    let state = "version: 1\nkind: state\nlifecycle: {order: [a, b]}\ncomponents:\n  a:\n    capturedOutputs:\n    - {component: a, name: host, value: a.example.com, componentKind: a}\n";
    let out = Test::new()
        .file("hub.yaml.elaborate", &elaborate)
        .file("hub.yaml.state", state)
        .args(&[
            "params",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
            "-c",
            "b",
        ])
        .run();
    assert_eq!(value_of(&params_of(&out), "x"), yaml("plain"));
}

#[test]
fn deploy_case_15_link_kept_until_component_scope() {
    let elaborate = f0(
        "{name: img, kind: link, value: \"${a:host}\"}",
        "",
        "{name: img, env: IMG}",
    );
    let params = params_of(&run_params(&elaborate, &[]));
    assert_eq!(value_of(&params, "img"), yaml("'${a:host}'"));
    let state = "version: 1\nkind: state\nlifecycle: {order: [a, b]}\ncomponents:\n  a:\n    capturedOutputs:\n    - {component: a, name: host, value: a.example.com, componentKind: a}\n";
    let out = Test::new()
        .file("hub.yaml.elaborate", &elaborate)
        .file("hub.yaml.state", state)
        .args(&[
            "params",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
            "-c",
            "b",
        ])
        .run();
    let b = params_of(&out);
    assert_eq!(value_of(&b, "img"), yaml("a.example.com"));
    assert_eq!(value_of(&b, "host"), yaml("a.example.com"));
    assert_eq!(from_of(&b, "host"), "output a:host");
}

#[test]
fn deploy_case_16_component_value_is_a_fallback() {
    let params = params_of(&run_params(
        &f1("", "{name: mode, value: slow, env: MODE}"),
        &["-c", "c"],
    ));
    assert_eq!(value_of(&params, "mode"), yaml("slow"));
    let params = params_of(&run_params(
        &f1(
            "{name: mode, value: fast}",
            "{name: mode, value: slow, env: MODE}",
        ),
        &["-c", "c"],
    ));
    assert_eq!(value_of(&params, "mode"), yaml("fast"));
}

#[test]
fn deploy_case_17_defaults_empty_and_underivable() {
    let component = "{name: d, default: dv, env: D}\n{name: e, empty: allow, env: E}";
    let params = params_of(&run_params(&f1("", component), &["-c", "c"]));
    assert_eq!(value_of(&params, "d"), yaml("dv"));
    assert_eq!(value_of(&params, "e"), yaml("''"));
    let out = run_params(&f1("", &format!("{component}\n{{name: m}}")), &["-c", "c"]);
    out.failure().stderr_has("`m|c`");
}

#[test]
fn deploy_case_18_top_to_bottom_references() {
    let params = params_of(&run_params(
        &f1(
            "",
            "{name: p1, value: v1}\n{name: p2, value: \"${p1}-x\", env: P2}",
        ),
        &["-c", "c"],
    ));
    assert_eq!(value_of(&params, "p2"), yaml("v1-x"));
    let out = run_params(
        &f1(
            "",
            "{name: p2, value: \"${p1}-x\", env: P2}\n{name: p1, value: v1}",
        ),
        &["-c", "c"],
    );
    out.failure().stderr_has("`p1`");
}

#[test]
fn deploy_case_38_value_outputs() {
    use hub_manifest::Output;
    use hub_params::{expand_outputs, ExpandedParam, Origin};
    let param = |name: &str, value: &str| ExpandedParam {
        name: name.into(),
        value: Some(Value::String(value.into())),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    };
    let params = vec![
        param("hub.componentName", "c"),
        param("dns.domain", "example.com"),
    ];
    let output = |name: &str, value: Option<Value>| Output {
        name: name.into(),
        value,
        ..Output::default()
    };
    let outputs = vec![
        output("dns.domain", None),
        output(
            "url",
            Some(yaml("'https://${dns.domain}/${hub.componentName}'")),
        ),
        output("url2", Some(yaml("'${url}/x'"))),
        output("n", Some(yaml("5"))),
    ];
    let got = expand_outputs("c", &params, &outputs, &IndexMap::new(), Default::default())
        .expect("outputs");
    let values: Vec<Value> = got
        .iter()
        .map(|o| o.value.clone().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        values,
        vec![
            yaml("example.com"),
            yaml("https://example.com/c"),
            yaml("https://example.com/c/x"),
            yaml("5")
        ]
    );
    let mut bad = outputs.clone();
    bad.push(output("bad", Some(yaml("'${nope}'"))));
    let error = expand_outputs("c", &params, &bad, &IndexMap::new(), Default::default())
        .expect_err("unknown reference");
    assert!(error.to_string().contains("`nope`"), "{error}");
}

#[test]
fn deploy_case_75_secrets_masked_unless_revealed() {
    let elaborate = f1(
        "{name: db.password, value: hunter2}\n{name: dsn, value: \"u:${db.password}@h\"}",
        "{name: db.password, env: DB_PASSWORD}",
    );
    let out = run_params(&elaborate, &[]);
    let params = params_of(&out);
    assert_eq!(value_of(&params, "db.password"), yaml("(masked)"));
    assert_eq!(value_of(&params, "dsn"), yaml("(masked)"));
    assert!(!out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"));
    let out = run_params(&elaborate, &["-c", "c"]);
    assert!(!out.stdout.contains("hunter2"), "{}", out.stdout);
    let params = params_of(&run_params(&elaborate, &["--reveal"]));
    assert_eq!(value_of(&params, "dsn"), yaml("u:hunter2@h"));
}

// ---------------------------------------------------------------- hub params

#[test]
fn params_json_format() {
    let out = run_params(
        &f1("{name: a, value: \"#{1.5 + 1.0}\"}", ""),
        &["--format", "json"],
    );
    out.success();
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let a = json["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "a")
        .unwrap();
    assert_eq!(a["value"], "2.5");
    assert_eq!(a["from"], "expression");
}

#[test]
fn params_state_fills_user_parameters_before_failing() {
    let state = "version: 1\nkind: state\nstackParameters:\n- {name: token.value, value: T}\n- {name: legacy.flag, value: 'on'}\n";
    let out = Test::new()
        .file(
            "hub.yaml.elaborate",
            &f1("{name: token.value, kind: user}", ""),
        )
        .file("hub.yaml.state", state)
        .args(&["params", "hub.yaml.elaborate", "-s", "hub.yaml.state"])
        .run();
    let params = params_of(&out);
    assert_eq!(value_of(&params, "token.value"), yaml("T"));
    assert_eq!(from_of(&params, "token.value"), "state");
    assert_eq!(value_of(&params, "legacy.flag"), yaml("'on'"));
}

#[test]
fn params_unknown_component() {
    let out = run_params(&f1("", ""), &["-c", "nope"]);
    out.failure()
        .stderr_has("`nope`")
        .stderr_has("components: c");
}

#[test]
fn deploy_case_66_merge_of_stack_parameters() {
    let stack = "{name: app.color, value: blue}\n{name: api.token, kind: user, empty: allow}";
    let state = "version: 1\nkind: state\nstackParameters:\n- {name: api.token, value: T}\n- {name: app.color, value: red}\n- {name: dns.domain, value: example.com}\n- {name: extra, value: 1}\n";
    let out = Test::new()
        .file("hub.yaml.elaborate", &f0(stack, "", ""))
        .file("hub.yaml.state", state)
        .args(&[
            "params",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
            "--reveal",
        ])
        .run();
    let params = params_of(&out);
    assert_eq!(value_of(&params, "extra"), yaml("1"));
    assert_eq!(from_of(&params, "extra"), "state");
    assert_eq!(value_of(&params, "app.color"), yaml("blue"));
    out.stderr_has("`app.color`").stderr_has("red");
    // The state is read before asking (a recommended change): the user
    // parameter takes the state's value without a warning.
    assert_eq!(value_of(&params, "api.token"), yaml("T"));
    assert_eq!(from_of(&params, "api.token"), "state");
}

#[test]
fn params_state_must_be_a_state() {
    let out = Test::new()
        .file("hub.yaml.elaborate", &f1("", ""))
        .file("bad.state", "version: 1\nkind: foo\n")
        .args(&["params", "hub.yaml.elaborate", "-s", "bad.state"])
        .run();
    out.failure()
        .stderr_has("bad.state")
        .stderr_has("kind: state");
}
