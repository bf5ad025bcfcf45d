//! One test per numbered case of the elaborate specification (§17).
//!
//! Cases marked `[rec]` in the specification check the recommended
//! behaviour. Where the project decided to deviate from a case (plain output
//! by default, `lifecycle.order` derived from `depends`), the test says so.

use crate::common::*;
use yaml_serde::Value;

const STACK: &str = "version: 1\nkind: stack\nmeta: {name: s}\n";

/// A stack manifest: the usual header followed by `body`.
fn stack(body: &str) -> String {
    format!("{STACK}{}", unindent(body))
}

/// A component manifest named `name`, followed by `body`.
fn component(name: &str, body: &str) -> String {
    format!(
        "version: 1\nkind: component\nmeta: {{name: {name}}}\n{}",
        unindent(body)
    )
}

/// The documents printed on stdout by a successful run.
#[track_caller]
fn documents(out: &Output) -> Vec<Value> {
    out.success();
    out.stdout_documents()
}

/// The first document of a successful run.
#[track_caller]
fn doc1(out: &Output) -> Value {
    documents(out).into_iter().next().expect("a stack document")
}

/// `name` or `name|component` of each parameter of a stack document.
fn param_keys(doc: &Value) -> Vec<String> {
    sequence(&doc["parameters"])
        .iter()
        .map(|p| match p["component"].as_str() {
            Some(c) => format!("{}|{c}", p["name"].as_str().unwrap_or_default()),
            None => p["name"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// The parameter with key `name` or `name|component`.
#[track_caller]
fn param(doc: &Value, key: &str) -> Value {
    let keys = param_keys(doc);
    let index = keys
        .iter()
        .position(|k| k == key)
        .unwrap_or_else(|| panic!("no parameter `{key}` in {keys:?}"));
    sequence(&doc["parameters"])[index].clone()
}

fn sequence(v: &Value) -> Vec<Value> {
    v.as_sequence().cloned().unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    sequence(v)
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect()
}

fn names(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .map(|d| d["meta"]["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn list(s: &str) -> Vec<String> {
    s.split([',', ' '])
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

/// The warning lines, but those about stack parameters nothing reads
/// (the spec's examples set a few; `unread.rs` tests those warnings).
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("is set but never read"))
        .collect()
}

/// Warning lines that contain every fragment.
fn warnings_with<'a>(stderr: &'a str, fragments: &[&str]) -> Vec<&'a str> {
    warnings(stderr)
        .into_iter()
        .filter(|l| fragments.iter().all(|f| l.contains(f)))
        .collect()
}

/// Words (runs of letters, digits, `-`, `_`) of the error lines.
fn error_words(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .flat_map(|l| l.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn case_01_minimal_stack() {
    let (out, _dir) = Test::new()
        .file("hub.yaml", STACK)
        .args(&["elaborate", "hub.yaml", "-o", "out", "--compressed=false"])
        .run_keep();
    out.success();
    let bytes = std::fs::read(out.root.join("out")).expect("output written");
    assert!(bytes.starts_with(b"---\n"), "plain YAML expected");
    assert!(bytes.ends_with(b"\n"));
    assert_eq!(
        out.documents("out"),
        vec![yaml("{version: 1, kind: stack, meta: {name: s}}")]
    );
}

/// Decided deviation: plain YAML by default, gzip only with `--compressed`.
#[test]
fn case_02_default_output_plain_compressed_gzip() {
    let expected = vec![yaml("{version: 1, kind: stack, meta: {name: s}}")];
    // The default output goes to the current directory, not the manifest's.
    let (out, _dir) = Test::new()
        .file("st/hub.yaml", STACK)
        .args(&["elaborate", "st/hub.yaml"])
        .run_keep();
    out.success();
    let plain = std::fs::read(out.root.join("hub.yaml.elaborate"))
        .expect("default output in the current directory");
    assert!(
        !plain.starts_with(&[0x1f, 0x8b]),
        "default output must be plain"
    );
    assert!(!out.root.join("st/hub.yaml.elaborate").exists());
    assert_eq!(out.documents("hub.yaml.elaborate"), expected);

    for flag in ["--compressed", "--compressed=true"] {
        let (out, _dir) = Test::new()
            .file("hub.yaml", STACK)
            .args(&["elaborate", "hub.yaml", flag])
            .run_keep();
        out.success();
        let bytes = std::fs::read(out.root.join("hub.yaml.elaborate")).expect("output");
        assert!(bytes.starts_with(&[0x1f, 0x8b]), "{flag}: gzip expected");
        assert_eq!(out.documents("hub.yaml.elaborate"), expected, "{flag}");
    }
}

#[test]
fn case_03_no_arguments() {
    let (out, _dir) = Test::new().args(&["elaborate"]).run_keep();
    out.failure().stderr_has("STACK").stderr_has("required");
    assert!(!out.root.join("hub.yaml.elaborate").exists());
}

#[test]
fn case_04_missing_stack_manifest() {
    let (out, _dir) = Test::new().args(&["elaborate", "nothere.yaml"]).run_keep();
    out.failure().stderr_has("nothere.yaml");
    assert!(!out.root.join("hub.yaml.elaborate").exists());
}

#[test]
fn case_05_empty_stack_manifest() {
    let (out, _dir) = Test::new()
        .bytes("hub.yaml", b"")
        .args(&["elaborate", "hub.yaml"])
        .run_keep();
    out.failure();
    assert!(
        out.stderr.to_lowercase().contains("no yaml document"),
        "{}",
        out.stderr
    );
    assert!(!out.root.join("hub.yaml.elaborate").exists());
}

#[test]
fn case_06_t1_example() {
    let out = Test::new()
        .file(
            "hub.yaml",
            r#"
            version: 1
            kind: stack
            meta: {name: t1}
            components:
            - name: a
              source: {dir: components/a}
            - name: b
              source: {dir: components/b}
              depends: [a]
            requires: [kubernetes]
            lifecycle: {order: [a, b]}
            parameters:
            - name: dns.domain
              value: example.com
            - name: secretThing
              kind: user
              fromEnv: SECRET_THING
            "#,
        )
        .file(
            "components/a/hub-component.yaml",
            r#"
            version: 1
            kind: component
            meta: {name: comp-a, brief: Component A}
            provides: [thing-a]
            parameters:
            - name: dns.domain
              env: DOMAIN
            - name: component.a
              parameters:
              - {name: size, value: small}
              - {name: password, kind: user}
            outputs:
            - name: component.a.url
            - name: component.a.apiKey
            "#,
        )
        .file(
            "components/b/hub-component.yaml",
            r#"
            version: 1
            kind: component
            meta: {name: comp-b}
            requires: [thing-a, vault]
            lifecycle: {verbs: [deploy, undeploy, backup]}
            parameters:
            - name: dns.domain
            "#,
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let expected = vec![
        yaml(
            r#"
            version: 1
            kind: stack
            meta: {name: t1}
            components:
            - name: a
              source: {dir: components/a}
            - name: b
              source: {dir: components/b}
              depends: [a]
            requires: [kubernetes, vault]
            provides: [thing-a]
            lifecycle: {order: [a, b]}
            parameters:
            - {name: component.a.password, component: a, kind: user}
            - {name: dns.domain, value: example.com}
            - {name: secretThing, kind: user, fromEnv: SECRET_THING}
            "#,
        ),
        yaml(
            r#"
            version: 1
            kind: component
            meta: {name: a, origin: comp-a, kind: comp-a, brief: Component A}
            provides: [thing-a]
            lifecycle: {verbs: [deploy, undeploy]}
            outputs:
            - {name: component.a.url}
            - {name: component.a.apiKey, kind: secret}
            parameters:
            - {name: dns.domain, component: a, env: DOMAIN}
            - name: component.a
              component: a
              parameters:
              - {name: size, value: small}
              - {name: password, kind: user}
            "#,
        ),
        yaml(
            r#"
            version: 1
            kind: component
            meta: {name: b, origin: comp-b, kind: comp-b}
            requires: [thing-a, vault]
            lifecycle: {verbs: [deploy, undeploy, backup]}
            parameters:
            - {name: dns.domain, component: b}
            "#,
        ),
    ];
    assert_eq!(documents(&out), expected);
    let missing = warnings_with(&out.stderr, &["no value"]);
    assert_eq!(missing.len(), 1, "{}", out.stderr);
    assert!(
        missing[0].contains("component.a.password|a"),
        "{}",
        missing[0]
    );
}

#[test]
fn case_07_missing_component_manifest() {
    let (out, _dir) = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: x, source: {dir: c/x}}\nlifecycle: {order: [x]}\n"),
        )
        .args(&["elaborate", "hub.yaml"])
        .run_keep();
    out.failure()
        .stderr_has("`x`")
        .stderr_has("c/x/hub-component.yaml");
    assert!(!out.root.join("hub.yaml.elaborate").exists());
}

#[test]
fn case_08_duplicate_component_names() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                "components:\n- {name: a, source: {dir: c/a}}\n- {name: a, source: {dir: c/b}}\nlifecycle: {order: [a, a]}\n",
            ),
        )
        .file("c/a/hub-component.yaml", &component("a", ""))
        .file("c/b/hub-component.yaml", &component("b", ""))
        .args(&["elaborate", "hub.yaml"])
        .run();
    out.failure().stderr_has("`a`");
    assert!(
        out.stderr
            .to_lowercase()
            .contains("duplicate component name"),
        "{}",
        out.stderr
    );
}

#[test]
fn case_09_no_source() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: x}\nlifecycle: {order: [x]}\n"),
        )
        .args(&["elaborate", "hub.yaml"])
        .run();
    out.failure().stderr_has("`x`").stderr_has("no source");
}

