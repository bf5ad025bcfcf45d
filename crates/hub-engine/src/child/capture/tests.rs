use super::*;

fn raw(pairs: &[(&str, &str)]) -> RawOutputs {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn spec_7_1_example() {
    let stdout = "Applying...\nOutputs:\nhost = \"db.internal\"\nport=5432\n# ignored = x\n\
                      url = jdbc:pg://h:5432/db?a=b\n\ntrailing = not-captured\n";
    let expected = raw(&[
        ("host", "db.internal"),
        ("port", "5432"),
        ("url", "jdbc:pg://h:5432/db?a=b"),
    ]);
    assert_eq!(parse_outputs(stdout), expected);
    assert_eq!(parse_outputs_strict(stdout), expected);
}

#[test]
fn deploy_case_33_block_parsing() {
    let stdout =
        "noise = 1\nOutputs:\nk1 = v1\nk2=\"quoted \\\"x\\\"\"\n# comment = no\nk3 = a = b\n\n\
                      after = blank\nOutputs:\nk1 = v2\n";
    let expected = raw(&[("k1", "v1,v2"), ("k2", "quoted \"x\""), ("k3", "a = b")]);
    assert_eq!(parse_outputs(stdout), expected);
    assert_eq!(parse_outputs_strict(stdout), expected);
}

#[test]
fn deploy_case_34a_marker_must_start_a_line() {
    assert!(parse_outputs("xOutputs:\nk = 1\n").is_empty());
    assert!(parse_outputs_strict("xOutputs:\nk = 1\n").is_empty());
    assert_eq!(parse_outputs("x\nOutputs:\nk = 1\n"), raw(&[("k", "1")]));
}

#[test]
fn deploy_case_34b_one_blank_line_after_the_marker_is_skipped() {
    assert_eq!(parse_outputs("Outputs:\n\nk = 1\n\n"), raw(&[("k", "1")]));
    assert_eq!(
        parse_outputs_strict("Outputs:\n\nk = 1\n\n"),
        raw(&[("k", "1")])
    );
}

#[test]
fn deploy_case_34c_two_blank_lines_after_the_marker() {
    let stdout = "Outputs:\n\n\nk = 1\n\nlate = 2\n";
    // Recommended: blank lines after the marker are skipped, the next
    // blank line ends the block.
    assert_eq!(parse_outputs(stdout), raw(&[("k", "1")]));
    // Reference: the block runs to the end of stdout.
    assert_eq!(
        parse_outputs_strict(stdout),
        raw(&[("k", "1"), ("late", "2")])
    );
}

#[test]
fn deploy_case_34d_crlf() {
    let stdout = "Outputs:\r\nk = 1\r\n";
    assert_eq!(parse_outputs(stdout), raw(&[("k", "1")]));
    assert!(parse_outputs_strict(stdout).is_empty());
    // A CRLF blank line ends the block in the lenient reading only.
    let blank = "Outputs:\nk = 1\r\n\r\nlate = 2\n";
    assert_eq!(parse_outputs(blank), raw(&[("k", "1")]));
    assert_eq!(
        parse_outputs_strict(blank),
        raw(&[("k", "1"), ("late", "2")])
    );
}

#[test]
fn marker_with_trailing_spaces_is_accepted_leniently() {
    assert_eq!(parse_outputs("Outputs:  \nk = 1\n"), raw(&[("k", "1")]));
    assert!(parse_outputs_strict("Outputs:  \nk = 1\n").is_empty());
    assert!(parse_outputs("Outputs: k = 1\n").is_empty());
}

#[test]
fn whitespace_only_line_ends_the_block() {
    assert_eq!(
        parse_outputs("Outputs:\na = 1\n \t\nb = 2\n"),
        raw(&[("a", "1")])
    );
}

#[test]
fn block_without_blank_line_runs_to_the_end() {
    let stdout = "Outputs:\na = 1\nnoise\nb = 2";
    assert_eq!(parse_outputs(stdout), raw(&[("a", "1"), ("b", "2")]));
    assert_eq!(parse_outputs_strict(stdout), raw(&[("a", "1"), ("b", "2")]));
}

#[test]
fn comments_first_equals_and_lines_without_equals() {
    let parsed = parse_outputs("Outputs:\n#a = 1\n # b = 2\nno equals\nc==d\n");
    assert_eq!(parsed, raw(&[("# b", "2"), ("c", "=d")]));
}

#[test]
fn only_spaces_and_cr_are_trimmed() {
    let parsed = parse_outputs("Outputs:\n\tk = v\t\n  j =  w \r\n= empty key\n");
    assert_eq!(
        parsed,
        raw(&[("\tk", "v\t"), ("j", "w"), ("", "empty key")])
    );
}

#[test]
fn ansi_colours_are_stripped() {
    let parsed = parse_outputs("Outputs:\n\x1b[1mhost\x1b[0m = \x1b[32;1m\"h\"\x1b[0m\n");
    assert_eq!(parsed, raw(&[("host", "h")]));
    assert_eq!(strip_ansi("a\x1b[Kb"), "a\x1b[Kb");
}

#[test]
fn unquote_rules() {
    assert_eq!(unquote("\"a \\\"b\\\" c\""), "a \"b\" c");
    assert_eq!(unquote("\""), "\"");
    assert_eq!(unquote("\"\""), "");
    assert_eq!(unquote("https://x\""), "https://x\"");
    assert_eq!(unquote("\"a\\nb\""), "a\\nb");
}

#[test]
fn repeated_keys_accumulate_distinct_values() {
    let parsed = parse_outputs("Outputs:\na = 1\na = 2\na = 1\nb = x\n\nOutputs:\nb = x\na = 3\n");
    assert_eq!(parsed, raw(&[("a", "1,2,3"), ("b", "x")]));
}

#[test]
fn empty_values_are_kept() {
    assert_eq!(
        parse_outputs("Outputs:\nload_balancer = \n"),
        raw(&[("load_balancer", "")])
    );
}

#[test]
fn deploy_case_39_secrets_override_raw_keys() {
    let pad: Vec<u8> = (1..=64).collect();
    let line = otp::encode(b"password = s3cret\nuser = admin\n", &pad)
        .expect("fits")
        .expect("not blank");
    let stdout = format!("Outputs:\nuser = old\n{line}\n\n");
    let mut parsed = parse_outputs(&stdout);
    let mut warnings = Warnings::default();
    decode_secrets(&mut parsed, &pad, &mut warnings);
    assert_eq!(warnings.iter().count(), 0);
    assert_eq!(parsed["password"], "s3cret");
    assert_eq!(parsed["user"], "admin");
    assert!(parsed.contains_key(SECRETS_KEY));
}

#[test]
fn undecodable_secrets_are_a_warning() {
    let pad = [9u8; 16];
    let mut parsed = raw(&[("secrets", "AAAA,BBBB"), ("k", "v")]);
    let mut warnings = Warnings::default();
    decode_secrets(&mut parsed, &pad, &mut warnings);
    assert_eq!(parsed, raw(&[("secrets", "AAAA,BBBB"), ("k", "v")]));
    let messages: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(messages.len(), 1);
    assert!(messages[0].contains("secrets"), "{messages:?}");
}

#[test]
fn deploy_case_42_dynamic_provides() {
    assert_eq!(
        dynamic_provides(&raw(&[("provides", "tls,dns")])),
        ["tls", "dns"]
    );
    assert_eq!(
        dynamic_provides(&raw(&[("provides", " a , ,a,b ")])),
        ["a", "b"]
    );
    assert!(dynamic_provides(&raw(&[("provides", "")])).is_empty());
    assert!(dynamic_provides(&raw(&[])).is_empty());
}

fn decode(spec: &str, raw: &RawOutputs, dir: &Path) -> (Result<Value, CaptureError>, Vec<String>) {
    let mut warnings = Warnings::default();
    let result = decode_from_tf_var(spec, raw, dir, &mut warnings);
    (result, warnings.iter().map(|w| w.to_string()).collect())
}

fn yaml(text: &str) -> Value {
    yaml_serde::from_str(text).expect("yaml literal")
}

#[test]
fn deploy_case_36_encodings() {
    let outputs = raw(&[
        ("b", "aGVsbG8="),
        ("j", "{\"x\":[1,2]}"),
        ("bj", "eyJ4IjoxfQ=="),
    ]);
    let dir = Path::new(".");
    assert_eq!(
        decode("b/base64", &outputs, dir).0.expect("ok"),
        yaml("hello")
    );
    assert_eq!(
        decode("j/json", &outputs, dir).0.expect("ok"),
        yaml("{x: [1, 2]}")
    );
    assert_eq!(
        decode("bj/json/base64", &outputs, dir).0.expect("ok"),
        yaml("{x: 1}")
    );
    assert_eq!(
        decode("bj/base64/json", &outputs, dir).0.expect("ok"),
        yaml("{x: 1}")
    );
    let error = decode("b/rot13", &outputs, dir)
        .0
        .expect_err("unknown encoding");
    assert!(error.to_string().contains("rot13"), "{error}");
    assert!(error.hint().expect("hint").contains("base64"));
}

#[test]
fn bad_encodings_keep_the_text() {
    let outputs = raw(&[("t", "not base64!"), ("j", "{oops")]);
    let declared = vec![
        out("a", "t/base64"),
        out("b", "j/json"),
        out("c", "t/json/nope"),
    ];
    let mut warnings = Warnings::default();
    let (values, errors) = decode_declared(&declared, &outputs, Path::new("."), &mut warnings);
    assert_eq!(values["a"], yaml("not base64!"));
    assert_eq!(values["b"], yaml("'{oops'"));
    assert_eq!(values["c"], yaml("not base64!"));
    let kinds: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert!(
        kinds[0].starts_with("output `a`: raw output `t` is not valid base64"),
        "{kinds:?}"
    );
    assert!(kinds[1].contains("not valid JSON"), "{kinds:?}");
    assert!(kinds[2].contains("`nope`"), "{kinds:?}");
    assert!(kinds[3].starts_with("output `c`:"), "{kinds:?}");
}

#[test]
fn json_null_keeps_the_text_and_scalars_are_typed() {
    let outputs = raw(&[("n", "null"), ("i", "5"), ("s", "\"x\"")]);
    let dir = Path::new(".");
    assert_eq!(
        decode("n/json", &outputs, dir).0.expect("ok"),
        yaml("'null'")
    );
    assert_eq!(decode("i/json", &outputs, dir).0.expect("ok"), yaml("5"));
    assert_eq!(decode("s/json", &outputs, dir).0.expect("ok"), yaml("x"));
    assert_eq!(decode("i", &outputs, dir).0.expect("ok"), yaml("'5'"));
}

fn out(name: &str, from_tf_var: &str) -> Output {
    Output {
        name: name.into(),
        from_tf_var: from_tf_var.into(),
        ..Output::default()
    }
}

#[test]
fn deploy_case_35_missing_raw_output() {
    let outputs = raw(&[("seen", "1")]);
    let declared = vec![out("out", "nothere"), out("plain", ""), out("ok", "seen")];
    let mut warnings = Warnings::default();
    let (values, errors) = decode_declared(&declared, &outputs, Path::new("."), &mut warnings);
    assert_eq!(values.keys().collect::<Vec<_>>(), ["out", "ok"]);
    assert_eq!(values["out"], yaml("(unknown)"));
    assert_eq!(values["ok"], yaml("'1'"));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].output(), Some("out"));
    assert_eq!(
        errors[0].to_string(),
        "output `out`: raw output `nothere` was not printed"
    );
    assert!(errors[0].hint().expect("hint").contains("`seen`"));
}

