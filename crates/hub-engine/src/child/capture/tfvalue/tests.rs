use super::*;
use proptest::prelude::*;
use serde_json::json;

/// Terraform's own printing of a value (its `repl` formatter, which
/// `terraform apply` and `terraform output` use), for the round trip.
fn format(value: &Value, indent: usize) -> String {
    let pad = |n: usize| " ".repeat(n);
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let lines: Vec<&str> = s.split('\n').collect();
            if lines.len() < 2 {
                return go_quote(s);
            }
            let operator = if indent > 0 { "<<-" } else { "<<" };
            let mut delimiter = "EOT".to_string();
            while lines.iter().any(|l| l.trim() == delimiter) {
                delimiter.push('_');
            }
            let mut out = format!("{operator}{delimiter}");
            for line in lines {
                out.push('\n');
                out.push_str(&pad(indent));
                out.push_str(line);
            }
            out.push('\n');
            out.push_str(&pad(indent));
            out.push_str(&delimiter);
            out
        }
        Value::Array(items) if items.is_empty() => "[]".into(),
        Value::Array(items) => {
            let mut out = "[\n".to_string();
            for item in items {
                out.push_str(&pad(indent + 2));
                out.push_str(&format(item, indent + 2));
                out.push_str(",\n");
            }
            out.push_str(&pad(indent));
            out.push(']');
            out
        }
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => {
            let mut out = "{\n".to_string();
            for (key, item) in map {
                out.push_str(&pad(indent + 2));
                out.push_str(&go_quote(key));
                out.push_str(" = ");
                out.push_str(&format(item, indent + 2));
                out.push('\n');
            }
            out.push_str(&pad(indent));
            out.push('}');
            out
        }
    }
}

/// Go's `strconv.Quote` for the characters the strategies make.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn value_strategy() -> impl Strategy<Value = Value> {
    let text = proptest::string::string_regex(
        "[a-zA-Z0-9 \"\\\\{}\\[\\]=,<>:é\t-]{0,12}(\n[a-zA-Z EOT\"{}]{0,8}){0,3}",
    )
    .expect("a valid regex");
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_\" .]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever Terraform prints, the parser reads back to the value
    /// `terraform output -json` gives, and the scan ends on its last line.
    #[test]
    fn what_terraform_prints_reads_back(value in value_strategy()) {
        let printed = format(&value, 0);
        prop_assert_eq!(parse(&printed).expect("parses"), value.clone());
        let mut lines = printed.split('\n');
        let first = lines.next().expect("a first line");
        if opens_multiline(first) {
            let mut scan = Scan::start(first);
            let rest: Vec<&str> = lines.collect();
            for (i, line) in rest.iter().enumerate() {
                prop_assert!(!scan.done(), "done before line {}", i);
                scan.line(line);
            }
            prop_assert!(scan.done());
        }
    }

    /// The parser never panics, whatever it is given.
    #[test]
    fn any_text_is_an_answer(text in "\\PC{0,40}(\n\\PC{0,20}){0,3}") {
        let _ = parse(&text);
        let mut scan = Scan::start(&text);
        scan.line(&text);
    }
}

#[test]
fn the_issue_example() {
    let note = "<<EOT\nline1\nline2 \"q\"\nEOT";
    assert_eq!(parse(note).expect("heredoc"), json!("line1\nline2 \"q\""));
    let subnets = "[\n  \"a\",\n  \"b\",\n]";
    assert_eq!(parse(subnets).expect("list"), json!(["a", "b"]));
    let tags = "{\n  \"env\" = \"dev\"\n  \"team\" = \"core\"\n}";
    assert_eq!(
        parse(tags).expect("map"),
        json!({"env": "dev", "team": "core"})
    );
}

#[test]
fn typed_collections_and_nested_heredocs() {
    let text = "tolist([\n  \"a\",\n  <<-EOT\n  x\n\n    y\n  EOT,\n])";
    assert_eq!(parse(text).expect("list"), json!(["a", "x\n\n  y"]));
    let map = "tomap({\n  \"k\" = 1\n  other = true\n  \"n\" = null\n  \"f\" = 1.5\n})";
    assert_eq!(
        parse(map).expect("map"),
        json!({"k": 1, "other": true, "n": null, "f": 1.5})
    );
    assert_eq!(parse("toset([])").expect("set"), json!([]));
    let objects = "[\n  {\n    \"name\" = \"a\"\n    \"ports\" = [\n      80,\n    ]\n  },\n]";
    assert_eq!(
        parse(objects).expect("tuple"),
        json!([{"name": "a", "ports": [80]}])
    );
}

#[test]
fn go_escapes_are_resolved() {
    assert_eq!(
        unquote_go(r#""a\"b\\c\n\t\u00e9\x41""#).as_deref(),
        Some("a\"b\\c\n\té\x41")
    );
    assert_eq!(unquote_go(r#""C:\q""#), None);
    assert_eq!(unquote_go(r#""a" "b""#), None);
}

#[test]
fn broken_values_say_why() {
    assert_eq!(
        parse("[\n  \"a\"\n  \"b\",\n]").expect_err("no comma"),
        "expected `,` or `]`, found `\"`"
    );
    assert!(parse("<<EOT\nno end")
        .expect_err("open")
        .contains("not closed by a line `EOT`"));
    assert!(parse("{\n  \"k\" \"v\"\n}")
        .expect_err("no =")
        .contains("expected `=`"));
}

#[test]
fn openers() {
    for opener in [
        "[", "{", "tolist([", "toset([", "tomap({", "<<EOT", "<<-EOT_",
    ] {
        assert!(opens_multiline(opener), "{opener}");
    }
    for other in ["[a, b]", "<<", "<<1x", "\"[\"", "x", "see <<EOT", "a<<EOT"] {
        assert!(!opens_multiline(other), "{other}");
    }
    assert!(is_empty_collection("tolist([ ])"));
    assert!(!is_empty_collection("[1]"));
}
