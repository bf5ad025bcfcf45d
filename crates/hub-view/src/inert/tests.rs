use super::*;
use proptest::prelude::*;

#[test]
fn code_spans_outgrow_the_backticks_they_hold() {
    assert_eq!(code("app"), "`app`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x``"), "``` `x`` ```");
    assert_eq!(code(""), "` `");
    assert_eq!(code("a|b\nc"), "`a\\|b\\nc`");
    assert_eq!(
        code("x` <img src=x onerror=alert(1)> @org/team [l](https://e.com) `"),
        "`` x` <img src=x onerror=alert(1)> @org/team [l](https://e.com) ` ``"
    );
}

#[test]
fn prose_has_no_html_mentions_links_or_code() {
    assert_eq!(prose("a <b> & c"), "a &lt;b&gt; &amp; c");
    assert_eq!(prose("hi @org/team"), "hi @\u{200D}org/team");
    assert_eq!(prose("see https://e.com"), "see https:\u{200D}//e.com");
    assert_eq!(prose("www.e.com"), "www\u{200D}.e.com");
    assert_eq!(
        prose("`x` [l](u) ![i](u)"),
        "\\`x\\` \\[l\\](u) \\!\\[i\\](u)"
    );
    assert_eq!(
        prose("one\n## two\r"),
        "one\\\\n#\u{200D}#\u{200D} two\\\\r"
    );
    assert_eq!(prose("- item"), "\\- item");
    assert_eq!(prose("12. item"), "12\\. item");
    assert_eq!(
        prose("runs again (no --changed)"),
        "runs again (no --changed)"
    );
}

#[test]
fn rich_text_keeps_its_code_and_escapes_the_rest() {
    assert_eq!(
        rich("database (`depends`, provides `database`)"),
        "database (`depends`, provides `database`)"
    );
    assert_eq!(
        rich("provides `x` <img>` @t`"),
        "provides `x` &lt;img&gt;`  @t `"
    );
    assert_eq!(rich("odd ` <b>"), "odd \\` &lt;b&gt;");
    assert_eq!(rich("--affected → `a`"), "--affected → `a`");
    assert_eq!(rich_line("- `a`"), "\\- `a`");
}

#[test]
fn html_text_is_entities_and_no_mention() {
    assert_eq!(html("<b>\"@x\" &"), "&lt;b&gt;&quot;@\u{200D}x&quot; &amp;");
    assert_eq!(fence("a ```` b"), "`````");
    assert_eq!(fence("none"), "```");
}

/// What remains of markdown `text` once its backslash escapes are taken
/// out: the characters markdown would read as syntax.
fn unescaped(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            c => out.push(c),
        }
    }
    out
}

proptest! {
    #[test]
    fn a_code_span_holds_any_text_on_one_line(text in any::<String>()) {
        let span = code(&text);
        let breaks = ['\n', '\r', '\u{2028}', '\u{2029}'];
        prop_assert!(!span.contains(breaks));
        let fence_len = span.chars().take_while(|c| *c == '`').count();
        prop_assert!(span.ends_with(&"`".repeat(fence_len)));
        let inner = &span[fence_len..span.len() - fence_len];
        prop_assert!(!inner.is_empty());
        prop_assert!(longest_run(inner) < fence_len);
        // The span's own fences are not part of a longer run inside.
        prop_assert!(!inner.starts_with('`') && !inner.ends_with('`'));
        // GFM ends a table cell at a `|` even inside a code span, unless
        // a backslash precedes it.
        for (at, c) in inner.char_indices() {
            if c == '|' {
                prop_assert!(inner[..at].ends_with('\\'));
            }
        }
    }

    #[test]
    fn prose_is_inert_whatever_it_says(text in any::<String>()) {
        let line = prose(&text);
        let raw = ['\n', '\r', '<', '>', '\u{2028}', '\u{2029}'];
        prop_assert!(!line.contains(raw));
        let syntax = unescaped(&line);
        prop_assert!(!syntax.contains(['`', '|', '[', ']', '*', '_', '!']));
        prop_assert!(!syntax.to_ascii_lowercase().contains("www."));
        prop_assert!(!syntax.contains("://"));
        for (at, c) in line.char_indices() {
            if c == '@' || c == '#' {
                prop_assert_eq!(line[at + 1..].chars().next(), Some(JOINER));
            }
            if c == '&' {
                let entity = ["&amp;", "&lt;", "&gt;"].iter().any(|e| line[at..].starts_with(e));
                prop_assert!(entity);
            }
        }
    }

    #[test]
    fn rich_text_is_one_line_and_prose_without_backticks(text in any::<String>()) {
        let line = rich(&text);
        let breaks = ['\n', '\r', '\u{2028}', '\u{2029}'];
        prop_assert!(!line.contains(breaks));
        if !text.contains('`') {
            prop_assert_eq!(line, prose_after(&text, false));
        }
    }

    #[test]
    fn html_text_opens_no_element(text in any::<String>()) {
        let shown = html(&text);
        prop_assert!(!shown.contains(['<', '>', '"', '\n', '\r']));
    }
}
