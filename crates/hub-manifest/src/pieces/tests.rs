//! The piece reader against the whole reader: the same documents when it
//! reads, and a refusal (so the whole reader's errors and warnings) when
//! it is unsure. Under `cfg(test)` every document is read a piece at a
//! time, whatever its size, and chunks are small.

use super::*;
use crate::{Manifest, ParamsFile};
use std::path::{Path, PathBuf};

fn source(text: &str) -> SourceFile {
    SourceFile {
        path: Path::new("hub.yaml.elaborate").to_path_buf(),
        text: text.to_string(),
    }
}

fn whole_documents(text: &str) -> (Result<Vec<Manifest>, String>, Warnings) {
    let mut warnings = Warnings::default();
    let docs = source(text)
        .documents::<Manifest>(&mut warnings)
        .map_err(|e| e.to_string());
    (docs, warnings)
}

fn piecewise_documents(text: &str) -> Option<Vec<Manifest>> {
    let file = source(text);
    crate::elaborated_in_pieces(&file)
}

fn piecewise_params(text: &str) -> Option<(ParamsFile, usize)> {
    crate::params_in_pieces(&source(text))
}

/// When the piece reader reads `text`, it reads what the whole reader
/// reads, and the whole reader had nothing to say; says whether it read.
fn agrees(text: &str) -> bool {
    let piecewise = piecewise_documents(text);
    let (whole, warnings) = whole_documents(text);
    if let Some(docs) = &piecewise {
        assert!(warnings.is_empty(), "read in pieces, but warned:\n{text}");
        assert_eq!(Ok(docs), whole.as_ref(), "{text}");
    }
    let params = piecewise_params(text);
    let mut warnings = Warnings::default();
    let whole = source(text).first_document::<ParamsFile>(&mut warnings);
    if let Some((params, count)) = params {
        assert!(warnings.is_empty(), "params read in pieces, but warned");
        let (expected, expected_count) = whole.expect("whole params");
        assert_eq!(Some(params), expected, "{text}");
        assert_eq!(count, expected_count);
    }
    piecewise.is_some()
}

/// A generated stack document: long lists in several styles, then two
/// component documents.
fn generated(n: usize) -> String {
    let mut text = String::from(
        "---\n# hub: elaborated v1\nversion: 1\nkind: stack\nmeta:\n  name: gen\ncomponents:\n",
    );
    for i in 0..n {
        text.push_str(&format!("- name: c{i}\n  source:\n    dir: c/c{i}\n"));
        if i % 3 == 0 {
            text.push_str("  depends: []\n");
        } else if i > 0 {
            text.push_str(&format!("  depends:\n  - c{}\n", i - 1));
        }
    }
    text.push_str("lifecycle:\n  order:\n");
    for i in 0..n {
        text.push_str(&format!("  - c{i}\n"));
    }
    text.push_str("parameters:\n");
    for i in 0..n {
        text.push_str(&format!(
            "- name: c{i}.p\n  value: \"o-${{dns.domain}} #{i}\"\n"
        ));
        text.push_str(&format!("- {{name: c{i}.q, value: 'it''s [{i}]'}}\n"));
        text.push_str(&format!(
            "- name: c{i}.r\n  component: c{i}\n  kind: user\n  value: |\n    line \"one\n    [two\n\n    'three\n"
        ));
        text.push_str(&format!(
            "- name: c{i}.s # a comment\n  # an indented comment\n  parameters:\n  - name: t\n    default: {i}\n  - name: u\n    value: yes\n"
        ));
    }
    text.push_str("- name: dns.domain\n  value: example.com\n");
    text.push_str("---\nversion: 1\nkind: component\nmeta:\n  name: c0\nparameters:\n- name: p\n---\nversion: 1\nkind: component\nmeta:\n  name: c1\n");
    text
}

#[test]
fn a_generated_stack_read_in_pieces_is_the_stack_read_whole() {
    for n in [1, 2, 7, 40] {
        let text = generated(n);
        // Comments at the margin between items, and after the list.
        let commented = text
            .replacen("- name: c0.r\n", "# margin\n\n- name: c0.r\n", 1)
            .replacen("- name: dns.domain\n", "- name: dns.domain\n# end\n", 1);
        assert!(agrees(&commented), "not read in pieces:\n{commented}");
        // A section key written otherwise is left to the head.
        let spaced = text.replacen("parameters:\n", "parameters :\n", 1);
        assert!(agrees(&spaced));
        assert_eq!(
            piecewise_documents(&spaced).expect("read")[0]
                .parameters
                .len(),
            4 * n + 1
        );
        assert!(agrees(&text), "not read in pieces:\n{text}");
        let docs = piecewise_documents(&text).expect("read");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].parameters.len(), 4 * n + 1);
        assert_eq!(docs[0].components.len(), n);
    }
}

