//! `hub graph`: the dependency graph of a stack as Graphviz dot or Mermaid.
//!
//! Edges point from a dependency to its dependent (the deploy direction):
//! solid for `depends`, dashed and labelled with the capability for a
//! `requires` met by an earlier component's `provides` ([`Schedule::after`]).
//! Components of one wave (they can deploy at once) share a rank. With a
//! state, each component shows its status there, colour-coded.

use hub_manifest::Elaborated;
use hub_plan::order::edges::Reason;
use hub_plan::order::schedule::Schedule;
use hub_state::State;
use std::fmt::Write;

/// The output formats of `hub graph --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Dot,
    Mermaid,
}

impl Format {
    /// `dot` or `mermaid`; `None` for anything else.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "dot" => Some(Format::Dot),
            "mermaid" => Some(Format::Mermaid),
            _ => None,
        }
    }
}

/// One component of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// May fail without failing the run.
    pub optional: bool,
    /// Says `depends: []` under a written order: waits for nothing the
    /// order put before it.
    pub needs_nothing: bool,
    /// Its status in the state, when a state was given (`none` when the
    /// state file does not exist).
    pub status: Option<String>,
    /// `hub graph --plan-steps`: the components it is deferred until
    /// (empty: not deferred).
    pub deferred: Vec<String>,
}

/// `from` runs before `to` in a deploy (positions in [`Graph::nodes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// Why: `depends`, capabilities, outputs read, the written order.
    pub reasons: Vec<Reason>,
}

/// How an edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// `depends`.
    Solid,
    /// A capability or an output.
    Dashed,
    /// Only the written order.
    Dotted,
}

impl Edge {
    fn line(&self) -> Line {
        if self.reasons.contains(&Reason::Depends) {
            Line::Solid
        } else if self.reasons.iter().all(|r| *r == Reason::Order) {
            Line::Dotted
        } else {
            Line::Dashed
        }
    }

    /// The label of a dashed edge: its capabilities and outputs. A
    /// `depends` edge needs none, nor does the order alone.
    fn label(&self) -> Option<String> {
        if self.line() != Line::Dashed {
            return None;
        }
        let labels: Vec<String> = self
            .reasons
            .iter()
            .filter(|r| matches!(r, Reason::Requires(_) | Reason::Output { .. }))
            .map(Reason::label)
            .collect();
        (!labels.is_empty()).then(|| labels.join(", "))
    }
}

/// The graph of a stack, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub stack: String,
    /// In `lifecycle.order`.
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Positions in `nodes`, wave by wave.
    pub waves: Vec<Vec<usize>>,
}

impl Graph {
    /// The graph of a deploy plan; `status` gives each component's status
    /// when a state was given.
    pub fn new(
        plan: &Schedule,
        elaborated: &Elaborated,
        status: Option<&dyn Fn(&str) -> String>,
    ) -> Graph {
        // The selected components: all of them unless `--affected`.
        let position = |name: &str| plan.selected.iter().position(|n| n == name);
        let nodes = plan
            .selected
            .iter()
            .map(|name| Node {
                name: name.clone(),
                optional: plan.is_optional(name),
                needs_nothing: plan.needs_nothing(name),
                status: status.map(|status| status(name)),
                deferred: Vec::new(),
            })
            .collect();
        let mut edges = Vec::new();
        for (to, name) in plan.selected.iter().enumerate() {
            for dependency in plan.after(name) {
                let Some(from) = position(dependency) else {
                    continue;
                };
                edges.push(Edge {
                    from,
                    to,
                    reasons: plan.reasons(name, dependency).to_vec(),
                });
            }
        }
        let waves = plan
            .waves()
            .iter()
            .map(|wave| wave.iter().filter_map(|name| position(name)).collect())
            .collect();
        Graph {
            stack: elaborated.stack.meta.name.clone(),
            nodes,
            edges,
            waves,
        }
    }
}

impl Graph {
    /// Marks component `name` deferred until `after` apply.
    pub fn defer(&mut self, name: &str, after: &[String]) {
        if let Some(node) = self.nodes.iter_mut().find(|n| n.name == name) {
            node.deferred = after.to_vec();
        }
    }
}

/// The status of `name` in a state for the graph: `none` without a state
/// file, `undeployed` without an entry, the entry's text when it is
/// outside the status vocabulary.
pub fn component_status(state: Option<&State>, name: &str) -> String {
    let Some(state) = state else {
        return "none".to_string();
    };
    match state.component_status(name) {
        Some(status) => status.as_str().to_string(),
        None => state
            .components
            .get(name)
            .map(|entry| entry.status.to_string())
            .unwrap_or_default(),
    }
}