/// Decided deviation: a missing `lifecycle.order` is derived from `depends`,
/// so only an order that is given but does not match is an error.
#[test]
fn case_10_order_mismatch() {
    for order in ["[a, b]", "[b]", "[a, a]"] {
        let out = Test::new()
            .file("hub.yaml", &stack(&format!("components:\n- {{name: a, source: {{dir: c/a}}}}\nlifecycle: {{order: {order}}}\n")))
            .file("c/a/hub-component.yaml", &component("a", ""))
            .args(&["elaborate", "hub.yaml", "-o", "-"])
            .run();
        out.failure();
        assert!(
            out.stderr.contains("does not match"),
            "order {order}: {}",
            out.stderr
        );
    }
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: a, source: {dir: c/a}}\n"),
        )
        .file("c/a/hub-component.yaml", &component("a", ""))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(strings(&doc1(&out)["lifecycle"]["order"]), list("a"));
}

fn depends_stack(spec: &[(&str, &str)]) -> Test {
    let mut refs = String::from("components:\n");
    let mut t = Test::new();
    for (name, depends) in spec {
        refs.push_str(&format!(
            "- {{name: {name}, source: {{dir: c/{name}}}, depends: [{depends}]}}\n"
        ));
        t = t.file(
            &format!("c/{name}/hub-component.yaml"),
            &component(name, ""),
        );
    }
    t.file("hub.yaml", &stack(&refs))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
}

#[test]
fn case_11_order_generation() {
    let out = depends_stack(&[("a", "b, c"), ("b", "c"), ("c", "")]).run();
    assert_eq!(strings(&doc1(&out)["lifecycle"]["order"]), list("c b a"));
}

#[test]
fn case_12_order_generation_errors() {
    let out = depends_stack(&[("a", "zz")]).run();
    out.failure();
    assert!(
        error_words(&out.stderr).contains(&"zz".to_string()),
        "{}",
        out.stderr
    );

    for spec in [
        vec![("a", "b"), ("b", "a")],
        vec![("a", "b"), ("b", "c"), ("c", "a")],
    ] {
        let out = depends_stack(&spec).run();
        out.failure().stderr_has("cycle");
        let words = error_words(&out.stderr);
        for (name, _) in &spec {
            assert!(
                words.contains(&name.to_string()),
                "cycle {spec:?} should name `{name}`: {}",
                out.stderr
            );
        }
    }
}

