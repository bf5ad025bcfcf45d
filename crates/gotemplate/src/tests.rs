//! One row per construct and per function: the template, and what it
//! renders (`Ok`) or a fragment of its error with the line (`Err`).

use super::*;

fn data() -> Value {
    let params: Vec<(&str, &str)> = vec![
        ("svc.name", "orbit-api"),
        ("svc.pad", "'  wide  '"),
        ("svc.count", "7"),
        ("svc.weight", "2.5"),
        ("svc.on", "true"),
        ("svc.off", "false"),
        ("svc.blank", "''"),
        ("svc.zones", "[b, a, c]"),
        ("net.edge-host", "gw"),
        ("net.zone", "corp.test"),
        ("hub.componentName", "web"),
        ("hosts", "'one.test  two.test'"),
        ("label", "'<a&b>'"),
    ];
    let values: Vec<(String, yaml_serde::Value)> = params
        .into_iter()
        .map(|(k, v)| (k.to_string(), yaml_serde::from_str(v).expect("yaml")))
        .collect();
    bindings(values.iter().map(|(k, v)| (k.as_str(), Some(v)))).0
}

type Row = (
    &'static str,
    &'static str,
    Result<&'static str, &'static str>,
);

const ROWS: &[Row] = &[
    // actions, fields, binding
    ("text", "plain", Ok("plain")),
    ("field", "{{.svc.name}}", Ok("orbit-api")),
    ("dash becomes underscore", "{{.net.edge_host}}", Ok("gw")),
    ("strings are trimmed", "[{{.svc.pad}}]", Ok("[wide]")),
    ("int", "{{.svc.count}}", Ok("7")),
    ("float", "{{.svc.weight}}", Ok("2.5")),
    ("list prints like Go", "{{.svc.zones}}", Ok("[b a c]")),
    ("map prints sorted", "{{.net}}", Ok("map[edge_host:gw zone:corp.test]")),
    ("dot", "{{with .net}}{{.zone}}{{end}}", Ok("corp.test")),
    ("root variable", "{{with .net}}{{$.svc.name}}{{end}}", Ok("orbit-api")),
    ("comment", "a{{/* c */}}b", Ok("ab")),
    ("trim both", "a  {{- 1 -}}  b", Ok("a1b")),
    ("negative number is not a trim", "{{-3}}", Ok("-3")),
    // literals
    ("string escapes", r#"{{"a\tb"}}"#, Ok("a\tb")),
    ("raw string", "{{`a\\tb`}}", Ok("a\\tb")),
    ("char", "{{'a'}}", Ok("97")),
    ("hex", "{{0x1F}}", Ok("31")),
    ("exponent is a float", "{{1e3}}", Ok("1000")),
    ("bools", "{{true}} {{false}}", Ok("true false")),
    // control
    ("if", "{{if .svc.on}}y{{end}}", Ok("y")),
    ("if else", "{{if .svc.off}}y{{else}}n{{end}}", Ok("n")),
    ("else if", "{{if .svc.off}}1{{else if .svc.blank}}2{{else}}3{{end}}", Ok("3")),
    ("range list", "{{range .svc.zones}}{{.}},{{end}}", Ok("b,a,c,")),
    ("range index value", "{{range $i, $z := .svc.zones}}{{$i}}{{$z}}{{end}}", Ok("0b1a2c")),
    ("range map sorted", "{{range $k, $v := .net}}{{$k}}={{$v}};{{end}}", Ok("edge_host=gw;zone=corp.test;")),
    ("range else", "{{range list}}x{{else}}empty{{end}}", Ok("empty")),
    ("break", "{{range .svc.zones}}{{if eq . \"a\"}}{{break}}{{end}}{{.}}{{end}}", Ok("b")),
    ("continue", "{{range .svc.zones}}{{if eq . \"a\"}}{{continue}}{{end}}{{.}}{{end}}", Ok("bc")),
    ("with else", "{{with .svc.blank}}x{{else}}none{{end}}", Ok("none")),
    ("with variable", "{{with $n := .svc.name}}{{$n}}{{end}}", Ok("orbit-api")),
    ("assignment", "{{$x := 1}}{{if .svc.on}}{{$x = 2}}{{end}}{{$x}}", Ok("2")),
    ("scoped variable", "{{$x := 1}}{{with .svc}}{{$x := 2}}{{end}}{{$x}}", Ok("1")),
    ("define and template", "{{define \"t\"}}<{{.}}>{{end}}{{template \"t\" .svc.name}}", Ok("<orbit-api>")),
    ("block", "{{block \"b\" .net.zone}}[{{.}}]{{end}}", Ok("[corp.test]")),
    // pipelines and builtins
    ("pipeline", "{{.svc.name | printf \"%s!\"}}", Ok("orbit-api!")),
    ("parenthesized", "{{printf \"%d\" (len .svc.zones)}}", Ok("3")),
    ("printf verbs", "{{printf \"%5.2f|%q|%v|%x|%-4s|%03d|%T\" .svc.weight .svc.name .svc.zones 255 \"a\" 7 .net}}", Ok(" 2.50|\"orbit-api\"|[b a c]|ff|a   |007|map[string]interface {}")),
    ("print", "{{print \"a\" 1 2 \"b\"}}", Ok("a1 2b")),
    ("println", "{{println 1 \"a\"}}", Ok("1 a\n")),
    ("len", "{{len .svc.name}} {{len .net}}", Ok("9 2")),
    ("index", "{{index .svc.zones 1}} {{index . \"net\" \"zone\"}}", Ok("a corp.test")),
    ("slice", "{{slice .svc.zones 1}}", Ok("[a c]")),
    ("and or", "{{and 1 .svc.blank 2}}|{{or .svc.blank .svc.name}}", Ok("|orbit-api")),
    ("not", "{{not .svc.on}}", Ok("false")),
    ("comparisons", "{{eq .svc.count 7}} {{eq .svc.name \"x\" \"orbit-api\"}} {{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt \"b\" \"a\"}} {{ge 2.5 .svc.weight}}", Ok("true true true true true true true")),
    ("html js urlquery", "{{html .label}} {{js .label}} {{urlquery .label}}", Ok("&lt;a&amp;b&gt; \\u003Ca\\u0026b\\u003E %3Ca%26b%3E")),
    // sprig
    ("default empty", "{{default \"d\" .svc.blank}} {{.svc.off | default \"f\"}}", Ok("d f")),
    ("ternary", "{{ternary \"y\" \"n\" .svc.on}}", Ok("y")),
    ("quote squote", "{{quote .svc.name 7}} {{squote .svc.name}}", Ok("\"orbit-api\" \"7\" 'orbit-api'")),
    ("upper lower title", "{{upper \"aß\"}} {{lower \"AB\"}} {{title \"a b\"}}", Ok("Aß ab A B")),
    ("trim family", "{{trim \" x \"}}{{trimSuffix \".test\" .net.zone}}{{trimPrefix \"orbit-\" .svc.name}}{{trimAll \"-\" \"-x-\"}}", Ok("xcorpapix")),
    ("replace contains", "{{replace \"-\" \"_\" .svc.name}} {{contains \"bit\" .svc.name}} {{hasPrefix \"orb\" .svc.name}} {{hasSuffix \"api\" .svc.name}}", Ok("orbit_api true true true")),
    ("indent nindent", "{{indent 2 \"a\\nb\"}}|{{nindent 1 \"c\"}}", Ok("  a\n  b|\n c")),
    ("substr trunc repeat", "{{substr 0 5 .svc.name}} {{trunc 3 .svc.name}} {{repeat 2 \"ab\"}}", Ok("orbit orb abab")),
    ("cases", "{{snakecase \"OrbitApi\"}} {{camelcase \"orbit_api\"}} {{kebabcase \"OrbitApi\"}}", Ok("orbit_api OrbitApi orbit-api")),
    ("wrap", "{{wrap 5 \"aa bb cc\"}}", Ok("aa bb\ncc")),
    ("encodings", "{{b64enc \"hi\"}} {{b64dec \"aGk=\"}} {{b32enc \"hi\"}} {{sha256sum \"hi\"}}", Ok("aGk= hi NBUQ==== 8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4")),
    ("json", "{{toJson .label}} {{toJson .svc.zones}} {{toRawJson .label}}", Ok("\"\\u003ca\\u0026b\\u003e\" [\"b\",\"a\",\"c\"] \"<a&b>\"")),
    ("pretty json", "{{toPrettyJson (dict \"a\" 1)}}", Ok("{\n  \"a\": 1\n}")),
    ("lists", "{{list 1 \"a\" | len}} {{first .svc.zones}} {{last .svc.zones}} {{rest .svc.zones}} {{initial .svc.zones}} {{reverse .svc.zones}} {{append .svc.zones \"d\"}} {{prepend .svc.zones \"z\"}}", Ok("2 b c [a c] [b a] [c a b] [b a c d] [z b a c]")),
    ("uniq has without", "{{uniq (list 1 1 2)}} {{has \"a\" .svc.zones}} {{without .svc.zones \"a\"}}", Ok("[1 2] true [b c]")),
    ("sortAlpha until", "{{sortAlpha .svc.zones}} {{until 3}} {{untilStep 0 6 2}}", Ok("[a b c] [0 1 2] [0 2 4]")),
    ("dicts", "{{$d := dict \"a\" 1 \"b\" 2}}{{$_ := set $d \"c\" 3}}{{keys $d | sortAlpha}} {{hasKey $d \"c\"}} {{pick $d \"a\"}} {{omit $d \"a\"}} {{get $d \"b\"}}", Ok("[a b c] true map[a:1] map[b:2 c:3] 2")),
    ("merge", "{{merge (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) | toJson}} {{mergeOverwrite (dict \"a\" 1) (dict \"a\" 2) | toJson}}", Ok("{\"a\":1,\"b\":3} {\"a\":2}")),
    ("numbers", "{{add 1 2 3}} {{sub 5 7}} {{mul 2 3}} {{div 7 2}} {{mod 7 2}} {{max 1 9 3}} {{min 4 2}} {{add1 1}} {{ceil 1.2}} {{floor 1.8}} {{round 2.456 2}}", Ok("6 -2 6 3 1 9 2 2 2 1 2.46")),
    ("conversions", "{{atoi \"12\"}} {{int \"0x10\"}} {{float64 \"1.5\"}} {{toString 7}} {{toDecimal \"17\"}}", Ok("12 16 1.5 7 15")),
    ("reflection", "{{typeOf .svc.zones}} {{kindOf .net}} {{typeIs \"int\" .svc.count}} {{kindIs \"string\" .svc.name}}", Ok("[]interface {} map true true")),
    ("regex", "{{regexMatch \"^o\" .svc.name}} {{regexReplaceAll \"(\\\\w+)-(\\\\w+)\" .svc.name \"${2}-${1}\"}} {{regexFindAll \"[a-c]\" \"abcabc\" 2}} {{regexSplit \"-\" .svc.name -1}}", Ok("true api-orbit [a b] [orbit api]")),
    ("semver", "{{semverCompare \">=1.2\" \"1.10.0\"}} {{(semver \"1.2.3-rc.1\").Prerelease}}", Ok("true rc.1")),
    ("url", "{{(urlParse \"https://u@h:1/p?q=1#f\").host}} {{urlJoin (dict \"scheme\" \"http\" \"host\" \"h\" \"path\" \"/x\")}}", Ok("h:1 http://h/x")),
    ("paths", "{{base \"/a/b.c\"}} {{dir \"/a/b\"}} {{ext \"x.tar.gz\"}} {{clean \"a/../b\"}} {{isAbs \"/a\"}}", Ok("b.c /a .gz b true")),
    ("coalesce empty cat", "{{coalesce .svc.blank 0 \"x\"}} {{empty .svc.zones}} {{cat \"a\" nil \"b\"}}", Ok("x false a b")),
    ("plural initials abbrev", "{{plural \"one\" \"many\" 2}} {{initials \"a b\"}} {{abbrev 5 \"abcdefgh\"}}", Ok("many ab ab...")),
    (
        "dates",
        "{{$t := toDate \"2006-01-02T15:04:05Z07:00\" \"2021-03-04T05:06:07+02:00\"}}{{dateInZone \"2006-01-02 15:04 MST\" $t \"UTC\"}} {{unixEpoch $t}} {{dateInZone \"15:04\" (dateModify \"90m\" $t) \"UTC\"}} {{htmlDateInZone $t \"UTC\"}} {{duration 5400}}",
        Ok("2021-03-04 03:06 UTC 1614827167 04:36 2021-03-04 1h30m0s"),
    ),
    ("a date that does not parse", "{{toDate \"2006-01-02\" \"x\"}}", Err("error calling toDate: parsing time \"x\"")),
    ("an unknown zone", "{{dateInZone \"15:04\" 0 \"Nowhere/City\"}}", Err("unknown time zone Nowhere/City")),
    ("digests", "{{sha1sum \"abc\"}} {{adler32sum \"Wikipedia\"}} {{randBytes 3 | len}}", Ok("a9993e364706816aba3e25717850c26c9cd0d89d 300286872 4")),
    ("durationRound", "{{durationRound \"49h\"}} {{durationRound \"-90s\"}} {{durationRound 0}}", Ok("2d 1m 0s")),
    ("aes", "{{encryptAES \"k\" \"secret\" | decryptAES \"k\"}}", Ok("secret")),
    ("derivePassword", "{{derivePassword 3 \"pin\" \"master-pw\" \"dev-user\" \"corp.test\"}}", Ok("0056")),
    // the successor's functions
    ("split one argument", "{{split .hosts}}", Ok("[one.test two.test]")),
    ("split two arguments (sprig)", "{{$s := split \".\" .net.zone}}{{$s._0}} {{$s._1}}", Ok("corp test")),
    ("compact", "{{compact (list \"\" \"a\" 0)}} {{.hosts | split | compact}} {{compact \" a \" \"\"}}", Ok("[a] [one.test two.test] [a]")),
    ("join", "{{join \",\" .svc.zones}} {{join .svc.zones \"+\"}} {{join .svc.zones}}", Ok("b,a,c b+a+c b a c")),
    ("formatSubdomain", "{{formatSubdomain \"Orbit API.test\"}} {{formatSubdomain \"a b c\" 3 \"_\"}}", Ok("orbit-api-test a_b")),
    ("unquote", "{{unquote \"'a'\"}} {{unquote \"\\\"b\\\"\"}} {{unquote \"c\"}}", Ok("a b c")),
    ("bcrypt", "{{bcrypt \"pw\" | len}}", Ok("60")),
    // errors: the line and the key or function
    ("missing key", "ok\n{{.svc.nothing}}", Err("2: map has no entry for key \"nothing\" (in `.svc.nothing`)")),
    ("missing top key", "{{.nothing.below}}", Err("1: map has no entry for key \"nothing\" (in `.nothing`)")),
    ("field of a string", "{{.svc.name.first}}", Err("can't evaluate field first in type string")),
    ("unknown function", "\n\n{{if false}}{{nope 1}}{{end}}", Err("3: function \"nope\" not defined")),
    ("missing sprig function", "{{genCA \"x\" 1}}", Err("function \"genCA\" not defined (a Sprig function this hub does not offer)")),
    ("unclosed if", "{{if .svc.on}}\nx", Err("1: unexpected EOF: {{if}} has no matching {{end}}")),
    ("unexpected end", "x\n{{end}}", Err("2: unexpected {{end}}")),
    ("index out of range", "{{index .svc.zones 9}}", Err("error calling index: index out of range: 9")),
    ("incompatible comparison", "{{eq .svc.count \"7\"}}", Err("incompatible types for comparison: int and string")),
    ("argument to a non-function", "{{.svc.name 1}}", Err("can't give argument to non-function .svc.name")),
    ("undefined variable", "{{$x}}", Err("undefined variable: $x")),
    ("no such template", "{{template \"x\"}}", Err("no such template \"x\"")),
    ("range over a string", "{{range .svc.name}}{{end}}", Err("range can't iterate over orbit-api")),
    ("fail", "{{fail \"stop here\"}}", Err("error calling fail: stop here")),
    ("unterminated string", "{{\"abc}}", Err("unterminated quoted string")),
    ("break outside range", "{{break}}", Err("{{break}} or {{continue}} outside {{range}}")),
    ("wrong argument count", "{{ternary 1 2}}", Err("wrong number of args for ternary: want 3 got 2")),
];

#[test]
fn go_template_table() {
    let data = data();
    let mut failures = Vec::new();
    for (name, template, expected) in ROWS {
        let actual = render(template, &data).map_err(|e| format!("{}: {}", e.line, e.message));
        let ok = match (expected, &actual) {
            (Ok(want), Ok(got)) => want == got,
            (Err(fragment), Err(got)) => got.contains(fragment),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name}: {template:?}\n    want {expected:?}\n    got  {actual:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

#[test]
fn random_functions_have_their_shape() {
    let data = data();
    let text = render(
        "{{randAlpha 5}}\n{{randAlphaNum 6}}\n{{randNumeric 4}}\n{{randAscii 3}}\n{{uuidv4}}\n{{shuffle \"abc\"}}",
        &data,
    )
    .expect("render");
    // `randAscii` may print any printable character, so lines separate.
    let parts: Vec<&str> = text.split('\n').collect();
    assert!(
        parts[0].len() == 5 && parts[0].chars().all(|c| c.is_ascii_alphabetic()),
        "{text}"
    );
    assert!(
        parts[1].len() == 6 && parts[1].chars().all(|c| c.is_ascii_alphanumeric()),
        "{text}"
    );
    assert!(
        parts[2].len() == 4 && parts[2].chars().all(|c| c.is_ascii_digit()),
        "{text}"
    );
    assert_eq!(parts[3].len(), 3, "{text}");
    assert_eq!(parts[4].len(), 36, "{text}");
    let mut shuffled: Vec<char> = parts[5].chars().collect();
    shuffled.sort();
    assert_eq!(shuffled, ['a', 'b', 'c']);
}

#[test]
fn bcrypt_hashes_verify() {
    let hash = render("{{bcrypt \"secret\"}}", &data()).expect("render");
    assert!(hash.starts_with("$2") && hash.contains("$10$"), "{hash}");
    assert!(bcrypt::verify("secret", &hash).expect("valid hash"));
}

#[test]
fn a_leaf_and_a_prefix_keep_the_first_and_report_the_other() {
    let a: yaml_serde::Value = yaml_serde::from_str("1").expect("yaml");
    let b: yaml_serde::Value = yaml_serde::from_str("2").expect("yaml");
    let (data, conflicts) = bindings([("x.y", Some(&a)), ("x.y.z", Some(&b))]);
    assert_eq!(render("{{.x.y}}", &data).expect("render"), "1");
    assert_eq!(conflicts, ["x.y.z"]);
}