/// How a status is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tone {
    Deployed,
    Failed,
    InProgress,
    Idle,
}

impl Tone {
    const ALL: [Tone; 4] = [Tone::Deployed, Tone::Failed, Tone::InProgress, Tone::Idle];

    fn of(status: &str) -> Tone {
        match status {
            "deployed" => Tone::Deployed,
            "error" => Tone::Failed,
            "deploying" | "undeploying" => Tone::InProgress,
            _ => Tone::Idle,
        }
    }

    fn fill(self) -> &'static str {
        match self {
            Tone::Deployed => "#a5d6a7",
            Tone::Failed => "#ef9a9a",
            Tone::InProgress => "#fff59d",
            Tone::Idle => "#e0e0e0",
        }
    }

    fn stroke(self) -> &'static str {
        match self {
            Tone::Deployed => "#2e7d32",
            Tone::Failed => "#c62828",
            Tone::InProgress => "#f9a825",
            Tone::Idle => "#757575",
        }
    }

    /// The Mermaid class name.
    fn class(self) -> &'static str {
        match self {
            Tone::Deployed => "deployed",
            Tone::Failed => "failed",
            Tone::InProgress => "in_progress",
            Tone::Idle => "idle",
        }
    }
}

pub fn render(graph: &Graph, format: Format) -> String {
    match format {
        Format::Dot => dot(graph),
        Format::Mermaid => mermaid(graph),
    }
}

/// The first line of a node's label: its name, with markers when it is
/// optional or says `depends: []`.
fn title(node: &Node) -> String {
    let mut title = node.name.clone();
    if node.optional {
        title.push_str(" (optional)");
    }
    if node.needs_nothing {
        title.push_str(" (depends: [])");
    }
    title
}

/// The line a deferred node adds to its label.
fn deferred_line(node: &Node) -> Option<String> {
    (!node.deferred.is_empty())
        .then(|| format!("deferred until {} applies", node.deferred.join(", ")))
}

fn headline(graph: &Graph) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "stack {}: {} in {}; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`",
        one_line(&graph.stack),
        plural(graph.nodes.len(), "component"),
        plural(graph.waves.len(), "wave"),
    )
}

/// Text for a comment: control characters (line breaks) become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Graphviz dot: waves are rank=same subgraphs, nodes are the quoted names.
pub fn dot(graph: &Graph) -> String {
    let mut out = format!("// {}\n", headline(graph));
    let _ = writeln!(out, "digraph {} {{", dot_string(&graph.stack));
    out.push_str("  rankdir=LR;\n  node [shape=box, style=rounded];\n");
    for (number, wave) in graph.waves.iter().enumerate() {
        let _ = writeln!(out, "  subgraph \"wave {}\" {{", number + 1);
        out.push_str("    rank=same;\n");
        for &index in wave {
            let _ = writeln!(out, "    {}", dot_node(&graph.nodes[index]));
        }
        out.push_str("  }\n");
    }
    for edge in &graph.edges {
        let from = dot_string(&graph.nodes[edge.from].name);
        let to = dot_string(&graph.nodes[edge.to].name);
        let mut attributes = Vec::new();
        match edge.line() {
            Line::Solid => {}
            Line::Dashed => attributes.push("style=dashed".to_string()),
            Line::Dotted => attributes.push("style=dotted".to_string()),
        }
        if let Some(label) = edge.label() {
            attributes.push(format!("label={}", dot_string(&label)));
        }
        match attributes.is_empty() {
            true => {
                let _ = writeln!(out, "  {from} -> {to};");
            }
            false => {
                let _ = writeln!(out, "  {from} -> {to} [{}];", attributes.join(", "));
            }
        }
    }
    out.push_str("}\n");
    out
}

fn dot_node(node: &Node) -> String {
    let mut label = title(node);
    let mut style = vec!["rounded"];
    if node.optional {
        style.push("dashed");
    }
    if let Some(deferred) = deferred_line(node) {
        label = format!("{label}\n{deferred}");
        style.push("dashed");
        style.dedup();
    }
    let mut colours = String::new();
    if let Some(status) = &node.status {
        label = format!("{label}\n{status}");
        style.push("filled");
        let tone = Tone::of(status);
        colours = format!(
            ", fillcolor=\"{}\", color=\"{}\"",
            tone.fill(),
            tone.stroke()
        );
    }
    format!(
        "{} [label={}, style=\"{}\"{colours}];",
        dot_string(&node.name),
        dot_string(&label),
        style.join(","),
    )
}