/// `generated(n)` with `m` component documents after the stack, whose
/// values hold `---` and `...` in quoted and block scalars, and a
/// document ended by `...`.
fn with_components(n: usize, m: usize) -> String {
    let mut text = generated(n);
    for i in 0..m {
        text.push_str(&format!(
            "---\nversion: 1\nkind: component\nmeta:\n  name: m{i}\n  description: |\n    ---\n    ... not an end\nparameters:\n- name: p{i}\n  value: \"--- {i}\"\n"
        ));
        if i % 5 == 0 {
            text.push_str("...\n");
        }
    }
    text
}

#[test]
fn a_head_of_many_documents_is_cut_at_a_document_start_and_reads_the_same() {
    for m in [0, 1, 2, 9, 40] {
        let text = with_components(3, m);
        assert!(agrees(&text), "not read in pieces:\n{text}");
        let head = split(&text, &crate::MANIFEST_LISTS, 1).expect("split").head;
        let Some(at) = middle_document_start(&head) else {
            assert!(m < 2, "{m} documents after the stack, not cut");
            continue;
        };
        assert!(head[at..].starts_with("---\n"), "{}", &head[at..]);
        assert!(at > first_document_end(&head), "cut inside the stack");
    }
}

#[test]
fn a_head_with_a_directive_is_never_cut() {
    let text = with_components(3, 9).replacen(
        "---\nversion: 1\nkind: component",
        "%YAML 1.2\n---\nversion: 1\nkind: component",
        1,
    );
    let head = split(&text, &crate::MANIFEST_LISTS, 1).map(|s| s.head);
    if let Some(head) = head {
        assert_eq!(middle_document_start(&head), None);
    }
    agrees(&text);
}

#[test]
fn a_params_file_read_in_pieces_is_the_file_read_whole() {
    let mut text = String::from("# overrides\nparameters:\n");
    for i in 0..50 {
        text.push_str(&format!(
            "- {{name: c{i}.p{i}, value: 'o{i}-${{dns.domain}}'}}\n"
        ));
        text.push_str(&format!("  # between\n- name: c{i}.q\n  value: \"x\"\n\n"));
    }
    text.push_str("outputs:\n- name: out\n  value: ${dns.domain}\n");
    assert!(piecewise_params(&text).is_some());
    assert!(agrees(&text));
    // Indented lists, as a person writes them.
    let indented = text
        .replace("\n- ", "\n  - ")
        .replace("\n  value:", "\n    value:");
    assert!(piecewise_params(&indented).is_some());
    assert!(agrees(&indented));
}

#[test]
fn whatever_is_unsure_is_read_whole_with_the_same_errors_and_warnings() {
    let text = generated(5);
    let at = text.find("- name: c2.p\n").expect("middle item");
    let cases = [
        // A broken item in the middle of a long list.
        text.replacen("- name: c2.p\n", "- name: c2.p\n  value: [unclosed\n", 1),
        text.replacen("- name: c2.p\n", "- name: c2.p\n  name: again\n", 1),
        text.replacen("- name: c2.p\n", "- name: c2.p\n  valeu: typo\n", 1),
        text.replacen("- name: c2.p\n", "- name: c2.p\n  parameters: 3\n", 1),
        text.replacen("- name: c2.p\n", "- name: c2.p\n   value: x\n", 1),
        // Anchors and aliases.
        text.replacen("- name: c2.p\n", "- name: &n c2.p\n  brief: *n\n", 1),
        // Tabs.
        text.replacen("- name: c2.p\n", "- name: c2.p\n  brief:\tx\n", 1),
        // Flow style: the whole list, or a quoted scalar across lines.
        text.replacen("parameters:\n", "parameters: [\n{name: a}]\n", 1),
        text.replacen("- name: c2.p\n", "- name: \"c2.p\nparameters:\n- x\"\n", 1),
        text.replacen("- name: c2.p\n", "- name: [c2.p,\nparameters]\n", 1),
        // Duplicate keys: the section twice, or a key of the head twice.
        format!("{}parameters:\n- name: again\n{}", &text[..at], &text[at..]),
        text.replacen("kind: stack\n", "kind: stack\nkind: stack\n", 1),
        text.replacen("kind: stack\n", "kind: stack\nparameters: []\n", 1),
        // A directive at the margin, an explicit key, a margin comment
        // before a stray line.
        text.replacen("- name: c2.p\n", "%TAG ! tag:x,2000:\n- name: c2.p\n", 1),
        text.replacen("- name: c2.p\n", "# margin\n\"odd\": 1\n- name: c2.p\n", 1),
        text.replacen("- name: c2.p\n", "? name\n: c2.p\n", 1),
    ];
    for broken in &cases {
        assert!(
            piecewise_documents(broken).is_none(),
            "read in pieces:\n{broken}"
        );
        // The public reader is then the whole reader: same error, same
        // warnings (with their lines).
        let (whole, whole_warnings) = whole_documents(broken);
        let mut warnings = Warnings::default();
        let read = crate::parse_elaborated(&source(broken), &mut warnings);
        match (read, whole) {
            (Ok(read), Ok(docs)) => assert_eq!(read.stack, docs[0]),
            (Err(read), Err(whole)) => assert_eq!(read.to_string(), whole),
            (read, whole) => panic!("{read:?} against {whole:?}"),
        }
        assert_eq!(
            format!("{warnings:?}"),
            format!("{whole_warnings:?}"),
            "{broken}"
        );
    }
}

