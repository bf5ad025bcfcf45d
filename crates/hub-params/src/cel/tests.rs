use super::*;

fn eval(source: &str, bindings: &[(&str, &str)]) -> Result<String, CelFailure> {
    let cel = Cel::default();
    let compiled = cel.compile(source)?;
    cel.evaluate(&compiled, |name| {
        bindings
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| Value::String(v.to_string()))
    })
}

#[test]
fn dotted_names_resolve_longest_first() {
    assert_eq!(
        eval("a.b + '/' + a.b.c", &[("a.b", "x"), ("a.b.c", "y")]).unwrap(),
        "x/y"
    );
    assert_eq!(eval("a.b", &[("a.b", "x"), ("a", "y")]).unwrap(), "x");
}

#[test]
fn names_lists_every_prefix() {
    let compiled = Cel::default().compile("size(a.b.c) > 0 ? x : 'y'").unwrap();
    let mut names = compiled.names().to_vec();
    names.sort();
    assert_eq!(
        names,
        vec![
            vec!["a.b.c".to_string(), "a.b".into(), "a".into()],
            vec!["x".to_string()]
        ]
    );
}

#[test]
fn typed_values_bind_as_typed() {
    let cel = Cel::default();
    let compiled = cel.compile("n + 1").unwrap();
    let out = cel
        .evaluate(&compiled, |_| Some(Value::Number(41.into())))
        .unwrap();
    assert_eq!(out, "42");
}

#[test]
fn shapes_share_one_parse_and_keep_meaning() {
    let cel = Cel::default();
    for (source, bindings, expected) in [
        ("size(a.b) > 0 ? a.b : 'none'", vec![("a.b", "x")], "x"),
        ("size(c) > 0 ? c : 'none'", vec![("c", "")], "none"),
        ("a.b.size() + int(n)", vec![("a.b", "abc"), ("n", "2")], "5"),
        (
            "x == \"a.b\" && y in ['q', 'r']",
            vec![("x", "a.b"), ("y", "r")],
            "true",
        ),
        ("1e3 + 2.5 == 1002.5 && 3u > 2u", vec![], "true"),
        ("[1, 2].map(v, v * 2)[1]", vec![], "4"),
    ] {
        let compiled = cel.compile(source).unwrap();
        let direct = Compiled {
            names: Vec::new(),
            expression: cel.parse(source).unwrap(),
        };
        let lookup = |name: &str| {
            bindings
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| Value::String(v.to_string()))
        };
        assert_eq!(
            cel.evaluate(&compiled, lookup).unwrap(),
            expected,
            "{source}"
        );
        assert_eq!(cel.evaluate(&direct, lookup).unwrap(), expected, "{source}");
    }
    assert_eq!(cel.shapes.borrow().len(), 5, "the first two share a shape");
    cel.compile("size(other.name) > 0 ? other.name : 'none'")
        .unwrap();
    assert_eq!(cel.shapes.borrow().len(), 5, "same shape as the first");
}

#[test]
fn shape_text() {
    use shape::Slot;
    let shape =
        shape::of("size(a.b) > 10 && a.b.startsWith('a.b') || has(x.y) || 'q\\n'.size() > 1.5")
            .unwrap();
    assert_eq!(
        shape.text,
        "size(_hub_0) > _hub_1 && _hub_0.startsWith(_hub_2) || has(_hub_3) || 'q\\n'.size() > 1.5"
    );
    assert_eq!(
        shape.slots,
        vec![
            Slot::Name("a.b".into()),
            Slot::Int(10),
            Slot::Text("a.b".into()),
            Slot::Name("x.y".into())
        ]
    );
}

#[test]
fn a_literal_where_a_field_name_goes_is_a_parse_error_either_way() {
    for source in ["a . ? 0", "a.?'s'", "a . 7", "x.?1 == 2"] {
        let cel = Cel::default();
        assert!(
            matches!(cel.compile(source), Err(CelFailure::Parse(_))),
            "{source}"
        );
        assert!(cel.parse(source).is_err(), "{source}");
    }
}

#[test]
fn timestamps_print_like_protobuf_text() {
    assert_eq!(
        eval("timestamp('2020-01-01T00:00:00Z')", &[]).unwrap(),
        "seconds:1577836800 "
    );
    assert_eq!(
        eval("timestamp('2020-01-01T02:00:00.5+02:00')", &[]).unwrap(),
        "seconds:1577836800 nanos:500000000 "
    );
    assert_eq!(
        eval("timestamp('1969-12-31T23:59:59Z')", &[]).unwrap(),
        "seconds:-1 "
    );
    assert!(eval("timestamp('2020-13-01T00:00:00Z')", &[]).is_err());
    assert!(eval("timestamp(1)", &[]).is_err());
}

#[test]
fn reference_operator_semantics() {
    assert_eq!(
        eval("9223372036854775807 + 1", &[]).unwrap(),
        "-9223372036854775808"
    );
    assert!(
        eval("a == 1", &[("a", "1")]).is_err(),
        "no equality across types"
    );
    assert_eq!(
        eval("a != 'x' && [1] + [2] == [1, 2]", &[("a", "y")]).unwrap(),
        "true"
    );
    assert!(eval("2.5 * 2", &[]).is_err(), "no mixed arithmetic");
    assert_eq!(
        eval("007 == 7", &[]).is_err(),
        Cel::default().parse("007 == 7").is_err(),
        "shapes keep the parser's verdict"
    );
}

proptest::proptest! {
    /// Sharing parses between expressions of the same shape never
    /// changes a result: random token soups give the same outcome
    /// (value or error) either way.
    #[test]
    fn shapes_never_change_results(tokens in proptest::collection::vec(proptest::sample::select(vec![
        "a", "a.b", "x", "0", "7", "007", "'s'", "\"t\"", "r'\\d'", "1.5", "2u", "true", "null", "in",
        "==", "!=", "+", "-", "*", "&&", "||", "?", ":", "(", ")", "[", "]", "{", "}", ",", ".", "!",
        "size(", "int(", "string(", ".size()", "has(", "matches(",
    ]), 1..9)) {
        let source = tokens.join(" ");
        let cel = Cel::default();
        let bindings = [("a", "1"), ("a.b", "x"), ("x", "y")];
        let lookup = |name: &str| bindings.iter().find(|(k, _)| *k == name).map(|(_, v)| Value::String(v.to_string()));
        let shared = cel.compile(&source).and_then(|c| cel.evaluate(&c, lookup));
        let direct = cel
            .parse(&source)
            .map(|expression| Compiled { expression, names: Vec::new() })
            .and_then(|c| cel.evaluate(&c, lookup));
        proptest::prop_assert_eq!(shared.is_ok(), direct.is_ok(), "{}: {:?} vs {:?}", source, shared, direct);
        if let (Ok(a), Ok(b)) = (&shared, &direct) {
            proptest::prop_assert_eq!(a, b, "{}", source);
        }
    }
}

proptest::proptest! {
    #[test]
    fn any_text_compiles_or_fails_cleanly(source in "[ -~]{0,24}") {
        let cel = Cel::default();
        if let Ok(compiled) = cel.compile(&source) {
            let _ = cel.evaluate(&compiled, |_| None);
        }
    }
}

#[test]
fn errors_are_classified() {
    assert!(matches!(eval("1 +", &[]), Err(CelFailure::Parse(_))));
    assert!(matches!(eval("missing", &[]), Err(CelFailure::Eval(_))));
}
