//! Conformance with the reference tool on the shared corpus of real stacks
//! (`../shared/corpus` beside the checkout, or `$HUB_CORPUS`):
//!
//! * every case of `cases.tsv` is elaborated; where the reference tool's
//!   output exists it is compared semantically (a port of `hubdiff.py`, see
//!   `conformance/semantic.rs`), honouring `tests/conformance/deviations.txt`;
//!   elsewhere the case must elaborate with a `lifecycle.order` that respects
//!   every `depends`;
//! * every standalone `hub-component.yaml` passes `hub validate`;
//! * the hubctl manifest fixtures (order, cycles, undefined dependencies)
//!   behave as the spec says.
//!
//! Without the corpus the tests fail when `CI=true` and are skipped otherwise.

mod semantic;

use assert_cmd::Command;
use semantic::{Allow, Node};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

const DEVIATIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/conformance/deviations.txt"
);

/// A line on the terminal even when the test harness captures output.
fn note(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{message}");
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The corpus folder, or `None` (after a skip message) when it is missing
/// outside CI. In CI a missing corpus is a failure.
pub(crate) fn corpus() -> Option<PathBuf> {
    let path = match std::env::var_os("HUB_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    };
    if path.join("cases.tsv").is_file() {
        return Some(path);
    }
    assert!(
        !in_ci(),
        "conformance corpus not found at {} (CI=true): the shared folder must be beside the checkout, or HUB_CORPUS must name the corpus",
        path.display()
    );
    crate::common::skipped(&format!(
        "no corpus at {} (set HUB_CORPUS to the corpus folder to run it)",
        path.display()
    ));
    None
}

pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) workdir: String,
    pub(crate) args: Vec<String>,
    expected: bool,
}

impl Case {
    pub fn dir(&self, corpus: &Path) -> PathBuf {
        corpus.join(&self.name)
    }

    fn reference(&self, corpus: &Path) -> PathBuf {
        self.dir(corpus).join("expected.elaborate.yaml")
    }
}

pub(crate) fn cases(corpus: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(corpus.join("cases.tsv")).expect("cases.tsv");
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(
                fields.len(),
                4,
                "cases.tsv: expected 4 tab-separated fields: {line:?}"
            );
            Case {
                name: fields[0].to_string(),
                workdir: fields[1].to_string(),
                args: fields[2].split_whitespace().map(String::from).collect(),
                expected: match fields[3].trim() {
                    "yes" => true,
                    "no" => false,
                    other => panic!("cases.tsv: `{other}` is neither yes nor no: {line:?}"),
                },
            }
        })
        .collect();
    assert!(!cases.is_empty(), "cases.tsv lists no case");
    cases
}

