//! How component snapshots are laid out in the state file: the reference's
//! layout (`--state-format reference`, byte for byte as before) and the
//! linear one (the default), read back as the same snapshots.

use crate::common::{copy_tree, demo_copy, hub_isolated, Test};
use hub_manifest::diag::Warnings;
use hub_state::{parse, read, render, render_as, State, StateFormat};
use std::path::Path;

/// The state a deploy of `fixtures/demo` wrote before the linear layout
/// existed, with the random deployment id and the program path replaced.
const DEMO_REFERENCE: &str = include_str!("testdata/demo-reference.state");

const PINNED: &[(&str, &str)] = &[
    ("HUB_NOW", "2024-05-01T10:00:00Z"),
    ("HUB_OPERATION_ID", "0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e"),
    ("HUB_RANDOM_SEED", "7"),
    ("HUB_LINEAGE", "lineage-7"),
];

/// The state text with what differs from run to run replaced as in
/// [`DEMO_REFERENCE`], and the command line's `--state-format reference`
/// (which the recorded run did not have) left out, and the state's lineage
/// too (the recording predates it).
fn normalised(text: &str, state: &State) -> String {
    let id = state
        .stack_parameters
        .iter()
        .find(|p| p.name() == "hub.deploymentId")
        .map(|p| hub_state::scalar_text(&p.value))
        .expect("a deployment id");
    let program = env!("CARGO_BIN_EXE_hub");
    let text = text
        .replace(&id, "DEPLOYMENT-ID")
        .replace(&format!("- {program}\n"), "- hub\n")
        .replace("    - \"--state-format\"\n    - reference\n", "")
        .replacen("\nlineage: lineage-7\n", "\n", 1);
    with_recorded_serial(&without_prune_keys(&text), state)
}