#[test]
fn case_13_source_resolution() {
    let manifest = stack(
        r#"
        components:
        - name: mysql
          source: {dir: components/mysql}
        - name: gitcomp
          source: {git: {remote: "https://example.com/r.git", subDir: sub}}
        - name: local
          source: {git: {remote: "https://example.com/r.git", localDir: localdir, subDir: sub2}}
        lifecycle: {order: [mysql, gitcomp, local]}
        "#,
    );
    let origins = |docs: &[Value]| -> Vec<String> {
        docs[1..]
            .iter()
            .map(|d| d["meta"]["origin"].as_str().unwrap_or_default().to_string())
            .collect()
    };

    // Only the files that must be read exist; any other lookup fails the run.
    let out = Test::new()
        .file("stack/.hub/hub.yaml", &manifest)
        .file(
            "stack/components/mysql/hub-component.yaml",
            &component("stack-components-mysql", ""),
        )
        .file(
            "stack/gitcomp/sub/hub-component.yaml",
            &component("stack-gitcomp-sub", ""),
        )
        .file(
            "stack/localdir/sub2/hub-component.yaml",
            &component("stack-localdir-sub2", ""),
        )
        .cwd("stack")
        .args(&["elaborate", ".hub/hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        origins(&documents(&out)),
        list("stack-components-mysql stack-gitcomp-sub stack-localdir-sub2")
    );

    // With -b, `dir` is still relative to the stack; git checkouts (and a
    // relative `localDir`, §5.2 step 2) are relative to -b.
    let out = Test::new()
        .file("stack/.hub/hub.yaml", &manifest)
        .file(
            "stack/components/mysql/hub-component.yaml",
            &component("stack-components-mysql", ""),
        )
        .file(
            "bd/gitcomp/sub/hub-component.yaml",
            &component("bd-gitcomp-sub", ""),
        )
        .file(
            "bd/localdir/sub2/hub-component.yaml",
            &component("bd-localdir-sub2", ""),
        )
        .cwd("stack")
        .args(&["elaborate", ".hub/hub.yaml", "-b", "../bd", "-o", "-"])
        .run();
    assert_eq!(
        origins(&documents(&out)),
        list("stack-components-mysql bd-gitcomp-sub bd-localdir-sub2")
    );
}

#[test]
fn case_14_same_source_twice() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                components:
                - {name: mysql-one, source: {dir: components/mysql}}
                - {name: mysql-two, source: {dir: components/mysql}}
                lifecycle: {order: [mysql-one, mysql-two]}
                "#,
            ),
        )
        .file(
            "components/mysql/hub-component.yaml",
            &component(
                "mysql",
                "parameters:\n- {name: component.mysql.password, kind: user}\n",
            ),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(names(&docs[1..]), list("mysql-one mysql-two"));
    for doc in &docs[1..] {
        assert_eq!(doc["meta"]["origin"], yaml("mysql"));
        assert_eq!(doc["meta"]["kind"], yaml("mysql"));
    }
    let keys = param_keys(&docs[0]);
    assert!(
        keys.contains(&"component.mysql.password|mysql-one".to_string()),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"component.mysql.password|mysql-two".to_string()),
        "{keys:?}"
    );
}

#[test]
fn case_15_explicit_origin_preserved() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: z, source: {dir: c/x}}\nlifecycle: {order: [z]}\n"),
        )
        .file(
            "c/x/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: x, origin: y}\n",
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        documents(&out)[1]["meta"],
        yaml("{name: z, origin: y, kind: x}")
    );
}

#[test]
fn case_16_component_documents_ignore_order() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: a, source: {dir: c/a}}\n- {name: b, source: {dir: c/b}}\nlifecycle: {order: [b, a]}\n"),
        )
        .file("c/a/hub-component.yaml", &component("a", "provides: [thing-a]\n"))
        .file("c/b/hub-component.yaml", &component("b", "requires: [thing-a]\n"))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(names(&docs[1..]), list("a b"));
    // `b` is deployed before `a`, so what `a` provides comes too late for it.
    assert_eq!(strings(&docs[0]["requires"]), list("thing-a"));
    assert_eq!(strings(&docs[0]["provides"]), list("thing-a"));
}

#[test]
fn case_17_seed_example() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: auth-service, source: {dir: components/auth-service}}\nlifecycle: {order: [auth-service]}\n"),
        )
        .file(
            "components/auth-service/hub-component.yaml",
            &component(
                "auth-service",
                r#"
                parameters:
                - name: component.auth-service.authApiSecret
                  kind: user
                  env: AUTH_API_SECRET
                "#,
            ),
        )
        .file(
            "params.yaml",
            "parameters:\n- name: component.auth-service.authApiSecret\n  fromEnv: AUTH_API_SECRET\n",
        )
        .args(&["elaborate", "hub.yaml", "params.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(
        docs[0]["parameters"],
        yaml(
            r#"
            - name: component.auth-service.authApiSecret
              kind: user
              fromEnv: AUTH_API_SECRET
            - name: component.auth-service.authApiSecret
              component: auth-service
              kind: user
              fromEnv: AUTH_API_SECRET
            "#
        )
    );
    assert_eq!(
        docs[1]["parameters"],
        yaml("- {name: component.auth-service.authApiSecret, component: auth-service, kind: user, env: AUTH_API_SECRET}")
    );
    assert!(warnings(&out.stderr).is_empty(), "{}", out.stderr);
}

#[test]
fn case_18_kind_merge() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                parameters:
                - {name: p, kind: tech, value: 1}
                - {name: p, kind: user, brief: b}
                - {name: q, kind: user}
                - {name: q, kind: tech, value: 2}
                "#,
            ),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml("[{name: p, kind: user, brief: b, value: 1}, {name: q, kind: user, value: 2}]")
    );
}

#[test]
fn case_19_tech_component_params_not_promoted() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: c, source: {dir: c}}\nlifecycle: {order: [c]}\nparameters:\n- {name: t, value: 9}\n"),
        )
        .file("c/hub-component.yaml", &component("c", "parameters:\n- {name: t, kind: tech, value: 1}\n- {name: u, value: 2}\n"))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(doc1(&out)["parameters"], yaml("[{name: t, value: 9}]"));
}

#[test]
fn case_20_from_env_on_component_promotes() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: c, source: {dir: c}}\nlifecycle: {order: [c]}\n"),
        )
        .file(
            "c/hub-component.yaml",
            &component("c", "parameters:\n- {name: fe, fromEnv: X}\n"),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(
        docs[0]["parameters"],
        yaml("[{name: fe, component: c, kind: user, fromEnv: X}]")
    );
    assert_eq!(
        docs[1]["parameters"],
        yaml("[{name: fe, component: c, fromEnv: X}]")
    );
    assert_eq!(
        warnings_with(&out.stderr, &["fe", "fromEnv"]).len(),
        1,
        "{}",
        out.stderr
    );
}

/// [rec]: `-e` gives a value to every parameter with that `fromEnv`.
#[test]
fn case_21_environment_overrides() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                parameters:
                - {name: single, fromEnv: OVR}
                - {name: twice, fromEnv: OVR}
                - {name: twice, brief: m}
                "#,
            ),
        )
        .args(&["elaborate", "hub.yaml", "-e", "OVR=v", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml(
            r#"
            - {name: single, kind: user, fromEnv: OVR, value: v}
            - {name: twice, kind: user, brief: m, fromEnv: OVR, value: v}
            "#
        )
    );
}

#[test]
fn case_22_unqualified_overwrites_qualified() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                components:
                - {name: a, source: {dir: c/a}}
                - {name: b, source: {dir: c/b}}
                lifecycle: {order: [a, b]}
                parameters:
                - {name: u1, value: top}
                "#,
            ),
        )
        .file(
            "c/a/hub-component.yaml",
            &component("a", "parameters:\n- {name: u1, kind: user, default: da}\n"),
        )
        .file(
            "c/b/hub-component.yaml",
            &component("b", "parameters:\n- {name: u1, kind: user, value: vb}\n"),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml(
            r#"
            - {name: u1, value: top}
            - {name: u1, component: a, kind: user, default: da, value: top}
            - {name: u1, component: b, kind: user, value: top}
            "#
        )
    );
    let overwritten = warnings_with(&out.stderr, &["u1|"]);
    assert_eq!(overwritten.len(), 1, "{}", out.stderr);
    for fragment in ["u1|b", "vb", "top"] {
        assert!(
            overwritten[0].contains(fragment),
            "{fragment}: {}",
            overwritten[0]
        );
    }
}

