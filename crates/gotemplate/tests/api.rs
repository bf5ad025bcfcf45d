//! The crate's public API as a user of it calls it: data from YAML through
//! `bindings`, templates through `render`, errors with their line and key.

use gotemplate::{bindings, render, Value};

fn yaml(text: &str) -> yaml_serde::Value {
    yaml_serde::from_str(text).expect("test YAML")
}

/// Data bound from `name: value` pairs, as a deployment tool's parameters.
fn data(pairs: &[(&str, &str)]) -> Value {
    let values: Vec<(&str, yaml_serde::Value)> = pairs
        .iter()
        .map(|(name, value)| (*name, yaml(value)))
        .collect();
    let (value, conflicts) = bindings(values.iter().map(|(n, v)| (*n, Some(v))));
    assert!(conflicts.is_empty(), "{conflicts:?}");
    value
}

#[test]
fn dotted_names_become_nested_maps_and_dashes_underscores() {
    let data = data(&[
        ("component.db.host", "db.local"),
        ("component.db.port", "5432"),
        ("dns-domain", "example.com"),
    ]);
    let text = render(
        "{{ .component.db.host }}:{{ .component.db.port }} in {{ .dns_domain }}",
        &data,
    )
    .expect("render");
    assert_eq!(text, "db.local:5432 in example.com");
}

#[test]
fn control_structures_pipelines_and_sprig_functions() {
    let data = data(&[("names", "[b, a, c]"), ("empty", "''"), ("count", "3")]);
    let template = r#"{{- range $i, $n := .names | sortAlpha }}{{ if $i }},{{ end }}{{ $n | upper }}{{ end }}
{{ .empty | default "none" }} {{ printf "%03d" .count }} {{ "hi" | b64enc }} {{ dict "k" .count | toJson }}
{{- define "x" }}[{{ . }}]{{ end }} {{ template "x" .count }}"#;
    let text = render(template, &data).expect("render");
    assert_eq!(text, "A,B,C\nnone 003 aGk= {\"k\":3} [3]");
}

#[test]
fn a_missing_key_is_an_error_naming_the_key_and_line() {
    let data = data(&[("present", "yes")]);
    let error = render("ok\n{{ .present }}\n{{ .absent.key }}", &data).expect_err("missing key");
    assert_eq!(error.line, 3, "{error}");
    // The first part that is missing is the one named.
    assert_eq!(error.key.as_deref(), Some(".absent"), "{error}");
    assert!(error.to_string().starts_with("line 3: "), "{error}");
}

#[test]
fn an_unknown_function_is_an_error_before_anything_renders() {
    let error = render("{{ .x }}{{ nosuchfunc 1 }}", &data(&[])).expect_err("unknown function");
    assert!(error.message.contains("nosuchfunc"), "{error}");
}