/// Runs `hub ARGS` in `cwd`: (exit code, stderr).
fn hub(cwd: &Path, args: &[String]) -> (i32, String) {
    let out = Command::cargo_bin("hub")
        .expect("hub binary")
        .current_dir(cwd)
        .args(args)
        .env_remove("ENV")
        .output()
        .expect("run hub");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Elaborates `case` as its tooling does, writing plain YAML into `out_dir`.
fn elaborate(corpus: &Path, case: &Case, out_dir: &Path) -> Result<PathBuf, String> {
    let output = out_dir.join(format!("{}.elaborate.yaml", case.name));
    let mut args = vec!["elaborate".to_string()];
    args.extend(case.args.iter().cloned());
    args.extend([
        "-o".into(),
        output.display().to_string(),
        "--compressed=false".into(),
    ]);
    let cwd = case.dir(corpus).join(&case.workdir);
    let (status, stderr) = hub(&cwd, &args);
    if status != 0 {
        return Err(format!(
            "`hub {}` in {} exited with {status}:\n{}",
            args.join(" "),
            cwd.display(),
            indent(&stderr)
        ));
    }
    Ok(output)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

fn deviations() -> Vec<Allow> {
    semantic::load_allow(Path::new(DEVIATIONS)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn deviations_file_is_well_formed() {
    let rules = deviations();
    assert!(
        rules
            .iter()
            .any(|r| r.covers("$.stack.components.nginx.hooks")),
        "{DEVIATIONS} must list `$.stack.components.*.hooks`"
    );
    for rule in &rules {
        assert!(
            rule.pattern.starts_with('$'),
            "{}: a path starts with `$`: {}",
            rule.origin,
            rule.pattern
        );
    }
}

#[test]
fn cases_with_a_reference_output_match_it() {
    let Some(corpus) = corpus() else {
        return;
    };
    let rules = deviations();
    let out_dir = tempfile::tempdir().expect("temporary folder");
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let mut used = vec![0usize; rules.len()];
    for case in cases(&corpus) {
        let reference = case.reference(&corpus);
        if case.expected != reference.is_file() {
            failures.push(format!(
                "{}: cases.tsv says the reference output exists: {}, but {} exists: {}",
                case.name,
                case.expected,
                reference.display(),
                reference.is_file()
            ));
        }
        if !case.expected || !reference.is_file() {
            continue;
        }
        let actual = match elaborate(&corpus, &case, out_dir.path()) {
            Ok(path) => path,
            Err(e) => {
                summary.push(format!("{}: elaborate failed", case.name));
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let loaded = semantic::load_documents(&reference).and_then(|expected| {
            semantic::load_documents(&actual).map(|actual| (expected, actual))
        });
        let (expected, actual) = match loaded {
            Ok(docs) => docs,
            Err(e) => {
                summary.push(format!("{}: unreadable output", case.name));
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let outcome = semantic::classify(semantic::diff_elaborate(expected, actual), &rules);
        for (_, rule) in &outcome.allowed {
            used[*rule] += 1;
        }
        let allowed = match outcome.allowed.len() {
            0 => String::new(),
            n => {
                let mut patterns: Vec<&str> = outcome
                    .allowed
                    .iter()
                    .map(|(_, i)| rules[*i].pattern.as_str())
                    .collect();
                patterns.dedup();
                format!(
                    " ({n} allowed difference(s) ignored: {})",
                    patterns.join(", ")
                )
            }
        };
        if outcome.real.is_empty() {
            summary.push(format!("{}: equal{allowed}", case.name));
        } else {
            summary.push(format!(
                "{}: {} difference(s){allowed}",
                case.name,
                outcome.real.len()
            ));
            let lines: String = outcome.real.iter().map(|d| format!("    {d}\n")).collect();
            failures.push(format!(
                "{}: {} difference(s) from the reference:\n{lines}",
                case.name,
                outcome.real.len()
            ));
        }
    }
    for (rule, count) in rules.iter().zip(&used) {
        if *count == 0 {
            note(&format!(
                "note: deviation `{}` ({}: {}) matched no difference in the corpus",
                rule.pattern, rule.origin, rule.reason
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "conformance with the reference tool:\n  {}\n\n{}",
        summary.join("\n  "),
        failures.join("\n")
    );
}

/// Names and `depends` of the components of an elaborated stack document.
fn components_of(stack: &Node) -> Vec<(String, Vec<String>)> {
    stack
        .get("components")
        .and_then(Node::as_list)
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let name = c
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string();
            (name, string_list(c.get("depends")))
        })
        .collect()
}

fn string_list(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.as_str().map(String::from))
        .collect()
}

/// What is wrong with an elaborated file's `lifecycle.order`: it must list
/// every component once, each after the components it depends on, and there
/// must be one component document per component.
fn order_problems(docs: &[Node]) -> Vec<String> {
    let stack = &docs[0];
    let components = components_of(stack);
    let order = string_list(stack.get("lifecycle").and_then(|l| l.get("order")));
    let mut problems = Vec::new();
    let mut names: Vec<&str> = components.iter().map(|(n, _)| n.as_str()).collect();
    let mut sorted_order: Vec<&str> = order.iter().map(String::as_str).collect();
    names.sort_unstable();
    sorted_order.sort_unstable();
    if names != sorted_order {
        problems.push(format!(
            "lifecycle.order {order:?} does not list each component once ({} components: {names:?})",
            names.len()
        ));
    }
    let position = |name: &str| order.iter().position(|o| o == name);
    for (name, depends) in &components {
        for dep in depends {
            if !components.iter().any(|(n, _)| n == dep) {
                continue; // not a component of this stack: no constraint
            }
            if let (Some(d), Some(c)) = (position(dep), position(name)) {
                if d > c {
                    problems.push(format!(
                        "`{name}` depends on `{dep}` but comes first in lifecycle.order {order:?}"
                    ));
                }
            }
        }
    }
    let mut documents: Vec<&str> = docs[1..]
        .iter()
        .filter_map(|d| {
            d.get("meta")
                .and_then(|m| m.get("name"))
                .and_then(Node::as_str)
        })
        .collect();
    documents.sort_unstable();
    if documents != names {
        problems.push(format!(
            "component documents {documents:?} do not match the components {names:?}"
        ));
    }
    problems
}

#[test]
fn cases_without_a_reference_output_elaborate_in_dependency_order() {
    let Some(corpus) = corpus() else {
        return;
    };
    let out_dir = tempfile::tempdir().expect("temporary folder");
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases(&corpus).into_iter().filter(|c| !c.expected) {
        checked += 1;
        let problems = match elaborate(&corpus, &case, out_dir.path())
            .and_then(|p| semantic::load_documents(&p))
        {
            Ok(docs) => order_problems(&docs),
            Err(e) => vec![e],
        };
        if !problems.is_empty() {
            failures.push(format!("{}:\n{}", case.name, indent(&problems.join("\n"))));
        }
    }
    assert!(
        checked > 0,
        "cases.tsv lists no case without a reference output"
    );
    assert!(
        failures.is_empty(),
        "cases without a reference output:\n{}",
        failures.join("\n")
    );
}

fn find_files(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            find_files(&path, name, found);
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
}

#[test]
fn standalone_component_manifests_validate() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut files = Vec::new();
    find_files(
        &corpus.join("components-only"),
        "hub-component.yaml",
        &mut files,
    );
    assert!(
        !files.is_empty(),
        "no hub-component.yaml under components-only/"
    );
    let mut failures = Vec::new();
    for batch in files.chunks(40) {
        let mut args = vec!["validate".to_string()];
        args.extend(batch.iter().map(|p| p.display().to_string()));
        let (status, stderr) = hub(&corpus, &args);
        if status != 0 {
            let names: String = batch
                .iter()
                .map(|p| format!("    {}\n", p.display()))
                .collect();
            failures.push(format!(
                "`hub validate` exited with {status} on\n{names}  stderr:\n{}",
                indent(&stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} batches failed:\n{}",
        failures.len(),
        files.len().div_ceil(40),
        failures.join("\n")
    );
}

/// The keys real Hub manifests use are known: elaborating every case warns
/// about no unknown key, and neither does `hub validate` on any stack,
/// parameters file or component manifest of the corpus (fromStack parents
/// and `components-only/` included).
#[test]
fn corpus_manifests_have_no_unknown_keys() {
    let Some(corpus) = corpus() else {
        return;
    };
    let out = tempfile::tempdir().expect("temporary folder");
    let mut reports = Vec::new();
    let mut manifests = Vec::new();
    for case in cases(&corpus) {
        let cwd = case.dir(&corpus).join(&case.workdir);
        let mut args = vec!["elaborate".to_string()];
        args.extend(case.args.iter().cloned());
        let output = out.path().join(format!("{}.yaml", case.name));
        args.extend(["-o".into(), output.display().to_string()]);
        let (status, stderr) = hub(&cwd, &args);
        assert_eq!(status, 0, "{}: {stderr}", case.name);
        reports.extend(unknown_key_lines(&case.name, &stderr));
        manifests.extend(case.args.iter().map(|a| cwd.join(a)));
    }
    for name in ["hub.yaml", "hub-component.yaml", "params.yaml"] {
        find_files(&corpus, name, &mut manifests);
    }
    manifests.sort();
    manifests.dedup();
    for batch in manifests.chunks(40) {
        let mut args = vec!["validate".to_string()];
        args.extend(batch.iter().map(|p| p.display().to_string()));
        let (_, stderr) = hub(&corpus, &args);
        reports.extend(unknown_key_lines("validate", &stderr));
    }
    assert!(
        manifests.len() > 250,
        "only {} manifests found",
        manifests.len()
    );
    assert!(
        reports.is_empty(),
        "unknown keys reported on the corpus:\n{}",
        reports.join("\n")
    );
}

fn unknown_key_lines(label: &str, stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("unknown key"))
        .map(|l| format!("  {label}: {l}"))
        .collect()
}

// ------------------------------------------------------ hubctl fixtures
//
// `hubctl-test-manifests/` holds multi-document files. Each document with
// `kind: stack` is a stack of its own (`manifest_with_errors.yaml` holds
// three); a document of another kind belongs to the stack before it (the
// parameters document of `multiple-yamls-in-manifest.yaml`), and the stack
// manifest keeps it as its second document. Each stack is written as
// `hub.yaml` into a temporary folder together with a minimal component
// manifest for every `source.dir`, so that only the behaviour under test can
// fail. What each stack must do follows from its own content:
//
// * with `lifecycle.order`: elaborate, keeping that order;
// * with a `depends` on a name that is not a component: fail, naming it;
// * with a `depends` cycle: fail, printing the whole cycle (a path along
//   `depends` that ends where it starts);
// * otherwise: elaborate with the order the spec derives from `depends`
//   (depth-first, dependencies in declared order, roots in declared order).

struct FixtureStack {
    label: String,
    text: String,
    manifest: Node,
    extra: Vec<Node>,
}

fn split_documents(text: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            docs.push(String::new());
        } else {
            let last = docs.last_mut().expect("document");
            last.push_str(line);
            last.push('\n');
        }
    }
    docs.into_iter()
        .filter(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .collect()
}

fn fixture_stacks(path: &Path) -> Vec<FixtureStack> {
    let file = path
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut stacks: Vec<FixtureStack> = Vec::new();
    for doc in split_documents(&text) {
        let node = semantic::parse_documents(&doc)
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .remove(0);
        let is_stack = node.get("kind").and_then(Node::as_str) == Some("stack");
        match stacks.last_mut() {
            Some(stack) if !is_stack => {
                stack.text.push_str("---\n");
                stack.text.push_str(&doc);
                stack.extra.push(node);
            }
            _ => {
                let name = node
                    .get("meta")
                    .and_then(|m| m.get("name"))
                    .and_then(Node::as_str)
                    .unwrap_or("?");
                stacks.push(FixtureStack {
                    label: format!("{file} #{} ({name})", stacks.len() + 1),
                    text: doc,
                    manifest: node,
                    extra: Vec::new(),
                });
            }
        }
    }
    stacks
}

enum Expectation {
    Order(Vec<String>),
    Undefined(Vec<String>),
    Cycle,
}

/// Spec §7.2 placement, or `None` on a cycle.
fn derived_order(components: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    fn place(
        i: usize,
        components: &[(String, Vec<String>)],
        state: &mut [u8],
        order: &mut Vec<String>,
    ) -> Option<()> {
        match state[i] {
            2 => return Some(()),
            1 => return None,
            _ => {}
        }
        state[i] = 1;
        for dep in &components[i].1 {
            if let Some(d) = components.iter().position(|(n, _)| n == dep) {
                place(d, components, state, order)?;
            }
        }
        state[i] = 2;
        order.push(components[i].0.clone());
        Some(())
    }
    let mut state = vec![0u8; components.len()];
    let mut order = Vec::new();
    for i in 0..components.len() {
        place(i, components, &mut state, &mut order)?;
    }
    Some(order)
}

fn expectation(manifest: &Node) -> Expectation {
    let components = components_of(manifest);
    let given = string_list(manifest.get("lifecycle").and_then(|l| l.get("order")));
    if !given.is_empty() {
        return Expectation::Order(given);
    }
    let mut undefined: Vec<String> = Vec::new();
    for dep in components.iter().flat_map(|(_, d)| d) {
        if !components.iter().any(|(n, _)| n == dep) && !undefined.contains(dep) {
            undefined.push(dep.clone());
        }
    }
    if !undefined.is_empty() {
        return Expectation::Undefined(undefined);
    }
    match derived_order(&components) {
        Some(order) => Expectation::Order(order),
        None => Expectation::Cycle,
    }
}

/// Checks the cycle printed on stderr: `dependency cycle between components:
/// a → b → a`, each name depending on the next, no name twice but the ends.
fn cycle_problems(stderr: &str, components: &[(String, Vec<String>)]) -> Vec<String> {
    const LEAD: &str = "dependency cycle between components: ";
    let Some(line) = stderr
        .lines()
        .find_map(|l| l.split_once(LEAD).map(|(_, rest)| rest.trim()))
    else {
        return vec![format!(
            "stderr does not say `{LEAD}...`:\n{}",
            indent(stderr)
        )];
    };
    let path: Vec<&str> = line.split(" → ").collect();
    let mut problems = Vec::new();
    if path.len() < 2 || path.first() != path.last() {
        problems.push(format!("`{line}` does not end where it starts"));
    }
    let inner: HashSet<&str> = path[1..].iter().copied().collect();
    if inner.len() != path.len() - 1 {
        problems.push(format!("`{line}` passes a component twice"));
    }
    for pair in path.windows(2) {
        let depends = components
            .iter()
            .find(|(n, _)| n == pair[0])
            .map(|(_, d)| d);
        if !depends.is_some_and(|d| d.iter().any(|x| x == pair[1])) {
            problems.push(format!(
                "`{line}`: `{}` does not depend on `{}`",
                pair[0], pair[1]
            ));
        }
    }
    problems
}

fn check_fixture_stack(stack: &FixtureStack) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::write(dir.path().join("hub.yaml"), &stack.text).expect("write hub.yaml");
    let mut dirs = BTreeMap::new();
    for component in stack
        .manifest
        .get("components")
        .and_then(Node::as_list)
        .unwrap_or_default()
    {
        if let Some(source) = component
            .get("source")
            .and_then(|s| s.get("dir"))
            .and_then(Node::as_str)
        {
            let name = Path::new(source)
                .file_name()
                .expect("source.dir name")
                .to_string_lossy()
                .into_owned();
            dirs.insert(source.to_string(), name);
        }
    }
    for (source, name) in &dirs {
        let folder = dir.path().join(source);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let manifest = format!("version: 1\nkind: component\nmeta:\n  name: {name}\n");
        std::fs::write(folder.join("hub-component.yaml"), manifest).expect("write component");
    }
    let args: Vec<String> = [
        "elaborate",
        "hub.yaml",
        "-o",
        "out.yaml",
        "--compressed=false",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (status, stderr) = hub(dir.path(), &args);
    let components = components_of(&stack.manifest);
    match expectation(&stack.manifest) {
        Expectation::Order(expected) => {
            if status != 0 {
                return vec![format!(
                    "expected success, exit {status}:\n{}",
                    indent(&stderr)
                )];
            }
            let docs = match semantic::load_documents(&dir.path().join("out.yaml")) {
                Ok(docs) => docs,
                Err(e) => return vec![e],
            };
            let mut problems = order_problems(&docs);
            let order = string_list(docs[0].get("lifecycle").and_then(|l| l.get("order")));
            if order != expected {
                problems.push(format!("lifecycle.order {order:?}, expected {expected:?}"));
            }
            // Only the first document of a stack manifest is used.
            let parameters = docs[0]
                .get("parameters")
                .and_then(Node::as_list)
                .unwrap_or_default();
            for extra in &stack.extra {
                for p in extra
                    .get("parameters")
                    .and_then(Node::as_list)
                    .unwrap_or_default()
                {
                    let name = p.get("name");
                    if parameters.iter().any(|q| q.get("name") == name) {
                        problems.push(format!("parameter {name:?} of a second document was used"));
                    }
                }
            }
            problems
        }
        Expectation::Undefined(names) => {
            if status == 0 {
                return vec![format!(
                    "expected failure on the undefined dependencies {names:?}, got success"
                )];
            }
            names
                .iter()
                .filter(|n| !stderr.contains(n.as_str()) || !stderr.contains("not defined"))
                .map(|n| {
                    format!(
                        "stderr does not say that `{n}` is not defined:\n{}",
                        indent(&stderr)
                    )
                })
                .collect()
        }
        Expectation::Cycle => {
            if status == 0 {
                return vec!["expected failure on the dependency cycle, got success".into()];
            }
            cycle_problems(&stderr, &components)
        }
    }
}

#[test]
fn hubctl_fixtures_order_cycles_and_undefined_dependencies() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus.join("hubctl-test-manifests"))
        .expect("hubctl-test-manifests")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut cycles = 0;
    for file in &files {
        for stack in fixture_stacks(file) {
            if matches!(expectation(&stack.manifest), Expectation::Cycle) {
                cycles += 1;
            }
            let problems = check_fixture_stack(&stack);
            if !problems.is_empty() {
                failures.push(format!(
                    "{}:\n{}",
                    stack.label,
                    indent(&problems.join("\n"))
                ));
            }
        }
    }
    assert!(cycles > 0, "no fixture with a dependency cycle was found");
    assert!(
        failures.is_empty(),
        "hubctl fixtures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn cycle_messages_are_checked_along_depends() {
    let components = vec![
        ("a".to_string(), vec!["b".to_string()]),
        ("b".to_string(), vec!["c".to_string()]),
        ("c".to_string(), vec!["a".to_string()]),
    ];
    let ok = "error: dependency cycle between components: b → c → a → b\n";
    assert_eq!(cycle_problems(ok, &components), Vec::<String>::new());
    assert_eq!(
        cycle_problems(
            "error: dependency cycle between components: a → b → c\n",
            &components
        )
        .len(),
        1
    );
    assert_eq!(
        cycle_problems(
            "error: dependency cycle between components: a → c → b → a\n",
            &components
        )
        .len(),
        3
    );
    assert_eq!(derived_order(&components), None);
    let acyclic = vec![
        ("x".to_string(), vec!["a".to_string()]),
        ("a".to_string(), vec![]),
    ];
    assert_eq!(
        derived_order(&acyclic),
        Some(vec!["a".to_string(), "x".to_string()])
    );
}

// ------------------------------------------------ agreement with hubdiff.py

/// What `hubdiff.py elaborate -v --allow RULES EXPECTED ACTUAL` prints on
/// stdout, computed by the port.
fn port_report(expected: &Path, actual: &Path, rules: &[Allow]) -> Vec<String> {
    let found = match (
        semantic::load_documents(expected),
        semantic::load_documents(actual),
    ) {
        (Ok(e), Ok(a)) => semantic::diff_elaborate(e, a),
        (Err(e), _) | (_, Err(e)) => return vec![e],
    };
    let outcome = semantic::classify(found, rules);
    let real = outcome.real.iter().map(|d| d.to_string());
    let allowed = outcome.allowed.iter().map(|(d, i)| {
        let rule = &rules[*i];
        format!("allowed ({}: {}): {d}", rule.origin, rule.reason)
    });
    real.chain(allowed).collect()
}

/// The Rust port must print what hubdiff.py prints: on every reference case
/// of the corpus, and on a pair made to differ in every way
/// (`tests/conformance/port-check/`).
#[test]
fn semantic_port_agrees_with_hubdiff() {
    let Some(corpus) = corpus() else {
        return;
    };
    let hubdiff = corpus.join("../tools/hubdiff.py");
    let python = std::process::Command::new("python3")
        .args(["-c", "import yaml"])
        .output();
    if !hubdiff.is_file() || !python.is_ok_and(|o| o.status.success()) {
        assert!(
            !in_ci(),
            "CI=true: python3 with PyYAML and {} are required",
            hubdiff.display()
        );
        crate::common::skipped("python3 with PyYAML or hubdiff.py not available");
        return;
    }
    let port_check = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/port-check");
    let mut pairs = vec![(
        "port-check".to_string(),
        port_check.join("expected.yaml"),
        port_check.join("actual.yaml"),
        port_check.join("allow.txt"),
    )];
    let out_dir = tempfile::tempdir().expect("temporary folder");
    for case in cases(&corpus).into_iter().filter(|c| c.expected) {
        // A failure to elaborate is reported by cases_with_a_reference_output_match_it.
        if let Ok(actual) = elaborate(&corpus, &case, out_dir.path()) {
            let reference = case.reference(&corpus);
            pairs.push((case.name, reference, actual, PathBuf::from(DEVIATIONS)));
        }
    }
    let mut failures = Vec::new();
    for (name, expected, actual, allow) in &pairs {
        let out = std::process::Command::new("python3")
            .arg(&hubdiff)
            .args(["elaborate", "-v", "--allow"])
            .args([allow, expected, actual])
            .output()
            .expect("run hubdiff.py");
        let python: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect();
        let rules = semantic::load_allow(allow).unwrap_or_else(|e| panic!("{e}"));
        let rust = port_report(expected, actual, &rules);
        if python != rust {
            failures.push(format!(
                "{name}:\n  hubdiff.py:\n{}  port:\n{}",
                indent(&python.join("\n")),
                indent(&rust.join("\n"))
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the port and hubdiff.py disagree:\n{}",
        failures.join("\n")
    );
}
