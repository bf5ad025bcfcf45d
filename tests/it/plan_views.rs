//! Views of a plan through the graph (issue 42, item 6): `hub graph
//! --plan-steps` marks deferred components, the HTML report says which
//! parameters were unknown when planned, `hub explain` shows recorded
//! values only (never a planned one).

use crate::common::{hub_pinned, Test};

/// `a` plans `a.val` (its `x`) and leaves `a.id` unknown; `b` reads
/// `a.val`, `c` reads `a.id`.
fn stack(x: &str) -> Test {
    let text = format!(
        "\
version: 1
kind: stack
meta: {{name: views}}
components:
- {{name: a, source: {{dir: a}}}}
- {{name: b, source: {{dir: b}}, depends: [a]}}
- {{name: c, source: {{dir: c}}, depends: [a]}}
lifecycle: {{verbs: [deploy, undeploy], order: [a, b, c]}}
parameters:
- {{name: x, value: {x}}}
---
version: 1
kind: component
meta: {{name: a}}
parameters:
- {{name: x, env: X}}
outputs:
- {{name: a.val, fromTfVar: val}}
- {{name: a.id, fromTfVar: id}}
---
version: 1
kind: component
meta: {{name: b}}
parameters:
- {{name: b.in, value: '${{a.val}}', env: IN}}
---
version: 1
kind: component
meta: {{name: c}}
parameters:
- {{name: c.in, value: 'id ${{a.id}}', env: IN}}
"
    );
    let mut test = Test::new()
        .file("hub.yaml.elaborate", &text)
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo 'id = id-1'\n",
        )
        .script(
            "a/plan.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = planned-$X\"; echo 'id (known after apply)'\n",
        );
    for name in ["a", "b", "c"] {
        if name != "a" {
            test = test.script(&format!("{name}/deploy.sh"), "#!/bin/sh\n");
        }
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

#[test]
fn the_graph_marks_deferred_components_in_dot_and_mermaid() {
    let test = stack("v1");
    let graph = |extra: &[&str]| {
        let mut args = vec!["graph", "hub.yaml.elaborate"];
        args.extend(extra);
        hub_pinned(test.root(), &args)
    };
    let out = graph(&["--plan-steps"]);
    out.success();
    assert!(
        out.stdout
            .contains("\"c\" [label=\"c\\ndeferred until a applies\", style=\"rounded,dashed\"];"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\"b\" [label=\"b\", style=\"rounded\"];"),
        "{}",
        out.stdout
    );
    let out = graph(&["--plan-steps", "--format", "mermaid"]);
    out.success();
    assert!(
        out.stdout
            .contains("  n2[\"c<br>deferred until a applies\"]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("  class n2 deferred\n"),
        "{}",
        out.stdout
    );
    // Without the flag no plan step runs and nothing is marked.
    let out = graph(&[]);
    out.success();
    assert!(!out.stdout.contains("deferred"), "{}", out.stdout);
}

#[test]
fn the_html_report_of_a_plan_says_which_parameters_were_unknown() {
    let test = stack("v1");
    hub_pinned(
        test.root(),
        &[
            "plan",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--plan-steps",
            "--report",
            "plan.html",
        ],
    )
    .success();
    let html = std::fs::read_to_string(test.root().join("plan.html")).expect("plan.html");
    let card = |name: &str| {
        let at = html.find(&format!("data-name=\"{name}\"")).expect("a card");
        let start = html[..at].rfind("<details").expect("its <details");
        let end = html[at..].find("</details>").expect("its end") + at;
        html[start..end].to_string()
    };
    let c = card("c");
    assert!(
        c.contains("<td>c.in</td><td>added</td><td></td><td>(known after a deploys) <em class=\"unknown\">(unknown when planned)</em></td>"),
        "{c}"
    );
    assert!(
        c.contains("deferred: planned after a applies (unknown: `c.in` ← output `a.id` of a)"),
        "{c}"
    );
    let b = card("b");
    assert!(b.contains("<td>planned-v1</td>"), "{b}");
    assert!(!b.contains("unknown when planned"), "{b}");
}

#[test]
fn explain_shows_recorded_values_never_planned_ones() {
    let test = stack("v1");
    hub_pinned(
        test.root(),
        &["deploy", "hub.yaml.elaborate", "-s", "s.state"],
    )
    .success();
    // A plan through the graph plans `a.val = planned-v2` for `b`.
    let path = test.root().join("hub.yaml.elaborate");
    let text = std::fs::read_to_string(&path).expect("stack");
    std::fs::write(
        &path,
        text.replace("{name: x, value: v1}", "{name: x, value: v2}"),
    )
    .expect("write");
    let out = hub_pinned(
        test.root(),
        &[
            "plan",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--plan-steps",
            "--out",
            "p.json",
        ],
    );
    out.success();
    assert!(
        out.stdout.contains("b.in = v1 → planned-v2"),
        "{}",
        out.stdout
    );
    for format in [&[][..], &["--json"][..], &["--yaml"][..]] {
        let mut args = vec!["explain", "s.state", "-r"];
        args.extend(format);
        let out = hub_pinned(test.root(), &args);
        out.success();
        assert!(
            !out.stdout.contains("planned-"),
            "{format:?}: {}",
            out.stdout
        );
        assert!(out.stdout.contains("v1"), "{format:?}: {}", out.stdout);
    }
}