/// A quoted dot string: backslashes and quotes escaped, line breaks as `\n`.
fn dot_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Mermaid flowchart: nodes are `n0`, `n1`… labelled with the names;
/// waves are comments; statuses and optional components are classes.
pub fn mermaid(graph: &Graph) -> String {
    let mut out = String::from("flowchart LR\n");
    let _ = writeln!(out, "  %% {}", headline(graph));
    for (number, wave) in graph.waves.iter().enumerate() {
        let names: Vec<String> = wave
            .iter()
            .map(|&i| one_line(&graph.nodes[i].name))
            .collect();
        let _ = writeln!(out, "  %% wave {}: {}", number + 1, names.join(", "));
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        let mut label = mermaid_text(&title(node));
        if let Some(status) = &node.status {
            let _ = write!(label, "<br>{}", mermaid_text(status));
        }
        if let Some(deferred) = deferred_line(node) {
            let _ = write!(label, "<br>{}", mermaid_text(&deferred));
        }
        let _ = writeln!(out, "  n{index}[\"{label}\"]");
    }
    for edge in &graph.edges {
        let (from, to) = (edge.from, edge.to);
        let arrow = match edge.line() {
            Line::Solid => "-->",
            Line::Dashed | Line::Dotted => "-.->",
        };
        match edge.label() {
            Some(label) => {
                let label = mermaid_text(&label);
                let _ = writeln!(out, "  n{from} {arrow}|\"{label}\"| n{to}");
            }
            None => {
                let _ = writeln!(out, "  n{from} {arrow} n{to}");
            }
        }
    }
    push_mermaid_classes(&mut out, graph);
    out
}

fn push_mermaid_classes(out: &mut String, graph: &Graph) {
    let members = |keep: &dyn Fn(&Node) -> bool| -> Vec<String> {
        graph
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| keep(node))
            .map(|(index, _)| format!("n{index}"))
            .collect()
    };
    for tone in Tone::ALL {
        let nodes = members(&|node| node.status.as_deref().map(Tone::of) == Some(tone));
        if !nodes.is_empty() {
            let _ = writeln!(
                out,
                "  classDef {} fill:{},stroke:{}",
                tone.class(),
                tone.fill(),
                tone.stroke()
            );
            let _ = writeln!(out, "  class {} {}", nodes.join(","), tone.class());
        }
    }
    let optional = members(&|node| node.optional);
    if !optional.is_empty() {
        out.push_str("  classDef optional stroke-dasharray:5 5\n");
        let _ = writeln!(out, "  class {} optional", optional.join(","));
    }
    let deferred = members(&|node| !node.deferred.is_empty());
    if !deferred.is_empty() {
        out.push_str("  classDef deferred stroke-dasharray:2 4,font-style:italic\n");
        let _ = writeln!(out, "  class {} deferred", deferred.join(","));
    }
}