#[test]
fn case_23_qualified_does_not_inherit_unqualified() {
    let t = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                components:
                - {name: a, source: {dir: c/a}}
                lifecycle: {order: [a]}
                parameters:
                - {name: x, value: 1}
                - {name: x, component: a, value: 2}
                "#,
            ),
        )
        .file("c/a/hub-component.yaml", &component("a", ""))
        .file("params.yaml", "parameters:\n- {name: x, value: 3}\n")
        .args(&["elaborate", "hub.yaml", "-o", "-"]);
    let out = t.run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml("[{name: x, value: 1}, {name: x, component: a, value: 2}]")
    );

    let out = t.args(&["params.yaml"]).run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml("[{name: x, value: 3}, {name: x, component: a, value: 3}]")
    );
    let overwritten = warnings_with(&out.stderr, &["x|a"]);
    assert_eq!(overwritten.len(), 1, "{}", out.stderr);
    assert!(
        overwritten[0].contains('2') && overwritten[0].contains('3'),
        "{}",
        overwritten[0]
    );
}

/// A leaf declared once keeps `empty: allow` next to its value: only a merge
/// clears it (§9.4, observed in §9.8).
#[test]
fn case_24_flattening() {
    let group = r#"
        parameters:
        - name: grp
          kind: user
          empty: allow
          brief: dropped
          value: dropped
          parameters:
          - name: x
          - name: y
            kind: tech
          - name: deep
            parameters:
            - name: z
              value: 1
        "#;
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                components:
                - {name: a, source: {dir: c/a}}
                lifecycle: {order: [a]}
                parameters:
                - {name: k8s, component: a, parameters: [{name: api.endpoint, value: e}]}
                "#,
            ),
        )
        .file("c/a/hub-component.yaml", &component("a", group))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(
        docs[0]["parameters"],
        yaml(
            r#"
            - {name: grp.deep.z, component: a, kind: user, value: 1, empty: allow}
            - {name: grp.x, component: a, kind: user, empty: allow}
            - {name: k8s.api.endpoint, component: a, value: e}
            "#
        )
    );
    // The component document keeps the nested form.
    let mut nested = yaml(group)["parameters"].clone();
    nested[0]["component"] = yaml("a");
    assert_eq!(docs[1]["parameters"], nested);
}

#[test]
fn case_25_emptiness() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                parameters:
                - {name: a, value: "x"}
                - {name: a, value: ""}
                - {name: b, value: "x"}
                - {name: b, value: false}
                - {name: c, value: 0}
                - {name: c}
                - {name: d, value: ""}
                - {name: e}
                "#,
            ),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["parameters"],
        yaml(
            r#"
            - {name: a, value: "x"}
            - {name: b, value: false}
            - {name: c, value: 0}
            - {name: d, value: ""}
            - {name: e}
            "#
        )
    );
    assert!(
        warnings_with(&out.stderr, &["`d`"]).is_empty(),
        "{}",
        out.stderr
    );
    assert_eq!(
        warnings_with(&out.stderr, &["`e`", "no value"]).len(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn case_26_empty_cleared() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("parameters:\n- {name: emp, empty: allow}\n- {name: emp, value: v}\n"),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(doc1(&out)["parameters"], yaml("[{name: emp, value: v}]"));
}

#[test]
fn case_27_env_stripped_at_top_level() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("parameters:\n- {name: p, value: 1, env: P}\n"),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(doc1(&out)["parameters"], yaml("[{name: p, value: 1}]"));
    assert_eq!(
        warnings_with(&out.stderr, &["env: P"]).len(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn case_28_sorting() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                components:
                - {name: c, source: {dir: c}}
                lifecycle: {order: [c]}
                parameters:
                - {name: a.bc, value: 1}
                - {name: a.b, value: 2}
                - {name: A.b, value: 3}
                - {name: a.b-c, value: 4}
                "#,
            ),
        )
        .file(
            "c/hub-component.yaml",
            &component("c", "parameters:\n- {name: a.b, kind: user}\n"),
        )
        // `a.bc`, a near typo of `a.b` which `c` reads, would stop it.
        .args(&["elaborate", "hub.yaml", "-o", "-", "--lenient"])
        .run();
    assert_eq!(param_keys(&doc1(&out)), list("A.b a.b a.b-c a.bc a.b|c"));
}

#[test]
fn case_29_params_files_order() {
    for (files, expected) in [(["p1.yaml", "p2.yaml"], 3), (["p2.yaml", "p1.yaml"], 2)] {
        let out = Test::new()
            .file("hub.yaml", &stack("parameters:\n- {name: p, value: 1}\n"))
            .file("p1.yaml", "parameters:\n- {name: p, value: 2}\n")
            .file("p2.yaml", "parameters:\n- {name: p, value: 3}\n")
            .args(&["elaborate", "hub.yaml", files[0], files[1], "-o", "-"])
            .run();
        assert_eq!(
            param(&doc1(&out), "p")["value"],
            yaml(&expected.to_string()),
            "{files:?}"
        );
    }
}

#[test]
fn case_30_params_file_outputs() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("outputs:\n- {name: o, value: a, brief: b}\n"),
        )
        .file(
            "params.yaml",
            "outputs:\n- {name: o, value: c}\n- {name: extra, value: d}\n",
        )
        .args(&["elaborate", "hub.yaml", "params.yaml", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["outputs"],
        yaml("[{name: o, brief: b, value: c}, {name: extra, value: d}]")
    );
}

#[test]
fn case_31_secret_marking() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                outputs:
                - {name: db.password}
                - {name: api_token}
                - {name: someKEY}
                - {name: cloud.sshKey}
                - {name: notsecret.keys}
                - {name: x.token, kind: secret/token}
                "#,
            ),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        doc1(&out)["outputs"],
        yaml(
            r#"
            - {name: db.password, kind: secret}
            - {name: api_token, kind: secret}
            - {name: someKEY, kind: secret}
            - {name: cloud.sshKey}
            - {name: notsecret.keys}
            - {name: x.token, kind: secret/token}
            "#
        )
    );
}

