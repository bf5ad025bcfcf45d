//! The streamed writer against `emit::document` of the whole value.

use super::*;
use crate::{Manifest, Parameter, SourceFile};
use std::path::Path;

fn both(doc: &Manifest) {
    let mut streamed = String::new();
    document(doc, &["components", "parameters"], &mut streamed).expect("streamed");
    let whole = emit::document(&yaml_serde::to_value(doc).expect("value"));
    assert_eq!(streamed, whole);
}

#[test]
fn a_document_written_a_list_item_at_a_time_is_the_document_written_whole() {
    both(&Manifest::default());
    let text = "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n- name: a\n  source: {dir: a}\n  depends: []\n- name: b\n  depends: [a]\nlifecycle:\n  order: [a, b]\nparameters:\n- name: p\n  value: 'yes'\n- name: q\n  parameters:\n  - name: r\n    default: \"1\"\n- {name: s, value: {a: [1, 2]}, kind: user}\noutputs:\n- name: o\n  value: x\n";
    let file = SourceFile {
        path: Path::new("s").to_path_buf(),
        text: text.to_string(),
    };
    let (doc, _) = file
        .first_document::<Manifest>(&mut Default::default())
        .expect("read");
    let doc = doc.expect("a document");
    assert_eq!(doc.parameters.len(), 3);
    both(&doc);
    // Only parameters; only components.
    let mut only = doc.clone();
    only.components.clear();
    both(&only);
    let mut only = doc;
    only.parameters = vec![Parameter::default()];
    both(&only);
}

#[test]
fn what_is_not_a_struct_is_written_whole() {
    let value = yaml_serde::Value::Sequence(vec![yaml_serde::Value::Bool(true)]);
    let mut out = String::from("x");
    document(&value, &["parameters"], &mut out).expect("written");
    assert_eq!(out, format!("x{}", emit::document(&value)));
}

#[test]
fn every_corpus_document_is_written_the_same() {
    let Some(corpus) = crate::pieces::tests::corpus() else {
        return;
    };
    let mut files = Vec::new();
    crate::pieces::tests::yaml_files(&corpus, &mut files);
    let mut written = 0;
    for path in files {
        let Ok(file) = SourceFile::read(&path) else {
            continue;
        };
        let Ok(docs) = file.documents::<Manifest>(&mut Default::default()) else {
            continue;
        };
        for doc in &docs {
            both(doc);
            written += 1;
        }
    }
    assert!(written > 100, "{written} documents");
}
