use super::*;
use yaml_serde::Value;

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
    let printed = read_outputs("Outputs:\n\tk = v\t\n  j =  w \r\n= empty key\n");
    assert_eq!(printed.raw, raw(&[("\tk", "v\t"), ("j", "w")]));
    // A line without a name is reported, not recorded under "".
    assert_eq!(
        printed.malformed,
        [Malformed {
            key: None,
            line: "= empty key".into(),
            problem: "it has no name before `=`".into()
        }]
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
    // Go's escapes, as Terraform quotes; invalid ones keep the old reading.
    assert_eq!(unquote("\"a\\nb\""), "a\nb");
    assert_eq!(unquote("\"C:\\q \\\"x\\\"\""), "C:\\q \"x\"");
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

/// The block of the issue: Terraform ≥ 0.14's `terraform apply` output.
const TERRAFORM_BLOCK: &str = "Apply complete! Resources: 0 added, 0 changed, 0 destroyed.\n\n\
\x1b[0m\x1b[1m\x1b[32mOutputs:\x1b[0m\n\nnote = <<EOT\nline1\n\nline2 \"q\"\nEOT\nsecret_token = <sensitive>\n\
subnets = [\n  \"a\",\n  \"b\",\n]\nempty = tolist([])\ntags = {\n  \"env\" = \"dev\"\n  \"team\" = \"core\"\n}\n\
vpc_id = \"vpc-88c24e8b\"\n\nafter the block\n";

#[test]
fn terraform_values_are_read_to_their_end() {
    let printed = read_outputs(TERRAFORM_BLOCK);
    assert_eq!(
        printed.raw,
        raw(&[
            ("note", "line1\n\nline2 \"q\""),
            ("subnets", r#"["a","b"]"#),
            ("empty", "[]"),
            ("tags", r#"{"env":"dev","team":"core"}"#),
            ("vpc_id", "vpc-88c24e8b"),
        ])
    );
    assert_eq!(
        printed.structured.iter().collect::<Vec<_>>(),
        ["empty", "subnets", "tags"]
    );
    assert_eq!(
        printed.sensitive.iter().collect::<Vec<_>>(),
        ["secret_token"]
    );
    assert!(printed.malformed.is_empty(), "{:?}", printed.malformed);
}

fn declared(name: &str, from: &str) -> Output {
    Output {
        name: name.into(),
        from_tf_var: from.into(),
        ..Output::default()
    }
}

#[test]
fn declared_outputs_get_structures_and_never_the_placeholder() {
    let printed = read_outputs(TERRAFORM_BLOCK);
    let outputs = [
        declared("subnets", "subnets"),
        declared("subnets_json", "subnets/json"),
        declared("tags", "tags"),
        declared("note", "note"),
        declared("token", "secret_token"),
    ];
    let mut warnings = Warnings::default();
    let (values, errors) = decode_printed(&outputs, &printed, Path::new("."), &mut warnings);
    let list: Value = yaml_serde::from_str("[a, b]").expect("yaml");
    assert_eq!(values["subnets"], list);
    assert_eq!(values["subnets_json"], list);
    assert_eq!(
        values["tags"],
        yaml_serde::from_str::<Value>("{env: dev, team: core}").expect("yaml")
    );
    assert_eq!(values["note"], Value::String("line1\n\nline2 \"q\"".into()));
    assert_eq!(values["token"], Value::String(UNKNOWN.into()));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "output `token`: raw output `secret_token` was printed as `<sensitive>`, Terraform's placeholder \
         for a sensitive value, not the value; read it in the component with `terraform output -raw \
         secret_token` (or `-json`) and print that, or let hub deploy the component itself (a folder of \
         `*.tf` files without a Makefile or deploy script), which records sensitive outputs as secrets"
    );
}

#[test]
fn malformed_lines_are_reported_and_an_output_left_empty_is_an_error() {
    let printed = read_outputs("Outputs:\nurl https://db.nowhere\n= empty-name\nport = \nok = 1\n");
    let lines: Vec<(Option<&str>, &str, &str)> = printed
        .malformed
        .iter()
        .map(|m| (m.key.as_deref(), m.line.as_str(), m.problem.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (Some("url"), "url https://db.nowhere", "it has no `=`"),
            (None, "= empty-name", "it has no name before `=`"),
            (Some("port"), "port =", "it has no value after `=`"),
        ]
    );
    assert_eq!(
        printed.malformed[0].warning("db"),
        "component `db` printed `url https://db.nowhere` in an `Outputs:` block: it has no `=`; \
         expected `name = value`"
    );
    let outputs = [
        declared("url", "url"),
        declared("port", "port"),
        declared("ok", "ok"),
    ];
    let (values, errors) =
        decode_printed(&outputs, &printed, Path::new("."), &mut Warnings::default());
    assert_eq!(values["ok"], Value::String("1".into()));
    let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        texts,
        [
            "output `url`: raw output `url` is empty because the line `url https://db.nowhere` of the \
             `Outputs:` block gave no value (it has no `=`); print it as `url = value`",
            "output `port`: raw output `port` is empty because the line `port =` of the `Outputs:` block \
             gave no value (it has no value after `=`); print it as `port = value`",
        ]
    );
}

#[test]
fn an_unclosed_or_broken_value_is_reported_with_its_line() {
    let printed = read_outputs("Outputs:\nlist = [\n  \"a\"\n  \"b\",\n]\nopen = <<EOT\nx\n");
    assert!(printed.raw.is_empty(), "{:?}", printed.raw);
    let problems: Vec<String> = printed.malformed.iter().map(|m| m.warning("c")).collect();
    assert_eq!(
        problems,
        [
            "component `c` printed `list = [` in an `Outputs:` block: its value is not one Terraform \
             prints: expected `,` or `]`, found `\"`; expected `name = value`",
            "component `c` printed `open = <<EOT` in an `Outputs:` block: the value it opens with \
             `<<EOT` is not closed before the output ends; expected `name = value`",
        ]
    );
}

#[test]
fn a_heredoc_with_blank_lines_is_one_value_for_every_reader() {
    let stdout = "Outputs:\n\ncert = <<EOT\n-----BEGIN-----\n\nabc\nEOT\nnext = 2\n\nlate = 3\n";
    let mut blocks = Blocks::default();
    let seen: Vec<BlockLine> = stdout.split('\n').map(|l| blocks.step(l)).collect();
    use BlockLine::*;
    assert_eq!(
        seen,
        [
            Marker, Leading, Entry, Continued, Continued, Continued, Continued, Entry, End,
            Outside, Outside
        ]
    );
    assert_eq!(
        parse_outputs(stdout),
        raw(&[("cert", "-----BEGIN-----\n\nabc"), ("next", "2")])
    );
}