/// The §8.2 fixture: `base` (a, b, c, d) and `child` (x, b, y) with
/// `fromStack: ../base`. Base's `b` has no manifest: it must never be read.
/// Every component has a user parameter `shared` (case 34).
fn from_stack_fixture() -> Test {
    let shared = "parameters:\n- {name: shared, kind: user}\n";
    Test::new()
        .file(
            "base/hub.yaml",
            r#"
            version: 1
            kind: stack
            meta:
              name: base
              brief: Base brief
              annotations: {a1: base, a2: base}
            components:
            - {name: a, source: {dir: components/a}}
            - {name: b, source: {dir: components/b}}
            - {name: c, source: {dir: components/c}}
            - {name: d, source: {dir: components/d}}
            requires: [aws]
            provides: [base-prov]
            platform: {provides: [p1, p2]}
            lifecycle:
              order: [a, b, c, d]
              verbs: [deploy, undeploy, backup]
              mandatory: [a]
              optional: [c]
              bare: allow
              requires: {optional: [vault, "cdn:a", "tls:c"]}
              readyConditions: [{dns: base.example}]
              options: {random: {bytes: 64}}
            outputs:
            - {name: out1, value: base1, brief: base brief}
            - {name: out2, value: base2}
            parameters:
            - {name: shared, value: from-base-hub}
            "#,
        )
        .file("base/params.yaml", "parameters:\n- {name: base.only, value: from-base-params}\n")
        .file("base/params-dev.yaml", "parameters:\n- {name: base.only, value: from-base-params-dev}\n")
        .file("base/components/a/hub-component.yaml", &component("a", &format!("provides: [cap-a]\n{shared}")))
        .file("base/components/c/hub-component.yaml", &component("c", &format!("provides: [cap-c]\n{shared}")))
        .file("base/components/d/hub-component.yaml", &component("d", &format!("provides: [cap-d]\n{shared}")))
        .file(
            "child/hub.yaml",
            r#"
            version: 1
            kind: stack
            meta:
              name: child
              fromStack: ../base
              annotations: {a2: child, a3: child}
            components:
            - {name: x, source: {dir: components/x}}
            - {name: b, source: {dir: components/b}}
            - {name: y, source: {dir: components/y}}
            requires: [gcp]
            platform: {provides: [p2, p3]}
            lifecycle:
              order: [x, b, y]
              verbs: [deploy, undeploy, upgrade]
              mandatory: [x]
              optional: [c, y]
              bare: forbid
              requires: {optional: ["cdn:", "tls:x"]}
              readyConditions: [{dns: child.example}]
            outputs:
            - {name: out2, brief: child brief}
            - {name: out3, value: child3}
            parameters:
            - {name: shared, value: from-child-hub}
            "#,
        )
        .file(
            "child/params.yaml",
            "parameters:\n- {name: base.only, value: from-child-params}\noutputs:\n- {name: out1, value: from-child-params}\n",
        )
        .file("child/components/x/hub-component.yaml", &component("x", &format!("requires: [cap-a]\n{shared}")))
        .file("child/components/b/hub-component.yaml", &component("child-b", shared))
        .file("child/components/y/hub-component.yaml", &component("y", &format!("requires: [cap-zz]\n{shared}")))
        .cwd("child")
}