/// Text inside a quoted Mermaid label: letters, digits and a few plain
/// punctuation marks as they are, everything else as an entity code
/// (`#34;`), so no name can end the label or be read as markup.
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_alphanumeric() || " -_.,:/()+=@".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", u32::from(c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::{ComponentRef, Depends, Manifest};
    use hub_plan::order::schedule::{validate, Selection, Verb};

    /// A component: `(name, depends, requires, provides)`.
    type Spec<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);

    /// The stack of these components, in this order (derived from
    /// `depends`, as if the author had not written one).
    fn elaborated(components: &[Spec]) -> Elaborated {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut stack = Manifest {
            kind: "stack".into(),
            ..Manifest::default()
        };
        stack.meta.name = "s".into();
        let mut documents = Vec::new();
        for (name, depends, requires, provides) in components {
            stack.components.push(ComponentRef {
                name: name.to_string(),
                depends: match depends.is_empty() {
                    true => Depends::default(),
                    false => strings(depends).into(),
                },
                ..ComponentRef::default()
            });
            stack.lifecycle.order.push(name.to_string());
            let mut document = Manifest::default();
            document.meta.name = name.to_string();
            document.requires = strings(requires);
            document.provides = strings(provides);
            documents.push(document);
        }
        let mut e = Elaborated {
            stack,
            components: documents,
            ..Elaborated::default()
        };
        e.provenance.order_derived = true;
        e
    }

    fn graph(e: &Elaborated, status: Option<&dyn Fn(&str) -> String>) -> Graph {
        let order = validate(e).unwrap();
        let plan = Schedule::new(e, order, Verb::Deploy, &Selection::default(), None).unwrap();
        Graph::new(&plan, e, status)
    }

    fn diamond() -> Elaborated {
        elaborated(&[
            ("base", &[], &[], &["kube"]),
            ("left", &["base"], &[], &[]),
            ("right", &[], &["kube"], &[]),
            ("top", &["left", "right"], &[], &[]),
        ])
    }

    #[test]
    fn edges_run_from_dependency_to_dependent_and_name_capabilities() {
        let g = graph(&diamond(), None);
        let edges: Vec<(usize, usize, Vec<Reason>)> = g
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.reasons.clone()))
            .collect();
        assert_eq!(
            edges,
            [
                (0, 1, vec![Reason::Depends]),
                (0, 2, vec![Reason::Requires("kube".to_string())]),
                (1, 3, vec![Reason::Depends]),
                (2, 3, vec![Reason::Depends]),
            ]
        );
        assert_eq!(g.waves, [vec![0], vec![1, 2], vec![3]]);
    }

    #[test]
    fn a_written_order_is_drawn_dotted_and_chains_components_without_depends() {
        let mut e = diamond();
        e.provenance.order_derived = false;
        let g = graph(&e, None);
        // `right` declares no `depends`: it waits for `left` too.
        assert_eq!(g.waves, [vec![0], vec![1], vec![2], vec![3]]);
        let text = dot(&g);
        assert!(
            text.contains("\"base\" -> \"right\" [style=dashed, label=\"kube\"];"),
            "{text}"
        );
        assert!(
            text.contains("\"left\" -> \"right\" [style=dotted];"),
            "{text}"
        );
        let text = mermaid(&g);
        assert!(text.contains("  n1 -.-> n2\n"), "{text}");
    }

    #[test]
    fn dot_draws_waves_as_ranks_and_requires_dashed() {
        let status = |name: &str| if name == "base" { "deployed" } else { "error" }.to_string();
        let text = dot(&graph(&diamond(), Some(&status)));
        assert!(
            text.contains("  subgraph \"wave 2\" {\n    rank=same;\n    \"left\""),
            "{text}"
        );
        assert!(
            text.contains("\"base\" -> \"right\" [style=dashed, label=\"kube\"];"),
            "{text}"
        );
        assert!(text.contains("\"left\" -> \"top\";"), "{text}");
        assert!(
            text.contains("\"base\" [label=\"base\\ndeployed\", style=\"rounded,filled\", fillcolor=\"#a5d6a7\""),
            "{text}"
        );
        assert!(text.contains("fillcolor=\"#ef9a9a\""), "{text}");
    }

    #[test]
    fn mermaid_uses_numbered_ids_and_classes() {
        let mut e = diamond();
        e.stack.lifecycle.optional = vec!["top".into()];
        let status = |name: &str| if name == "top" { "deploying" } else { "none" }.to_string();
        let text = mermaid(&graph(&e, Some(&status)));
        assert!(text.starts_with("flowchart LR\n"), "{text}");
        assert!(text.contains("  n0 -.->|\"kube\"| n2\n"), "{text}");
        assert!(
            text.contains("  n3[\"top (optional)<br>deploying\"]\n"),
            "{text}"
        );
        assert!(text.contains("  class n3 in_progress\n"), "{text}");
        assert!(text.contains("  class n0,n1,n2 idle\n"), "{text}");
        assert!(text.contains("  class n3 optional\n"), "{text}");
        assert!(!text.contains("failed"), "only the classes in use: {text}");
    }

    #[test]
    fn names_are_escaped_in_both_formats() {
        // `\` and control characters cannot be in a name (see
        // `manifest::names`); everything else is escaped.
        let odd = "we\"ird name #1 <b>|x|";
        let e = elaborated(&[("a", &[], &[], &[]), (odd, &["a"], &[], &[])]);
        let g = graph(&e, None);
        let text = dot(&g);
        assert!(
            text.contains("\"a\" -> \"we\\\"ird name #1 <b>|x|\";"),
            "{text}"
        );
        let text = mermaid(&g);
        assert!(
            text.contains("  n1[\"we#34;ird name #35;1 #60;b#62;#124;x#124;\"]\n"),
            "{text}"
        );
        assert!(
            text.contains("%% wave 2: we\"ird name #1 <b>|x|\n"),
            "{text}"
        );
    }

    #[test]
    fn statuses_come_from_the_state() {
        assert_eq!(component_status(None, "a"), "none");
        let mut state = State::default();
        assert_eq!(component_status(Some(&state), "a"), "undeployed");
        state.components.insert("a".into(), Default::default());
        assert_eq!(component_status(Some(&state), "a"), "deployed");
        state.components["a"].status = "odd".into();
        assert_eq!(component_status(Some(&state), "a"), "odd");
        assert_eq!(Tone::of("odd"), Tone::Idle);
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(Format::parse("dot"), Some(Format::Dot));
        assert_eq!(Format::parse("mermaid"), Some(Format::Mermaid));
        assert_eq!(Format::parse("svg"), None);
    }
}
