use crate::common::*;

#[test]
fn writes_stdout_with_dash() {
    let out = Test::new()
        .file("hub.yaml", "version: 1\nkind: stack\nmeta: {name: s}\n")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    out.success();
    assert_eq!(out.stdout_documents(), vec![yaml("{version: 1, kind: stack, meta: {name: s}}")]);
}
