//! Integration tests: `hub validate` against the JSON Schemas.

use crate::common::Test;
use std::path::{Path, PathBuf};

const STACK: &str = "
    version: 1
    kind: stack
    meta:
      name: demo
      brief: A demo stack
    components:
      - name: db
        source:
          dir: components/db
      - name: app
        source:
          git:
            remote: https://example.invalid/app.git
            subDir: app
        depends: [db]
    requires: [kubernetes]
    lifecycle:
      order: [db, app]
    parameters:
      - name: dns.domain
        kind: user
        fromEnv: DOMAIN
      - name: db
        parameters:
          - name: size
            value: 10
            empty: allow
    outputs:
      - name: app.url
        value: https://${dns.domain}
";

const COMPONENT: &str = "
    version: 1
    kind: component
    meta:
      name: db
      version: '8.0'
    provides: [mysql]
    lifecycle:
      verbs: [deploy, undeploy]
      bare: allow
    parameters:
      - name: component.db.size
        default: 10
    outputs:
      - name: component.db.host
        kind: secret
    templates:
      kind: mustache
      files: ['*.template']
";

const PARAMS: &str = "
    parameters:
      - name: dns.domain
        value: example.com
      - name: component.db.size
        component: db
        value: 20
    outputs:
      - name: extra
        value: x
";

#[test]
fn valid_stack_component_and_params_files() {
    Test::new()
        .file("hub.yaml", STACK)
        .file("components/db/hub-component.yaml", COMPONENT)
        .file("params.yaml", PARAMS)
        .args(&[
            "validate",
            "hub.yaml",
            "components/db/hub-component.yaml",
            "params.yaml",
        ])
        .run()
        .success()
        .stderr_has("ok: hub.yaml (stack)\n")
        .stderr_has("ok: components/db/hub-component.yaml (component)\n")
        .stderr_has("ok: params.yaml (parameters)\n");
}

#[test]
fn unknown_keys_are_warnings_with_file_and_line() {
    let out = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta:
              name: demo
              category: Demo
              descripton: A demo
            components:
              - name: db
                breif: typo
                source:
                  dir: db
            extensions:
              x: 1
            ",
        )
        .args(&["validate", "hub.yaml", "--lenient"])
        .run();
    out.success()
        .stderr_has("warning: hub.yaml:5:3: unknown key `meta.descripton` is ignored (did you mean `description`?)")
        .stderr_has("warning: hub.yaml:8:5: unknown key `components[0].breif` is ignored\n")
        .stderr_has("ok: hub.yaml (stack, 2 warnings)");
    assert!(!out.stderr.contains("error"), "{}", out.stderr);
    // Keys real manifests use (`meta.category`, `extensions`) are known.
    assert!(
        !out.stderr.contains("category") && !out.stderr.contains("extensions"),
        "{}",
        out.stderr
    );
}

#[test]
fn wrong_type_is_an_error_with_line_and_field_path() {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta:
              name: demo
            components:
              - name: db
                depends: db
            ",
        )
        .args(&["validate", "hub.yaml"])
        .run()
        .failure()
        .stderr_has("error: `components[0].depends` has the wrong type: expected a list, found the string `db`")
        .stderr_has("--> hub.yaml:6:5")
        .stderr_has("invalid: hub.yaml (stack, 1 error)")
        .stderr_has("error: 1 of 1 file(s) failed validation");
}

#[test]
fn integer_field_given_text_is_an_error() {
    Test::new()
        .file("hub-component.yaml", "version: one\nmeta:\n  name: c\n")
        .args(&["validate", "hub-component.yaml"])
        .run()
        .failure()
        .stderr_has(
            "error: `version` has the wrong type: expected an integer, found the string `one`",
        )
        .stderr_has("--> hub-component.yaml:1:1");
}

#[test]
fn malformed_yaml_is_an_error_with_line_and_column() {
    Test::new()
        .file("hub.yaml", "kind: stack\nmeta:\n  name: [demo\n")
        .args(&["validate", "hub.yaml"])
        .run()
        .failure()
        .stderr_has("error: invalid YAML")
        .stderr_has("--> hub.yaml:4:1")
        .stderr_has("invalid: hub.yaml");
}

#[test]
fn scalars_read_as_text_and_unknown_values_are_warnings() {
    Test::new()
        .file(
            "hub-component.yaml",
            "
            kind: component
            meta:
              name: c
              version: 1.2
            requires:
            parameters:
              - name: a
                kind: secret
                empty: ~
            templates:
              kind: jinja
            ",
        )
        .args(&["validate", "hub-component.yaml"])
        .run()
        .success()
        .stderr_has("warning: hub-component.yaml:4:3: `meta.version` should be a string, found the number `1.2`; it is read as text")
        .stderr_has("warning: hub-component.yaml:8:5: `parameters[0].kind` has the unknown value `secret`; known values: `user`, `tech`, `link`")
        .stderr_has("warning: hub-component.yaml:9:5: `parameters[0].empty` should be a string, found null; it is read as the text `~`")
        .stderr_has("warning: hub-component.yaml:11:3: `templates.kind` has the unknown value `jinja`")
        .stderr_has("ok: hub-component.yaml (component, 4 warnings)");
}