/// `lifecycle.options` follows the recommended merge (B9: the child's, else
/// the parent's) instead of being dropped as in the reference.
#[test]
fn case_32_from_stack_full_merge() {
    let out = from_stack_fixture()
        .args(&["elaborate", "hub.yaml", "params.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    let doc = &docs[0];
    assert_eq!(
        doc["meta"],
        yaml("{name: child, annotations: {a1: base, a2: child, a3: child}}")
    );
    assert_eq!(
        doc["components"],
        yaml(
            r#"
            - {name: a, source: {dir: ../base/components/a}}
            - {name: b, source: {dir: components/b}}
            - {name: c, source: {dir: ../base/components/c}}
            - {name: d, source: {dir: ../base/components/d}}
            - {name: x, source: {dir: components/x}}
            - {name: y, source: {dir: components/y}}
            "#
        )
    );
    assert_eq!(
        doc["lifecycle"],
        yaml(
            r#"
            bare: allow
            verbs: [deploy, undeploy, backup, upgrade]
            order: [a, x, b, c, d, y]
            mandatory: [a, x]
            optional: [c, y]
            requires: {optional: [vault, "tls:c", "tls:x"]}
            readyConditions: [{dns: base.example}, {dns: child.example}]
            options: {random: {bytes: 64}}
            "#
        )
    );
    assert_eq!(
        doc["outputs"],
        yaml(
            r#"
            - {name: out1, brief: base brief, value: from-child-params}
            - {name: out2, brief: child brief, value: base2}
            - {name: out3, value: child3}
            "#
        )
    );
    assert_eq!(names(&docs[1..]), list("a c d x b y"));
    assert_eq!(docs[5]["meta"]["origin"], yaml("child-b"));
    assert_eq!(strings(&doc["requires"]), list("aws cap-zz gcp"));
    assert_eq!(
        strings(&doc["provides"]),
        list("base-prov cap-a cap-c cap-d")
    );
    assert_eq!(strings(&doc["platform"]["provides"]), list("p1 p2 p3"));
}

#[test]
fn case_33_from_stack_params_discovery() {
    let t = from_stack_fixture().args(&["elaborate", "hub.yaml", "-o", "-"]);
    // child/params.yaml exists but is not on the command line: ignored.
    let out = t.run();
    assert_eq!(
        param(&doc1(&out), "base.only")["value"],
        yaml("from-base-params")
    );
    let out = t.env("ENV", "dev").run();
    assert_eq!(
        param(&doc1(&out), "base.only")["value"],
        yaml("from-base-params-dev")
    );
}

#[test]
fn case_34_from_stack_parameter_layering() {
    let out = from_stack_fixture()
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let doc = doc1(&out);
    for key in [
        "shared", "shared|a", "shared|b", "shared|c", "shared|d", "shared|x", "shared|y",
    ] {
        assert_eq!(param(&doc, key)["value"], yaml("from-child-hub"), "{key}");
    }
}

/// A parent `base` and a `child` with `fromStack: ../base`, each with
/// components named after its order; run from `child`.
fn order_pair(parent: &str, child: &str) -> Test {
    let mut t = Test::new();
    let mut manifests = Vec::new();
    for (dir, order, header) in [
        ("base", parent, "meta: {name: base}\n"),
        ("child", child, "meta: {name: child, fromStack: ../base}\n"),
    ] {
        let names = list(order);
        let mut text = format!("version: 1\nkind: stack\n{header}");
        if !names.is_empty() {
            text.push_str("components:\n");
            for name in &names {
                text.push_str(&format!(
                    "- {{name: {name}, source: {{dir: components/{name}}}}}\n"
                ));
                t = t.file(
                    &format!("{dir}/components/{name}/hub-component.yaml"),
                    &component(name, ""),
                );
            }
            text.push_str(&format!("lifecycle: {{order: [{}]}}\n", names.join(", ")));
        }
        manifests.push((dir, text));
    }
    for (dir, text) in manifests {
        t = t.file(&format!("{dir}/hub.yaml"), &text);
    }
    t.cwd("child").args(&["elaborate", "hub.yaml", "-o", "-"])
}

/// Parent order, child order, and the merged order or the conflicting pair.
type OrderRow = (
    &'static str,
    &'static str,
    Result<&'static str, (&'static str, &'static str)>,
);

#[test]
fn case_35_order_merge() {
    let rows: [OrderRow; 12] = [
        ("a,b,c,d", "x,y", Ok("a,b,c,d,x,y")),
        ("a,b,c,d", "x,b,y", Ok("a,x,b,c,d,y")),
        ("a,b,c,d", "b", Ok("a,b,c,d")),
        ("a,b,c,d", "x,a", Ok("x,a,b,c,d")),
        ("a,b,c,d", "d,x", Ok("a,b,c,d,x")),
        ("a,b,c,d,e", "b,x,d", Ok("a,b,c,x,d,e")),
        ("a,b,c,d", "p,q,c,r", Ok("a,b,p,q,c,d,r")),
        ("a,b,c", "x,a,y,b,z,c,w", Ok("x,a,y,b,z,c,w")),
        ("", "x,y", Ok("x,y")),
        ("a,b", "", Ok("a,b")),
        ("a,b,c,d", "d,b", Err(("d", "b"))),
        ("a,b,c,d", "c,x,a", Err(("c", "a"))),
    ];
    for (parent, child, expected) in rows {
        let out = order_pair(parent, child).run();
        match expected {
            Ok(order) => {
                assert_eq!(
                    strings(&doc1(&out)["lifecycle"]["order"]),
                    list(order),
                    "parent {parent} + child {child}"
                );
            }
            Err((before, after)) => {
                out.failure();
                let fragment = format!("`{before}` must come after `{after}`");
                assert!(
                    out.stderr.contains(&fragment),
                    "parent {parent} + child {child}: {}",
                    out.stderr
                );
            }
        }
    }
}

/// A YAML flow list of quoted strings.
fn quoted(entries: &str) -> String {
    let items: Vec<String> = entries
        .split(' ')
        .filter(|e| !e.is_empty())
        .map(|e| format!("{e:?}"))
        .collect();
    format!("[{}]", items.join(", "))
}

fn tuning_stack(header: &str, optional: &str) -> String {
    let mut text = format!("version: 1\nkind: stack\n{header}");
    if !optional.is_empty() {
        text.push_str(&format!(
            "lifecycle: {{requires: {{optional: {}}}}}\n",
            quoted(optional)
        ));
    }
    text
}

/// The recommended column of §8.4 (rows 14 and 15 differ from the reference:
/// the `:comp` eraser works).
#[test]
fn case_36_requires_tuning_table() {
    let rows = [
        ("", "", ""),
        ("vault", "", "vault"),
        ("", "vault", "vault"),
        ("vault:a", "vault", "vault"),
        ("vault", "vault:a", "vault:a"),
        ("vault:a vault:b", "vault", "vault"),
        ("vault", "vault:a vault:b", "vault:a vault:b"),
        ("vault:a", "vault:b", "vault:a vault:b"),
        ("vault cdn:a", ":", ""),
        ("vault cdn:a", ": tls", "tls"),
        ("vault cdn:a", "tls :", ""),
        ("vault vault:a cdn", "vault:", "cdn"),
        ("vault:a vault:b", "vault: vault:c", "vault:c"),
        ("vault:a cdn:a cdn:b", ":a", "cdn:b"),
        ("vault:a cdn:a cdn:b", ":a tls:a", "cdn:b tls:a"),
        ("vault:a", ":a vault", "vault"),
        ("vault", "cdn", "vault cdn"),
        ("vault cdn", "vault", "cdn vault"),
        ("vault cdn:a", "cdn:a", "vault cdn:a"),
        ("", "vault:a vault", "vault"),
        ("", "vault vault:a", "vault:a"),
        ("", "vault:", ""),
        ("", ":a", ""),
        ("vault", "vault: vault:b", "vault:b"),
        ("x:a", "x: x", "x"),
        ("x", ":a x:a", "x:a"),
        (
            "vault cdn:control-plane component.ingress.ssl.enabled:acm",
            "",
            "vault cdn:control-plane component.ingress.ssl.enabled:acm",
        ),
        ("vault cdn:a tls:c", "cdn: tls:x", "vault tls:c tls:x"),
    ];
    for (n, (prior, new, expected)) in rows.iter().enumerate() {
        let out = Test::new()
            .file(
                "base/hub.yaml",
                &tuning_stack("meta: {name: base}\n", prior),
            )
            .file(
                "child/hub.yaml",
                &tuning_stack("meta: {name: child, fromStack: ../base}\n", new),
            )
            .cwd("child")
            .args(&["elaborate", "hub.yaml", "-o", "-"])
            .run();
        let got = strings(&doc1(&out)["lifecycle"]["requires"]["optional"]);
        assert_eq!(
            got,
            list(expected),
            "row {}: prior [{prior}] + new [{new}]",
            n + 1
        );
    }

    // Without fromStack the list is copied verbatim, erasers included.
    let out = Test::new()
        .file(
            "hub.yaml",
            &tuning_stack("meta: {name: s}\n", "vault vault:a : x: :c"),
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(
        strings(&doc1(&out)["lifecycle"]["requires"]["optional"]),
        list("vault vault:a : x: :c")
    );
}

/// [rec] for the absolute directory: it is not prefixed.
#[test]
fn case_37_parent_paths_rewriting() {
    let t = Test::new();
    let absolute = t.root().join("abs/comp").to_string_lossy().into_owned();
    let out = t
        .file(
            "base/hub.yaml",
            &format!(
                r#"
                version: 1
                kind: stack
                meta: {{name: base}}
                components:
                - {{name: a, source: {{dir: components/a}}}}
                - {{name: g, source: {{git: {{remote: "https://example.com/g.git"}}}}}}
                - {{name: l, source: {{git: {{remote: "https://example.com/l.git", localDir: l}}}}}}
                - {{name: abs, source: {{dir: "{absolute}"}}}}
                lifecycle: {{order: [a, g, l, abs]}}
                "#
            ),
        )
        .file(
            "base/components/a/hub-component.yaml",
            &component("base-components-a", ""),
        )
        .file("base/g/hub-component.yaml", &component("base-g", ""))
        .file("base/l/hub-component.yaml", &component("base-l", ""))
        .file("abs/comp/hub-component.yaml", &component("abs-comp", ""))
        .file(
            "child/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: child, fromStack: ../base}\n",
        )
        .cwd("child")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    let mut expected = yaml(
        r#"
        - {name: a, source: {dir: ../base/components/a}}
        - {name: g, source: {git: {remote: "https://example.com/g.git", localDir: ../base/g}}}
        - {name: l, source: {git: {remote: "https://example.com/l.git", localDir: ../base/l}}}
        - {name: abs, source: {dir: ABSOLUTE}}
        "#,
    );
    expected[3]["source"]["dir"] = Value::String(absolute);
    assert_eq!(docs[0]["components"], expected);
    let origins: Vec<&str> = docs[1..]
        .iter()
        .map(|d| d["meta"]["origin"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        origins,
        ["base-components-a", "base-g", "base-l", "abs-comp"]
    );
}

/// [rec]: a grandparent's `fromStack` is relative to the parent's folder.
#[test]
fn case_38_grandparent() {
    let out = Test::new()
        .file("child/hub.yaml", "version: 1\nkind: stack\nmeta: {name: child, fromStack: ../p}\n")
        .file("p/hub.yaml", "version: 1\nkind: stack\nmeta: {name: p, fromStack: gp}\n")
        .file(
            "p/gp/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: gp}\ncomponents:\n- {name: g, source: {dir: components/g}}\nlifecycle: {order: [g]}\n",
        )
        .file("p/gp/components/g/hub-component.yaml", &component("g", ""))
        .cwd("child")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(
        docs[0]["components"],
        yaml("[{name: g, source: {dir: ../p/gp/components/g}}]")
    );
    assert_eq!(names(&docs[1..]), list("g"));
}

/// [rec]: a `fromStack` cycle is an error, not an endless recursion.
#[test]
fn case_39_from_stack_cycle() {
    let single = Test::new().file(
        "hub.yaml",
        "version: 1\nkind: stack\nmeta: {name: s, fromStack: .}\n",
    );
    let pair = Test::new()
        .file(
            "one/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: one, fromStack: ../two}\n",
        )
        .file(
            "two/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: two, fromStack: ../one}\n",
        );
    for (t, cwd) in [(&single, ""), (&pair, "one")] {
        // A run that recursed without end would be killed here and fail.
        let out = assert_cmd::Command::cargo_bin("hub")
            .expect("hub binary")
            .current_dir(t.root().join(cwd))
            .args(["elaborate", "hub.yaml", "-o", "-"])
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .expect("run hub");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("cycle"), "{stderr}");
    }
}

#[test]
fn case_40_requires_provides() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack(
                "components:\n- {name: k, source: {dir: c/k}}\n- {name: u, source: {dir: c/u}}\nrequires: [kubernetes]\nlifecycle: {order: [k, u]}\n",
            ),
        )
        .file("c/k/hub-component.yaml", &component("k", "provides: [kubernetes]\n"))
        .file("c/u/hub-component.yaml", &component("u", "requires: [kubectl, kubernetes, helm]\n"))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let doc = doc1(&out);
    assert_eq!(strings(&doc["requires"]), list("helm kubernetes"));
    assert_eq!(strings(&doc["provides"]), list("kubernetes"));
}

#[test]
fn case_41_platform_provides_filtering() {
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("requires: [tiller, aws, etcd2, kubernetes]\n"),
        )
        .args(&[
            "elaborate",
            "hub.yaml",
            "-p",
            "tiller,aws,kubernetes,zz",
            "-o",
            "-",
        ])
        .run();
    let doc = doc1(&out);
    assert_eq!(strings(&doc["requires"]), list("aws etcd2 kubernetes"));
    assert_eq!(
        strings(&doc["platform"]["provides"]),
        list("aws kubernetes tiller zz")
    );
}

