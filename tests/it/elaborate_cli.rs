use crate::common::*;

#[test]
fn writes_stdout_with_dash() {
    let out = Test::new()
        .file("hub.yaml", "version: 1\nkind: stack\nmeta: {name: s}\n")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    out.success();
    assert_eq!(
        out.stdout_documents(),
        vec![yaml("{version: 1, kind: stack, meta: {name: s}}")]
    );
}

/// A pipe or device given as output is written to, never replaced by a
/// regular file (running as root, `-o /dev/null` must stay a device).
#[test]
fn writes_into_a_fifo_without_replacing_it() {
    use std::os::unix::fs::FileTypeExt;
    let test = Test::new().file("hub.yaml", "version: 1\nkind: stack\nmeta: {name: s}\n");
    let fifo = test.root().join("out.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read fifo"))
    };
    let (out, _dir) = test
        .args(&["elaborate", "hub.yaml", "-o", "out.fifo"])
        .run_keep();
    out.success();
    assert!(reader.join().expect("reader").contains("name: s"));
    let kind = std::fs::metadata(&fifo)
        .expect("fifo still there")
        .file_type();
    assert!(kind.is_fifo(), "the fifo was replaced");
}

/// Strings that a YAML 1.1 reader (the reference tool) would take for
/// booleans or numbers are written quoted, and read back as strings.
#[test]
fn ambiguous_strings_are_quoted() {
    let out = Test::new()
        .file(
            "hub.yaml",
            r#"
            version: 1
            kind: stack
            meta: {name: s}
            parameters:
            - {name: a, value: "yes"}
            - {name: b, value: "on"}
            - {name: c, value: "1_000"}
            - {name: d, value: "n"}
            - {name: e, value: plain}
            "#,
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    out.success();
    for quoted in ["\"yes\"", "\"on\"", "\"1_000\"", "\"n\""] {
        assert!(
            out.stdout.contains(&format!("value: {quoted}\n")),
            "{quoted} is quoted:\n{}",
            out.stdout
        );
    }
    assert!(out.stdout.contains("value: plain\n"), "{}", out.stdout);
    let params = &out.stdout_documents()[0]["parameters"];
    assert_eq!(params[0]["value"], yaml_serde::Value::from("yes"));
}