#[test]
fn explicit_null_list_and_missing_name_are_errors() {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            requires: ~
            components:
              - source:
                  dir: db
            ",
        )
        .args(&["validate", "hub.yaml"])
        .run()
        .failure()
        .stderr_has("error: `requires` is null, which cannot be read as a list")
        .stderr_has("--> hub.yaml:2:1")
        .stderr_has("error: `components[0]` lacks the required key `name`")
        .stderr_has("--> hub.yaml:4:3")
        .stderr_has("invalid: hub.yaml (stack, 2 errors)");
}

#[test]
fn extra_documents_are_a_warning() {
    Test::new()
        .file("hub.yaml", "kind: stack\nmeta:\n  name: a\n---\nkind: stack\nmeta:\n  name: b\n")
        .args(&["validate", "hub.yaml"])
        .run()
        .success()
        .stderr_has("warning: hub.yaml:4:1: the file holds 2 YAML documents; only the first is used and checked")
        .stderr_has("ok: hub.yaml (stack, 1 warning)");
}

#[test]
fn document_type_comes_from_kind_then_file_name() {
    Test::new()
        // A component by name: `components` is known to both schemas, the
        // `kind` enum is not checked without a kind.
        .file("c/hub-component.yaml", "meta:\n  name: c\n")
        // A parameters file by name: `meta` is unknown there.
        .file("params-extra.yaml", "meta:\n  name: p\nparameters: []\n")
        // `kind` wins over the name.
        .file("params-stack.yaml", "kind: stack\nmeta:\n  name: s\n")
        .args(&[
            "validate",
            "c/hub-component.yaml",
            "params-extra.yaml",
            "params-stack.yaml",
        ])
        .run()
        .success()
        .stderr_has("ok: c/hub-component.yaml (component)")
        .stderr_has("warning: params-extra.yaml:1:1: unknown key `meta` is ignored")
        .stderr_has("ok: params-extra.yaml (parameters, 1 warning)")
        .stderr_has("ok: params-stack.yaml (stack)");
}

#[test]
fn every_file_fails_or_passes_on_its_own() {
    Test::new()
        .file("good.yaml", "kind: stack\nmeta:\n  name: a\n")
        .file("bad.yaml", "kind: stack\nmeta: x\n")
        .args(&["validate", "good.yaml", "bad.yaml", "missing.yaml"])
        .run()
        .failure()
        .stderr_has("ok: good.yaml (stack)")
        .stderr_has("invalid: bad.yaml (stack, 1 error)")
        .stderr_has("error: cannot read `missing.yaml`")
        .stderr_has("invalid: missing.yaml (1 error)")
        .stderr_has("error: 2 of 3 file(s) failed validation");
}

#[test]
fn empty_params_file_is_valid_but_empty_stack_is_not() {
    Test::new()
        .file("params.yaml", "# nothing yet\n")
        .file("user.yaml", "")
        .file("hub.yaml", "# nothing yet\n")
        .args(&["validate", "params.yaml", "user.yaml", "hub.yaml"])
        .run()
        .failure()
        .stderr_has("ok: params.yaml (parameters)")
        .stderr_has("warning: user.yaml: `user.yaml` holds no YAML document (fine for a parameters file, not for a stack or component)")
        .stderr_has("ok: user.yaml (stack, 1 warning)")
        .stderr_has("error: `hub.yaml` holds no YAML document")
        .stderr_has("invalid: hub.yaml (stack, 1 error)");
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Every real component manifest of the corpus validates, with warnings at
/// most.
#[test]
fn corpus_components_validate() {
    let corpus = match std::env::var_os("HUB_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
    .join("components-only");
    if !corpus.is_dir() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "corpus folder {} not found (CI=true): the shared folder must be beside the checkout, or HUB_CORPUS must name the corpus",
            corpus.display()
        );
        crate::common::skipped(&format!(
            "no corpus at {} (set HUB_CORPUS to the corpus folder to run it)",
            corpus.display()
        ));
        return;
    }
    let mut files = Vec::new();
    yaml_files(&corpus, &mut files);
    files.sort();
    assert!(
        files.len() > 100,
        "expected the corpus's component manifests, found {}",
        files.len()
    );
    let mut args = vec!["validate".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = Test::new().args(&args).run();
    out.success();
    assert_eq!(
        out.stderr.lines().filter(|l| l.starts_with("ok: ")).count(),
        files.len(),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("unknown key"),
        "the keys of real component manifests are known: {}",
        out.stderr
    );
}