#[test]
fn the_margin_is_read_for_what_it_is() {
    assert!(plain_lines(
        "a: \"b\" # c\nd: 'e''f'\ng: [h, {i: j}]\nk: it's\n"
    ));
    assert!(plain_lines("a: |\n  \"open\n   [open\n\nb: c\n"));
    assert!(!plain_lines("a: \"b\nc\"\n"));
    assert!(!plain_lines("a: [b,\nc]\n"));
    assert!(!plain_lines("%YAML 1.1\n---\na: b\n"));
    assert!(!plain_lines("a: |\n  x\nb: 'open\n"));
    assert_eq!(first_document_end("---\na: 1\n---\nb: 2\n"), 9);
    assert_eq!(first_document_end("# c\n---\na: 1\n"), 13);
    assert_eq!(first_document_end("a: 1\n...\n"), 5);
}

/// The corpus of real stacks (`../shared/corpus` beside the checkout, or
/// `$HUB_CORPUS`); `None` after a message when missing outside CI.
pub(crate) fn corpus() -> Option<PathBuf> {
    let path = match std::env::var_os("HUB_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    if path.join("cases.tsv").is_file() {
        return Some(path);
    }
    assert!(
        !matches!(std::env::var("CI").as_deref(), Ok("true")),
        "no corpus at {} (CI=true)",
        path.display()
    );
    eprintln!(
        "SKIPPED pieces corpus test: no corpus at {}",
        path.display()
    );
    None
}

pub(crate) fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "elaborate")
        {
            out.push(path);
        }
    }
}

#[test]
fn every_corpus_file_reads_the_same_in_pieces() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut files = Vec::new();
    yaml_files(&corpus, &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    let mut read = 0;
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        read += usize::from(agrees(&text));
    }
    // Most real files are read in pieces (the others: anchors, tabs,
    // other layouts, or what the whole reader warns about).
    eprintln!("{read} of {} corpus files read in pieces", files.len());
    assert!(
        read * 2 > files.len(),
        "{read} of {} read in pieces",
        files.len()
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text a parameter's value may hold: the characters that matter to
    /// YAML's lines (quotes, brackets, `#`, `:`, `-`, `|`, newlines).
    fn value() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just(" "),
                Just("'"),
                Just("\""),
                Just("["),
                Just("}"),
                Just("#"),
                Just(": "),
                Just("- "),
                Just("|"),
                Just("\n"),
                Just("yes"),
                Just("${x}"),
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A stack document hub writes, with any values, reads the same
        /// in pieces, and so does it after any one character is changed,
        /// unless the piece reader refuses it (then it is read whole).
        #[test]
        fn any_written_stack_and_any_edit_of_it_read_the_same(
            values in proptest::collection::vec(value(), 1..12),
            at in 0usize..10_000,
            edit in prop_oneof![Just(""), Just("\n"), Just("\""), Just("'"), Just("["), Just(" "), Just("-"), Just("#"), Just("a:")],
        ) {
            let mut stack = Manifest {
                version: 1,
                kind: "stack".into(),
                ..Manifest::default()
            };
            let file = SourceFile {
                path: Path::new("p").to_path_buf(),
                text: values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("- name: p{i}\n  value: {}\n", crate::emit::string(v)))
                    .collect::<String>(),
            };
            let (parameters, _) = SourceFile {
                text: format!("parameters:\n{}", file.text),
                ..file
            }
            .first_document::<ParamsFile>(&mut Warnings::default())
            .expect("written values read");
            stack.parameters = parameters.expect("parameters").parameters;
            let elaborated = crate::Elaborated {
                stack,
                ..crate::Elaborated::default()
            };
            let text = crate::render_elaborated(&elaborated).expect("render");
            // Read in pieces unless a line is unsure (a plain value
            // such as `a - 'b` is refused, and read whole).
            if agrees(&text) {
                let docs = piecewise_documents(&text).expect("read in pieces");
                prop_assert_eq!(&docs[0], &elaborated.stack);
            }
            let mut cut = at % (text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let end = (cut + usize::from(edit.is_empty())).min(text.len());
            let end = if text.is_char_boundary(end) { end } else { cut };
            let edited = format!("{}{}{}", &text[..cut], edit, &text[end..]);
            agrees(&edited);
        }
    }
}