#[test]
fn deploy_case_37_file_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("one.txt"), "line\n").expect("write");
    std::fs::write(dir.path().join("multi.txt"), "l1\nl2\n").expect("write");
    let abs = dir.path().join("abs.txt");
    std::fs::write(&abs, " abs \r\n").expect("write");
    let outputs = raw(&[
        ("f1", "file://one.txt"),
        ("f2", "file://multi.txt"),
        ("f4", "file://missing.txt"),
        ("f5", "file://"),
    ]);
    let mut outputs = outputs;
    outputs.insert("f3".into(), format!("file://{}", abs.display()));
    let d = dir.path();
    assert_eq!(decode("f1", &outputs, d).0.expect("ok"), yaml("line"));
    assert_eq!(
        decode("f2", &outputs, d).0.expect("ok"),
        Value::String("l1\nl2\n".into())
    );
    assert_eq!(decode("f3", &outputs, d).0.expect("ok"), yaml("abs"));
    let (missing, warnings) = decode("f4", &outputs, d);
    assert_eq!(missing.expect("a warning only"), yaml("file://missing.txt"));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("missing.txt"), "{warnings:?}");
    assert_eq!(decode("f5", &outputs, d).0.expect("ok"), yaml("'file://'"));
}

#[test]
fn file_content_is_decoded_after_dereferencing() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("t.b64"), "aGVs\nbG8=\n").expect("write");
    let outputs = raw(&[("t", "file://t.b64")]);
    assert_eq!(
        decode("t/base64", &outputs, dir.path()).0.expect("ok"),
        yaml("hello")
    );
}

#[test]
fn parse_lines_needs_no_marker() {
    assert_eq!(parse_lines("a = 1\n\nb=2"), raw(&[("a", "1"), ("b", "2")]));
}