#[test]
fn case_42_unknown_keys_dropped() {
    let out = Test::new()
        .file(
            "hub.yaml",
            r#"
            version: 1
            kind: stack
            meta: {name: s, category: things}
            extensions: {include: [other.yaml]}
            components:
            - {name: c, source: {dir: c}}
            lifecycle: {order: [c]}
            outputs:
            - {name: o, value: v, lifecycle: optional}
            "#,
        )
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c, disabled: true}\n",
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(
        docs[0],
        yaml(
            r#"
            version: 1
            kind: stack
            meta: {name: s}
            components:
            - {name: c, source: {dir: c}}
            lifecycle: {order: [c]}
            outputs:
            - {name: o, value: v}
            "#
        )
    );
    assert_eq!(docs[1]["meta"], yaml("{name: c, origin: c, kind: c}"));
}

#[test]
fn case_43_multiple_documents() {
    let out = Test::new()
        .file("hub.yaml", "version: 1\nkind: stack\nmeta: {name: first}\n---\nversion: 1\nkind: stack\nmeta: {name: second}\n")
        .file("params.yaml", "parameters:\n- {name: p, value: one}\n---\nparameters:\n- {name: q, value: two}\n")
        .args(&["elaborate", "hub.yaml", "params.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["meta"]["name"], yaml("first"));
    assert_eq!(docs[0]["parameters"], yaml("[{name: p, value: one}]"));
    assert_eq!(
        warnings_with(&out.stderr, &["hub.yaml", "first"]).len(),
        1,
        "{}",
        out.stderr
    );
    assert_eq!(
        warnings_with(&out.stderr, &["params.yaml", "first"]).len(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn case_44_multiple_outputs() {
    let (out, _dir) = Test::new()
        .file("hub.yaml", &stack("parameters:\n- {name: p, value: 1}\n"))
        .args(&["elaborate", "hub.yaml", "-o", "o1.yaml,o2.yaml"])
        .run_keep();
    out.success();
    let one = std::fs::read(out.root.join("o1.yaml")).expect("o1.yaml");
    let two = std::fs::read(out.root.join("o2.yaml")).expect("o2.yaml");
    assert_eq!(one, two);
    assert_eq!(
        out.documents("o1.yaml")[0]["parameters"],
        yaml("[{name: p, value: 1}]")
    );
}

#[test]
fn case_45_warnings_do_not_fail() {
    let params = r#"
        parameters:
        - {name: p1, kind: strange, value: 1}
        - {name: p2, kind: user, empty: maybe, value: 2}
        - {name: p3, kind: link, value: "${b:z}"}
        - {name: p4, kind: tech, default: d}
        "#;
    let out = Test::new()
        .file(
            "hub.yaml",
            &stack("components:\n- {name: c, source: {dir: c}}\nlifecycle: {order: [c]}\n"),
        )
        .file("c/hub-component.yaml", &component("c", params))
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let docs = documents(&out);
    for (key, fragment) in [
        ("p1|c", "strange"),
        ("p2|c", "maybe"),
        ("p3|c", "link"),
        ("p4|c", "default"),
    ] {
        let lines = warnings_with(&out.stderr, &[key]);
        assert_eq!(lines.len(), 1, "{key}: {}", out.stderr);
        assert!(lines[0].contains(fragment), "{key}: {}", lines[0]);
    }
    let mut expected = yaml(params)["parameters"].clone();
    for p in expected.as_sequence_mut().expect("list") {
        p["component"] = yaml("c");
    }
    assert_eq!(docs[1]["parameters"], expected);
}

/// A state of a platform stack (deploy.md §11) for case 46: stack parameters,
/// a prefixed stack output, and a Kubernetes provider `k8s-eks` whose
/// captured outputs carry the cluster parameters (but not `dns.domain`).
const PLATFORM_STATE: &str = r#"
    version: 1
    kind: state
    timestamp: 2024-05-01T10:00:12Z
    status: deployed
    meta: {kind: stack, name: platform}
    stackParameters:
    - {name: app.name, value: from-state}
    - {name: cloud.region, value: us-east-1}
    - {name: dns.domain, value: platform.example.com}
    - {name: hub.deploymentId, value: 6b0f3f4e-8d3a-4a55-9f8e-1d2c3b4a5f60}
    - {name: ingress.fqdn, value: from-stack-parameters}
    - {name: other.param, component: ingress, value: qualified-ignored}
    stackOutputs:
    - {name: "ingress:ingress.fqdn", value: app.example.com}
    provides:
      kubernetes: [k8s-eks]
      tiller: [helm]
      vault: [vault]
    components:
      k8s-eks:
        status: deployed
        capturedOutputs:
        - {component: k8s-eks, name: kubernetes.api.endpoint, value: "https://api.example.com"}
        - {component: k8s-eks, name: kubernetes.api.token, value: t0ken}
        - {component: k8s-eks, name: kubernetes.flavor, value: eks}
    operations:
    - {id: 0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e, operation: deploy, status: success}
    "#;

fn state_fill_stack() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &stack(
                r#"
                requires: [aws, kubernetes, other, tiller, vault]
                parameters:
                - {name: app.name, value: keep}
                - {name: cloud.region, kind: user, fromEnv: AWS_REGION, default: us-west-2}
                - {name: dns.domain, kind: user}
                - {name: hub.deploymentId}
                - {name: ingress.fqdn, kind: user}
                - {name: other.param, kind: user}
                "#,
            ),
        )
        .file("platform.state", PLATFORM_STATE)
}

#[test]
fn case_46_state_fill() {
    let out = state_fill_stack()
        .args(&["elaborate", "hub.yaml", "-s", "platform.state", "-o", "-"])
        .run();
    let doc = doc1(&out);
    assert_eq!(
        doc["parameters"],
        yaml(
            r#"
            - {name: app.name, value: keep}
            - {name: cloud.region, kind: user, default: us-east-1, fromEnv: AWS_REGION}
            - {name: dns.domain, kind: user, value: platform.example.com}
            - {name: hub.deploymentId}
            - {name: ingress.fqdn, kind: user, value: app.example.com}
            - {name: kubernetes.api.endpoint, value: "https://api.example.com"}
            - {name: kubernetes.api.token, value: t0ken}
            - {name: kubernetes.flavor, value: eks}
            - {name: other.param, kind: user}
            "#
        )
    );
    assert_eq!(
        warnings_with(&out.stderr, &["cloud.region", "us-east-1"]).len(),
        1,
        "{}",
        out.stderr
    );
    assert_eq!(
        strings(&doc["requires"]),
        list("aws kubernetes other vault")
    );
    assert_eq!(
        strings(&doc["platform"]["provides"]),
        list("kubernetes tiller vault")
    );

    let out = state_fill_stack()
        .args(&[
            "elaborate",
            "hub.yaml",
            "-s",
            "platform.state",
            "--state-stack-parameters=false",
            "-o",
            "-",
        ])
        .run();
    let doc = doc1(&out);
    assert_eq!(
        param(&doc, "dns.domain"),
        yaml("{name: dns.domain, kind: user}")
    );
    assert_eq!(param(&doc, "cloud.region")["default"], yaml("us-west-2"));
    assert_eq!(
        param(&doc, "ingress.fqdn")["value"],
        yaml("app.example.com")
    );
    assert_eq!(param(&doc, "kubernetes.flavor")["value"], yaml("eks"));
}

/// A gzip-compressed state (what the reference writes by default) is read too.
#[test]
fn case_46_state_fill_gzip() {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(unindent(PLATFORM_STATE).as_bytes())
        .expect("gzip");
    let test = state_fill_stack().bytes("platform.state.gz", &encoder.finish().expect("gzip"));
    let doc = elaborated_with_platform(test, "platform.state.gz");
    assert_eq!(param(&doc, "kubernetes.api.token")["value"], yaml("t0ken"));
}

/// The stack document `elaborate -s STATES` prints, which must have taken
/// `dns.domain` from the platform's state.
fn elaborated_with_platform(test: Test, states: &str) -> Value {
    let out = test
        .args(&["elaborate", "hub.yaml", "-s", states, "-o", "-"])
        .run();
    let doc = doc1(&out);
    assert_eq!(
        param(&doc, "dns.domain")["value"],
        yaml("platform.example.com")
    );
    doc
}

/// `-s a,b` as in the other commands: the newest state that exists is read.
#[test]
fn case_46_state_fill_from_a_list_of_locations() {
    let test = state_fill_stack().file(
        "old.state",
        &PLATFORM_STATE.replace("platform.example.com", "old.example.com"),
    );
    crate::common::age_by_an_hour(&test.root().join("old.state"));
    elaborated_with_platform(test, "old.state,absent.state,platform.state");
}

#[test]
fn case_46_state_kind_checked() {
    let out = Test::new()
        .file("hub.yaml", STACK)
        .file(
            "platform.state",
            "version: 1\nkind: stack\nmeta: {name: p}\n",
        )
        .args(&["elaborate", "hub.yaml", "-s", "platform.state", "-o", "-"])
        .run();
    out.failure()
        .stderr_has("platform.state")
        .stderr_has("`stack`");
}

/// `lifecycle.timeouts` across `fromStack`: the parent's entries, the
/// child's replacing them component by component; the elaborated file
/// keeps them as written.
#[test]
fn from_stack_timeouts_merge_per_component() {
    let out = Test::new()
        .file(
            "base/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: base}\ncomponents:\n- {name: a, source: {dir: a}}\n- {name: b, source: {dir: b}}\nlifecycle:\n  order: [a, b]\n  timeouts: {a: 90s, b: 15m}\n",
        )
        .file("base/a/hub-component.yaml", &component("a", ""))
        .file("base/b/hub-component.yaml", &component("b", ""))
        .file(
            "child/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: child, fromStack: ../base}\nlifecycle:\n  timeouts:\n    b: 1h30m\n",
        )
        .cwd("child")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    let stack = &documents(&out)[0];
    assert_eq!(
        stack["lifecycle"]["timeouts"],
        yaml("{a: 90s, b: 1h30m}"),
        "{}",
        out.stdout
    );
}
