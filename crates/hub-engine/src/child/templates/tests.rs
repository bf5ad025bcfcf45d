use super::*;
use hub_params::Origin;
use std::os::unix::fs::PermissionsExt;

fn param(name: &str, value: &str) -> ExpandedParam {
    ExpandedParam {
        name: name.into(),
        value: Some(yaml_serde::from_str(value).expect("yaml value")),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }
}

fn params() -> Vec<ExpandedParam> {
    vec![
        param("hub.componentName", "a"),
        param("dns.domain", "example.com"),
        param("padded", "' x '"),
        param("list", "[a, b]"),
        param("map", "{k: v}"),
        param("n", "5"),
        param("url", "https://user@api.example.com:8443/x"),
        param("html", "'<b>&'"),
        param("empty", "''"),
    ]
}

fn files(pairs: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in pairs {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    dir
}

fn templates(kind: &str, directories: &[&str], entries: &[&str]) -> Templates {
    Templates {
        kind: kind.into(),
        directories: directories.iter().map(|s| s.to_string()).collect(),
        files: entries.iter().map(|s| s.to_string()).collect(),
        extra: Vec::new(),
    }
}

fn run(dir: &Path, templates: &Templates) -> (Result<Vec<PathBuf>, TemplateErrors>, Vec<String>) {
    let mut warnings = Warnings::default();
    let result = render(dir, templates, &params(), "a", &mut warnings);
    (result, warnings.iter().map(|w| w.to_string()).collect())
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect("rendered file")
}

#[test]
fn deploy_case_28_curly_template_keeps_mode() {
    let dir = files(&[(
        "conf.txt.template",
        "d=${dns.domain} b=${dns.domain/base64} n=${hub.componentName}\n",
    )]);
    let input = dir.path().join("conf.txt.template");
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let (result, warnings) = run(dir.path(), &templates("", &[], &["*.template"]));
    assert_eq!(result.expect("rendered"), [dir.path().join("conf.txt")]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        read(dir.path(), "conf.txt"),
        "d=example.com b=ZXhhbXBsZS5jb20= n=a\n"
    );
    let mode = std::fs::metadata(dir.path().join("conf.txt"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(input.exists(), "the template stays");
}

#[test]
fn deploy_case_29_unknown_parameter_fails_and_writes_nothing() {
    let dir = files(&[
        (
            "a.template",
            "ok=${dns.domain}\nregion=${cloud.region}\n\nz=${also.missing}\n",
        ),
        ("b.template", "fine=${n}\n"),
    ]);
    let (result, _) = run(dir.path(), &templates("curly", &[], &["*.template"]));
    let errors = result.expect_err("unknown names");
    assert_eq!(errors.errors.len(), 2);
    assert_eq!(errors.errors[0].line, Some(2));
    assert_eq!(errors.errors[1].line, Some(4));
    let text = errors.to_string();
    assert!(
        text.contains("a.template:2: unknown parameter `cloud.region`"),
        "{text}"
    );
    assert!(text.contains("`also.missing`"), "{text}");
    assert!(errors.hint().expect("hint").contains("parameters"));
    assert!(!dir.path().join("a").exists());
    assert!(
        !dir.path().join("b").exists(),
        "nothing is written when any template fails"
    );
}

#[test]
fn curly_stringification_and_trimming() {
    let dir = files(&[(
        "t.template",
        "[${padded}] ${list} ${map} ${n} [${empty}] ${x|a}\n",
    )]);
    let mut warnings = Warnings::default();
    let mut all = params();
    all.push(param("x", "q"));
    render(
        dir.path(),
        &templates("", &[], &["t"]),
        &all,
        "a",
        &mut warnings,
    )
    .expect("rendered");
    assert_eq!(read(dir.path(), "t"), "[x] [a b] map[k:v] 5 [] q\n");
}

#[test]
fn curly_encodings_apply_in_the_reference_order() {
    let dir = files(&[(
            "t.template",
            "${list/json} ${map/yaml} ${padded/base64} ${dns.domain/base64/unbase64} ${list/first} \
             ${url/hostname} ${url/port} ${url/scheme} ${url/isSecure} ${url/insecure} ${list/json/base64}\n",
        )]);
    let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
    result.expect("rendered");
    assert_eq!(
            read(dir.path(), "t"),
            "[\"a\",\"b\"] k: v\n IHgg ZXhhbXBsZS5jb20= a api.example.com 8443 https true false WyJhIiwiYiJd\n"
        );
}

#[test]
fn curly_json_escapes_html_and_yaml_keeps_its_newline() {
    let dir = files(&[(
        "t.template",
        "${html/json}|${html/yaml}|${list/yaml/json}|${n/unbase64/base64}\n",
    )]);
    let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
    result.expect("rendered");
    assert_eq!(
        read(dir.path(), "t"),
        "\"\\u003cb\\u003e\\u0026\"|<b>&\n|[\"a\",\"b\"]|NQ==\n"
    );
}

#[test]
fn unknown_and_unsupported_encodings_are_errors() {
    let dir = files(&[(
        "t.template",
        "${n/rot13}\n${n/bcrypt}\n${dns.domain/port}\n",
    )]);
    let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
    let errors = result.expect_err("bad encodings").errors;
    assert_eq!(errors.len(), 3);
    assert!(
        errors[0].message.contains("unknown encoding `rot13`"),
        "{}",
        errors[0]
    );
    assert!(errors[1].message.contains("bcrypt"), "{}", errors[1]);
    assert!(errors[2].message.contains("not a URL"), "{}", errors[2]);
}

#[test]
fn url_parts() {
    assert_eq!(url_part("port", "http://h/x").expect("port"), "80");
    assert_eq!(
        url_part("hostname", "https://[::1]:9/").expect("host"),
        "::1"
    );
    assert_eq!(url_part("port", "https://[::1]:9/").expect("port"), "9");
    assert!(url_part("port", "ftp://h").is_err());
}

#[test]
fn template_without_substitution_warns() {
    let dir = files(&[("plain.conf.template", "static\n")]);
    let (result, warnings) = run(dir.path(), &templates("", &[], &["plain.conf"]));
    assert_eq!(result.expect("rendered"), [dir.path().join("plain.conf")]);
    assert_eq!(read(dir.path(), "plain.conf"), "static\n");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("no `${...}` substitution")),
        "{warnings:?}"
    );
}

#[test]
fn plain_entries_prefer_template_then_gotemplate_then_in_place() {
    let dir = files(&[
        ("a.conf.template", "a=${n}"),
        ("a.conf.gotemplate", "never"),
        ("b.conf.gotemplate", "b=${n}"),
        ("c.conf", "c=${n}"),
    ]);
    let (result, _) = run(
        dir.path(),
        &templates("", &[], &["a.conf", "b.conf", "c.conf"]),
    );
    let root = dir.path();
    assert_eq!(
        result.expect("rendered"),
        [
            root.join("a.conf"),
            root.join("b.conf"),
            root.join("c.conf")
        ]
    );
    assert_eq!(read(root, "a.conf"), "a=5");
    assert_eq!(read(root, "b.conf"), "b=5");
    assert_eq!(read(root, "c.conf"), "c=5");
}

#[test]
fn missing_selected_files_are_listed() {
    let dir = files(&[]);
    let (result, _) = run(dir.path(), &templates("", &[], &["one.conf", "two.conf"]));
    let errors = result.expect_err("missing").errors;
    assert_eq!(errors.len(), 2);
    assert!(errors[0].to_string().contains("one.conf"), "{}", errors[0]);
    assert!(errors[1].to_string().contains("two.conf"), "{}", errors[1]);
}

#[test]
fn directories_scope_globs_and_default_to_everything() {
    let dir = files(&[
        ("top.template", "t=${n}"),
        ("conf.d/x.template", "x=${n}"),
        ("conf.d/y.conf", "y=${n}"),
        ("conf.d/sub/z", "no"),
    ]);
    let (result, warnings) = run(dir.path(), &templates("", &["conf.d"], &[]));
    let written = result.expect("rendered");
    let root = dir.path();
    assert_eq!(written, [root.join("conf.d/x"), root.join("conf.d/y.conf")]);
    assert_eq!(read(root, "conf.d/x"), "x=5");
    assert_eq!(read(root, "conf.d/y.conf"), "y=5");
    assert!(
        !root.join("top").exists(),
        "top-level globs are not scanned with directories"
    );
    assert!(
        warnings.iter().any(|w| w.contains("not a file")),
        "{warnings:?}"
    );

    let (result, warnings) = run(root, &templates("", &["conf.d"], &["*.nothing"]));
    assert!(result.expect("nothing selected").is_empty());
    assert!(
        warnings.iter().any(|w| w.contains("matched no file")),
        "{warnings:?}"
    );
}

#[test]
fn entries_expand_parameters() {
    let dir = files(&[("a/example.com.conf.template", "${n}")]);
    let root = dir.path();
    // Plain entries are relative to the component directory, not to
    // `directories`.
    let (result, _) = run(root, &templates("", &["a"], &["${dns.domain}.conf"]));
    let text = result
        .expect_err("not in the component directory")
        .to_string();
    assert!(text.contains("example.com.conf"), "{text}");
    let (result, _) = run(root, &templates("", &[], &["a/${dns.domain}.conf"]));
    assert_eq!(result.expect("rendered"), [root.join("a/example.com.conf")]);
    let (result, _) = run(root, &templates("", &[], &["${nope}.conf"]));
    assert!(result.expect_err("unknown").to_string().contains("`nope`"));
}

#[test]
fn mustache_kind_uses_braces_and_keeps_dots() {
    let dir = files(&[("m.template", "{{dns.domain}} {{ n }} ${n} {{n/base64}}\n")]);
    let (result, _) = run(dir.path(), &templates("mustache", &[], &["m.template"]));
    result.expect("rendered");
    assert_eq!(read(dir.path(), "m"), "example.com {{ n }} ${n} NQ==\n");
}

#[test]
fn real_mustache_renders_with_underscores_and_escapes_html() {
    let dir = files(&[(
            "r.template",
            "{{dns_domain}} {{html}} {{{html}}} {{&html}}{{#n}} n={{n}}{{/n}}{{^empty}} empty{{/empty}}{{! note }}\n\n",
        )]);
    let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
    result.expect("rendered");
    assert_eq!(
        read(dir.path(), "r"),
        "example.com &lt;b&gt;&amp; <b>& <b>& n=5 empty\n\n"
    );
}

#[test]
fn real_mustache_missing_keys_are_errors_with_lines() {
    let dir = files(&[(
        "r.template",
        "ok {{n}}\n{{dns.domain}}\n{{#nope}}x{{/nope}}\n",
    )]);
    let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
    let errors = result.expect_err("missing").errors;
    assert_eq!(errors.len(), 1, "the first problem stops the file");
    assert_eq!(errors[0].line, Some(2));
    assert!(errors[0]
        .hint
        .as_deref()
        .expect("hint")
        .contains("{{dns_domain}}"));
    assert!(!dir.path().join("r").exists());
}

#[test]
fn real_mustache_sections_follow_the_reference() {
    let dir = files(&[(
            "r.template",
            "{{#list}}\n- {{.}} {{missing}}\n{{/list}}\n{{#empty}}never{{/empty}}{{^empty}}blank{{/empty}}\n",
        )]);
    let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
    result.expect("rendered");
    assert_eq!(read(dir.path(), "r"), "- a \n\n- b \nblank\n");

    let dir = files(&[("r.template", "{{^n}}x{{/n}}")]);
    let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
    let text = result.expect_err("inverted over true").to_string();
    assert!(text.contains("r.template:1: inverted section"), "{text}");
}

#[test]
fn go_kind_renders_and_unknown_kind_fails() {
    let dir = files(&[(
        "values.yaml.gotemplate",
        "d={{ .dns.domain }} {{ .list | join \",\" }}\n",
    )]);
    let mut set = templates("", &[], &[]);
    set.extra.push(TemplateSet {
        kind: "go".into(),
        directories: vec![],
        files: vec!["values.yaml.gotemplate".into()],
    });
    let (result, _) = run(dir.path(), &set);
    result.expect("rendered");
    assert_eq!(read(dir.path(), "values.yaml"), "d=example.com a,b\n");

    let dir = files(&[("v.gotemplate", "{{ .dns.domain }}\n{{ .dns.nope }}")]);
    let (result, _) = run(dir.path(), &templates("go", &[], &["v.gotemplate"]));
    let errors = result.expect_err("missing key");
    assert!(
        errors
            .to_string()
            .contains("v.gotemplate:2: map has no entry for key \"nope\""),
        "{errors}"
    );
    assert!(errors.hint().expect("hint").contains("parameters"));
    assert!(!dir.path().join("v").exists());

    let (result, _) = run(dir.path(), &templates("jinja", &[], &["*"]));
    let errors = result.expect_err("unknown kind");
    assert!(errors.to_string().contains("unknown template kind `jinja`"));
    assert!(errors.hint().expect("hint").contains("_mustache"));
}

#[test]
fn extra_sets_use_their_own_kind() {
    let dir = files(&[("a.template", "${n}"), ("b.template", "{{n}}")]);
    let mut set = templates("curly", &[], &["a.template"]);
    set.extra.push(TemplateSet {
        kind: "mustache".into(),
        directories: vec![],
        files: vec!["b.template".into()],
    });
    let (result, _) = run(dir.path(), &set);
    assert_eq!(result.expect("rendered").len(), 2);
    assert_eq!(read(dir.path(), "a"), "5");
    assert_eq!(read(dir.path(), "b"), "5");
}

#[test]
fn no_templates_render_nothing() {
    let dir = files(&[("x.template", "${n}")]);
    let (result, warnings) = run(dir.path(), &Templates::default());
    assert!(result.expect("nothing").is_empty());
    assert!(warnings.is_empty());
}

#[test]
fn output_paths() {
    assert_eq!(
        output_path(Path::new("d/a.conf.template")),
        Path::new("d/a.conf")
    );
    assert_eq!(
        output_path(Path::new("d/v.yaml.gotemplate")),
        Path::new("d/v.yaml")
    );
    assert_eq!(output_path(Path::new("d/plain")), Path::new("d/plain"));
    assert_eq!(
        output_path(Path::new("d/.template")),
        Path::new("d/.template")
    );
}