/// The entries' `dir` and `depends` (hub's keys for `deploy --prune`,
/// which the recorded run predates and other readers ignore) left out.
fn without_prune_keys(text: &str) -> String {
    let mut out = String::new();
    let mut in_depends = false;
    for line in text.lines() {
        in_depends = (in_depends && line.starts_with("    - ")) || line == "    depends:";
        if !in_depends && !line.starts_with("    dir: ") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The serial counts writes, and a fold of journal records is one more
/// than the recorded run made (see `hub_state::journal`): it is checked
/// to be at least the recorded one, then replaced by it.
fn with_recorded_serial(text: &str, state: &State) -> String {
    let recorded = parse_text(DEMO_REFERENCE).serial;
    assert!(
        state.serial >= recorded,
        "serial {} went back",
        state.serial
    );
    text.replacen(
        &format!("\nserial: {}\n", state.serial),
        &format!("\nserial: {recorded}\n"),
        1,
    )
}

fn parse_text(text: &str) -> State {
    parse(Path::new("state"), text, &mut Warnings::default()).expect("a state")
}

fn deploy_demo(extra: &[&str]) -> (String, State) {
    let (_dir, demo) = demo_copy();
    let test = Test::new();
    copy_tree(&demo, test.root());
    let mut args = vec!["deploy", "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    args.extend(extra);
    hub_isolated(&test, &args, PINNED).success();
    let text = std::fs::read_to_string(test.root().join("hub.yaml.state")).expect("state");
    assert!(text.starts_with("# hub-state:"), "{text}");
    let text = crate::common::unframed(&text);
    let state = parse_text(&text);
    (normalised(&text, &state), state)
}

#[test]
fn the_reference_layout_is_written_byte_for_byte_as_before() {
    let (text, _) = deploy_demo(&["--state-format", "reference"]);
    assert_eq!(text, DEMO_REFERENCE);
}

#[test]
fn the_linear_layout_reads_back_the_reference_snapshots() {
    let (text, linear) = deploy_demo(&[]);
    assert_ne!(text, DEMO_REFERENCE);
    assert!(text.contains("capturedOutputsBase: network"), "{text}");
    let reference = parse_text(DEMO_REFERENCE);
    assert_eq!(linear.lifecycle.order, reference.lifecycle.order);
    for (name, entry) in &reference.components {
        assert_eq!(
            linear.components[name].captured_outputs.to_vec(),
            entry.captured_outputs.to_vec(),
            "the snapshot of {name}"
        );
    }
    assert_eq!(
        normalised(&render(&linear).expect("render"), &linear),
        DEMO_REFERENCE
    );
}

/// reference → read → linear → read → reference gives the original bytes.
#[test]
fn an_old_layout_state_survives_a_round_trip_through_the_linear_layout() {
    let old = parse_text(DEMO_REFERENCE);
    let linear_text = render_as(&old, StateFormat::Linear).expect("render");
    assert!(linear_text.len() < DEMO_REFERENCE.len());
    let linear = parse_text(&linear_text);
    assert_eq!(linear, old);
    assert_eq!(render(&linear).expect("render"), DEMO_REFERENCE);
    assert_eq!(
        render_as(&linear, StateFormat::Linear).expect("render"),
        linear_text
    );
}

#[test]
fn a_snapshot_written_against_a_missing_entry_is_a_damaged_state() {
    let text = "version: 1\nkind: state\nlifecycle: {order: [a, b]}\ncomponents:\n  b:\n    capturedOutputs: [{component: b, name: x, value: 1}]\n    capturedOutputsBase: a\n";
    let error = parse(Path::new("s"), text, &mut Warnings::default()).expect_err("damaged");
    assert!(error.to_string().contains("damaged"), "{error}");
    assert!(error.to_string().contains("`a`"), "{error}");
}

/// A layered stack as the benchmark generates it: `n` components in layers
/// of ten, each depending on two of the layer before and reading the
/// output of one of them, 20 parameters and one output each.
fn layered_stack(test: Test, n: usize) -> Test {
    let mut stack = String::from("version: 1\nkind: stack\nmeta: {name: big}\ncomponents:\n");
    let mut test = test;
    for i in 0..n {
        let layer = i / 10;
        let depends = match layer {
            0 => String::new(),
            _ => {
                let base = (layer - 1) * 10;
                format!(", depends: [c{}, c{}]", base + i % 10, base + (i + 1) % 10)
            }
        };
        stack.push_str(&format!(
            "- {{name: c{i}, source: {{dir: c/c{i}}}{depends}}}\n"
        ));
        let mut component = format!("version: 1\nkind: component\nmeta: {{name: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n");
        for k in 0..18 {
            component.push_str(&format!(
                "- {{name: c{i}.p{k}, value: 'v{k}-${{dns.domain}}', env: P{k}}}\n"
            ));
        }
        if layer > 0 {
            let upstream = (layer - 1) * 10 + i % 10;
            component.push_str(&format!(
                "- {{name: c{i}.up, value: '${{c{upstream}.out}}', env: UP}}\n"
            ));
        }
        component.push_str(&format!("outputs:\n- {{name: c{i}.out, fromTfVar: out}}\n"));
        test = test
            .file(&format!("c/c{i}/hub-component.yaml"), &component)
            .script(
                &format!("c/c{i}/deploy.sh"),
                &format!("#!/bin/sh\necho\necho Outputs:\necho out = o{i}\n"),
            );
    }
    stack.push_str("parameters:\n- {name: dns.domain, value: big.example.com}\n");
    test.file("hub.yaml", &stack)
}

/// Each component's entry repeats no earlier output: the file grows by
/// about the same amount per component, 3.6 KB here (the reference's
/// layout needs 22 KB per component at 300, 55 KB at 1,000). 300
/// components rather than 1,000: planning a stack of 1,000 still takes
/// about 17 s (a minute in a debug build); 1,000 was measured by hand.
#[test]
fn a_state_of_many_components_grows_linearly() {
    const COMPONENTS: usize = 300;
    let test = layered_stack(Test::new(), COMPONENTS);
    hub_isolated(
        &test,
        &["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"],
        &[],
    )
    .success();
    hub_isolated(
        &test,
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "hub.yaml.state",
            "-j",
            "8",
        ],
        &[],
    )
    .success();
    let path = test.root().join("hub.yaml.state");
    let size = std::fs::metadata(&path).expect("state").len() as usize;
    assert!(
        size < 5_000 * COMPONENTS,
        "{size} bytes for {COMPONENTS} components"
    );
    let state = read(&path, &mut Warnings::default())
        .expect("readable")
        .expect("present");
    assert_eq!(state.captured_outputs.len(), COMPONENTS);
    // In a parallel run a component knows the outputs of those it runs
    // after: the last one knows the first layer's and its own.
    let last = format!("c{}", COMPONENTS - 1);
    let snapshot = state.components[&last].captured_outputs.to_vec();
    assert!(snapshot.iter().any(|o| o.component == "c0"), "{snapshot:?}");
    assert!(snapshot.iter().any(|o| o.component == last), "{snapshot:?}");
    // The last write renders its entries on several threads, a window of
    // 256 at a time: the file holds them in name order, each its own.
    let written: Vec<&String> = state.components.keys().collect();
    let mut sorted = written.clone();
    sorted.sort();
    let first_out = written.iter().zip(&sorted).position(|(w, s)| w != s);
    assert_eq!(first_out, None, "entries out of name order: {written:?}");
    for (name, entry) in &state.components {
        assert_eq!(entry.status, "deployed", "{name}");
        let own = entry.captured_outputs.to_vec();
        assert!(own.iter().any(|o| o.component == *name), "{name}: {own:?}");
    }
}

/// The `stackParameters:` block of a state text, up to the next key.
fn stack_parameters_block(text: &str) -> &str {
    let start = text.find("\nstackParameters:\n").expect("stack parameters") + 1;
    let body = &text[start..];
    let end = body
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|&at| {
            let next = &body[at..];
            !next.is_empty() && !next.starts_with("- ") && !next.starts_with(' ')
        })
        .unwrap_or(body.len());
    &body[..end]
}

/// The block's items (`- ` at column 0, with their indented lines) in
/// reverse order.
fn reversed_items(block: &str) -> String {
    let mut items: Vec<String> = Vec::new();
    for line in block.lines().skip(1) {
        match (line.starts_with("- "), items.last_mut()) {
            (false, Some(item)) => item.push_str(line),
            _ => items.push(line.to_string()),
        }
        items.last_mut().expect("an item").push('\n');
    }
    items.reverse();
    format!("stackParameters:\n{}", items.concat())
}

/// A deploy whose stack parameters are those of the state keeps the
/// state's own list (read in the file's order) instead of building it
/// again from the locked parameters: what it writes is still the list
/// sorted by qualified name, the text a rebuilt list gave, even when the
/// file held the items in another order.
#[test]
fn a_second_deploy_writes_the_stack_parameters_it_read_as_a_first_one_did() {
    let (_dir, demo) = demo_copy();
    let test = Test::new();
    copy_tree(&demo, test.root());
    let args = ["deploy", "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    hub_isolated(&test, &args, PINNED).success();
    let path = test.root().join("hub.yaml.state");
    let read = |path: &Path| std::fs::read_to_string(path).expect("state");
    let first = crate::common::unframed(&read(&path));
    let block = stack_parameters_block(&first);
    assert!(block.matches("\n- ").count() >= 5, "{block}");
    let shuffled = first.replacen(block, &reversed_items(block), 1);
    assert_ne!(shuffled, first);
    std::fs::write(&path, &shuffled).expect("write");

    hub_isolated(&test, &args, PINNED).success();
    let second = crate::common::unframed(&read(&path));
    assert_eq!(stack_parameters_block(&second), block);
    let kept = parse_text(&shuffled).stack_parameters;
    assert_eq!(parse_text(&second).stack_parameters.len(), kept.len());
}
