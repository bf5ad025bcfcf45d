//! Component templates of every kind (`curly`, `mustache`, `_mustache`,
//! `go`): the first byte picks the kind, the rest is the template.
#![no_main]

use hub_manifest::diag::Warnings;
use hub_engine::child::templates::render;
use hub_manifest::Templates;
use hub_params::{ExpandedParam, Origin};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const KINDS: [&str; 4] = ["curly", "mustache", "_mustache", "go"];

fn folder() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temporary folder"))
}

fn param(name: &str, value: &str) -> ExpandedParam {
    ExpandedParam {
        name: name.into(),
        value: Some(yaml_serde::Value::String(value.into())),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, template)) = data.split_first() else {
        return;
    };
    let dir = folder().path();
    std::fs::write(dir.join("t.txt.template"), template).expect("template");
    let templates = Templates {
        kind: KINDS[usize::from(kind) % KINDS.len()].into(),
        files: vec!["t.txt.template".into()],
        ..Templates::default()
    };
    let params = [
        param("a", "1"),
        param("b.c", "x"),
        param("url", "https://h.example:8443/p"),
    ];
    let mut warnings = Warnings::default();
    let _ = render(dir, &templates, &params, "comp", &mut warnings);
});
