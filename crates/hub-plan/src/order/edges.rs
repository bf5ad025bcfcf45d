//! Why a component runs after another: the edges of the deploy graph.
//!
//! A component runs after:
//! * the components it lists in `depends`;
//! * the components before it in the order that `provide` a capability it
//!   `requires`;
//! * the components before it in the order that declare an output it reads:
//!   one of its parameters is looked up by the output's name, or a value
//!   (its own, or the stack parameter it takes) refers to it with `${...}`
//!   or `#{...}`, directly or through stack parameters — an implicit
//!   dependency, like the ones Terraform infers from references;
//! * when the stack's author wrote `lifecycle.order` and the component
//!   declares no `depends`: every component before it in that order. The
//!   written order is the author's statement of what comes first; a
//!   component opts into running beside others by declaring `depends`.
//!
//! Only earlier components count: a later one could not have run first in
//! a one-at-a-time run either, so the graph stays acyclic and `-j 1` keeps
//! running the order as written.

mod readers;
pub use readers::{parameters_reading, ReadingParameter};

use hub_manifest::{parallel, ComponentRef, Elaborated, Manifest, Parameter};
use hub_params::Cel;
use hub_params::{template_names, FastMap};
use std::collections::{HashMap, HashSet};
use yaml_serde::Value;

/// Why a component runs after another one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Listed in its `depends`.
    Depends,
    /// Provides this capability, which it requires.
    Requires(String),
    /// Declares `output`, which its parameter `reader` reads.
    Output { reader: String, output: String },
    /// Comes before it in the `lifecycle.order` the author wrote, and it
    /// declares no `depends`.
    Order,
}

impl Reason {
    /// The short label of a graph edge.
    pub fn label(&self) -> String {
        match self {
            Reason::Depends => "depends".to_string(),
            Reason::Requires(capability) => capability.clone(),
            Reason::Output { output, .. } => format!("output {output}"),
            Reason::Order => "order".to_string(),
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Depends => f.write_str("`depends`"),
            Reason::Requires(capability) => write!(f, "provides `{capability}`"),
            Reason::Output { reader, output } if reader == output => {
                write!(f, "parameter `{output}` is its output")
            }
            Reason::Output { reader, output } => {
                write!(f, "`{reader}` reads its output `{output}`")
            }
            Reason::Order => f.write_str("comes before in `lifecycle.order`"),
        }
    }
}

/// The components one component runs after, each with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Upstream {
    /// In the order they were found: `depends` first.
    pub names: Vec<String>,
    /// `reasons[i]` for `names[i]`.
    pub reasons: Vec<Vec<Reason>>,
    /// Every name its parameters may look up, directly or through stack
    /// parameters: only outputs of these names (plain, or as
    /// `component:name`) can reach its parameters.
    pub reads: HashSet<String>,
}

impl Upstream {
    fn add(&mut self, name: &str, reason: Reason) {
        match self.names.iter().position(|n| n == name) {
            Some(i) if self.reasons[i].contains(&reason) => {}
            Some(i) => self.reasons[i].push(reason),
            None => {
                self.names.push(name.to_string());
                self.reasons.push(vec![reason]);
            }
        }
    }

    /// [`Upstream::add`] for many names at once: a name already there is
    /// found through a set, not a scan of the names.
    fn add_all(&mut self, names: Vec<&str>, reason: Reason) {
        let mut known: HashMap<String, usize> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        for name in names {
            match known.get(name) {
                Some(&i) if self.reasons[i].contains(&reason) => {}
                Some(&i) => self.reasons[i].push(reason.clone()),
                None => {
                    known.insert(name.to_string(), self.names.len());
                    self.names.push(name.to_string());
                    self.reasons.push(vec![reason.clone()]);
                }
            }
        }
    }

    /// Why it runs after `name` (empty when it does not).
    pub fn reasons_for(&self, name: &str) -> &[Reason] {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.reasons[i].as_slice())
            .unwrap_or_default()
    }
}

/// The edges of every component of the stack. `order` is
/// `lifecycle.order`; `written` tells whether the stack's author wrote it
/// (rather than elaborate deriving it from `depends`).
pub fn upstream(
    elaborated: &Elaborated,
    order: &[String],
    written: bool,
) -> HashMap<String, Upstream> {
    let groups = group_leaves(&elaborated.stack.parameters);
    let index = Index::new(elaborated, order, &groups);
    let components = &elaborated.stack.components;
    let found = parallel::map(components, EDGES_SPREAD, |reference| {
        index.upstream_of(reference)
    });
    let mut edges: HashMap<String, Upstream> = HashMap::with_capacity(order.len());
    for (reference, upstream) in components.iter().zip(found) {
        edges.insert(reference.name.clone(), upstream);
    }
    if written {
        add_order_edges(elaborated, order, &mut edges);
    }
    edges
}

/// Components per thread at least when their edges are found, and threads
/// at most: a component's edges need only the index, which is read-only.
const EDGES_SPREAD: parallel::Spread = parallel::Spread {
    smallest_share: 256,
    most_threads: 4,
};

/// A component without `depends` (not even `depends: []`) runs after
/// everything before it in the written order. Waiting for the components nothing later waits for yet
/// (the frontier) is enough: the others come before those. Every component
/// enters the frontier once and leaves it once, so the edges added and the
/// work done grow with the stack, not its square.
fn add_order_edges(
    elaborated: &Elaborated,
    order: &[String],
    edges: &mut HashMap<String, Upstream>,
) {
    // `depends: []` declares that the component needs nothing.
    let declares_depends: HashSet<&str> = elaborated
        .stack
        .components
        .iter()
        .filter(|c| !c.depends.is_absent())
        .map(|c| c.name.as_str())
        .collect();
    let mut frontier = Frontier::default();
    for name in order {
        let upstream = edges.entry(name.clone()).or_default();
        if declares_depends.contains(name.as_str()) {
            for reached in &upstream.names {
                frontier.remove(reached);
            }
        } else {
            upstream.add_all(frontier.drain(), Reason::Order);
        }
        frontier.push(name);
    }
}

/// The components nothing later in the written order waits for yet, in
/// the order they came.
#[derive(Default)]
struct Frontier<'o> {
    names: Vec<Option<&'o str>>,
    slot: HashMap<&'o str, usize>,
}

impl<'o> Frontier<'o> {
    fn push(&mut self, name: &'o str) {
        self.slot.insert(name, self.names.len());
        self.names.push(Some(name));
    }

    fn remove(&mut self, name: &str) {
        if let Some(i) = self.slot.remove(name) {
            self.names[i] = None;
        }
    }

    fn drain(&mut self) -> Vec<&'o str> {
        self.slot.clear();
        self.names.drain(..).flatten().collect()
    }
}

/// What the edges are computed from, looked up by name.
struct Index<'e> {
    position: HashMap<&'e str, usize>,
    manifests: HashMap<&'e str, &'e Manifest>,
    /// Capability → components providing it.
    providers: HashMap<&'e str, Vec<&'e str>>,
    /// Output name → components declaring it.
    producers: HashMap<&'e str, Vec<&'e str>>,
    stack_params: StackParams<'e>,
}

impl<'e> Index<'e> {
    fn new(
        elaborated: &'e Elaborated,
        order: &'e [String],
        groups: &'e [Vec<Parameter>],
    ) -> Index<'e> {
        let mut index = Index {
            position: order
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), i))
                .collect(),
            manifests: HashMap::with_capacity(elaborated.components.len()),
            providers: HashMap::new(),
            producers: HashMap::new(),
            stack_params: StackParams::new(&elaborated.stack.parameters, groups),
        };
        for manifest in &elaborated.components {
            let name = manifest.meta.name.as_str();
            index.manifests.insert(name, manifest);
            for capability in &manifest.provides {
                index.providers.entry(capability).or_default().push(name);
            }
            for output in &manifest.outputs {
                index.producers.entry(&output.name).or_default().push(name);
            }
        }
        index
    }

    /// `a` comes before `b` in the order.
    fn before(&self, a: &str, b: &str) -> bool {
        match (self.position.get(a), self.position.get(b)) {
            (Some(a), Some(b)) => a < b,
            _ => false,
        }
    }

    /// The edges of the component `reference` names.
    fn upstream_of(&self, reference: &ComponentRef) -> Upstream {
        let mut upstream = Upstream::default();
        for dependency in &reference.depends {
            upstream.add(dependency, Reason::Depends);
        }
        if let Some(manifest) = self.manifests.get(reference.name.as_str()) {
            self.providers_of_requirements(&reference.name, manifest, &mut upstream);
            self.producers_of_outputs_read(&reference.name, manifest, &mut upstream);
        }
        upstream
    }

    fn providers_of_requirements(&self, name: &str, manifest: &Manifest, upstream: &mut Upstream) {
        for requirement in &manifest.requires {
            for provider in self
                .providers
                .get(requirement.as_str())
                .into_iter()
                .flatten()
            {
                if self.before(provider, name) {
                    upstream.add(provider, Reason::Requires(requirement.clone()));
                }
            }
        }
    }

    /// Edges to the earlier components declaring an output that one of the
    /// component's parameters reads. (Its declared outputs' values read its
    /// own parameters only.)
    fn producers_of_outputs_read(&self, name: &str, manifest: &Manifest, upstream: &mut Upstream) {
        let mut reads = Reads::default();
        for (param, _) in hub_params::flatten(&manifest.parameters) {
            if param.name.starts_with("hub.") {
                upstream.reads.insert(param.name.clone());
                continue;
            }
            let reader = param.name.as_str();
            match self.stack_params.get(&param.name, name) {
                Some(stack_param) => self.read_values(stack_param, reader, &mut reads),
                None => {
                    reads.push(&param.name, reader);
                    if let Some(stack_param) = self.stack_params.get(&param.name, "") {
                        self.read_values(stack_param, reader, &mut reads);
                    }
                }
            }
            self.read_values(&param, reader, &mut reads);
        }
        while let Some((read, reader)) = reads.next() {
            upstream.reads.insert(read.clone());
            self.add_producers(name, manifest, &read, &reader, upstream);
            let stack_param = self
                .stack_params
                .get(&read, name)
                .or_else(|| self.stack_params.get(&read, ""));
            if let Some(stack_param) = stack_param {
                self.read_values(stack_param, &reader, &mut reads);
            }
        }
    }

    fn add_producers(
        &self,
        name: &str,
        manifest: &Manifest,
        read: &str,
        reader: &str,
        upstream: &mut Upstream,
    ) {
        let own_kind = manifest.meta.kind.as_str();
        let visible = |producer: &str| {
            producer != name
                && self.before(producer, name)
                && (own_kind.is_empty()
                    || self
                        .manifests
                        .get(producer)
                        .is_none_or(|m| m.meta.kind != own_kind))
        };
        let reason = |output: &str| Reason::Output {
            reader: reader.to_string(),
            output: output.to_string(),
        };
        for producer in self.producers.get(read).into_iter().flatten() {
            if visible(producer) {
                upstream.add(producer, reason(read));
            }
        }
        if let Some((producer, output)) = read.split_once(':') {
            let declared = self
                .manifests
                .get(producer)
                .is_some_and(|m| m.outputs.iter().any(|o| o.name == output));
            if declared && visible(producer) {
                upstream.add(producer, reason(output));
            }
        }
    }

    fn read_values(&self, param: &Parameter, reader: &str, reads: &mut Reads) {
        for value in [&param.value, param.default_value()].into_iter().flatten() {
            self.read_value(value, reader, reads);
        }
    }

    /// The names a value refers to with `${name}` or in `#{...}`.
    fn read_value(&self, value: &Value, reader: &str, reads: &mut Reads) {
        if let Value::String(text) = value {
            // The parser's cache is the thread's own: the index is read
            // on several threads (`upstream`).
            for name in template_names(&Cel::shared(), text) {
                reads.push(&name, reader);
            }
        }
    }
}

/// The leaves of each group parameter of the stack, in order: what
/// [`hub_params::flatten`] would build for them, kept so that the index can
/// borrow them.
fn group_leaves(params: &[Parameter]) -> Vec<Vec<Parameter>> {
    params
        .iter()
        .filter(|p| !p.parameters().is_empty())
        .map(|p| {
            hub_params::flatten(std::slice::from_ref(p))
                .into_iter()
                .map(|(leaf, _)| leaf.into_owned())
                .collect()
        })
        .collect()
}

/// The stack parameters (flattened) by name and component, as the text
/// `name|component` (or `name`) would find them, the last declaration of a
/// name winning. A component's own parameters sit together in a short list,
/// so a lookup touches a few cache lines instead of a table entry per
/// stack parameter, and nothing is copied.
#[derive(Default)]
struct StackParams<'e> {
    plain: FastMap<&'e str, &'e Parameter>,
    by_component: FastMap<&'e str, Vec<(&'e str, &'e Parameter)>>,
    /// Names or components holding `|`, whose text could be read as
    /// another name and component: looked up by their whole text.
    odd: HashMap<String, &'e Parameter>,
}

impl<'e> StackParams<'e> {
    fn new(params: &'e [Parameter], groups: &'e [Vec<Parameter>]) -> StackParams<'e> {
        let mut table = StackParams::default();
        let mut groups = groups.iter();
        for param in params {
            if param.parameters().is_empty() {
                table.insert(param);
            } else {
                for leaf in groups.next().into_iter().flatten() {
                    table.insert(leaf);
                }
            }
        }
        table
    }

    fn insert(&mut self, param: &'e Parameter) {
        if param.name.contains('|') || param.component.contains('|') {
            let text = hub_params::qualified(&param.name, &param.component);
            self.odd.insert(text, param);
            return;
        }
        if !self.odd.is_empty() {
            // The later declaration of the same text wins.
            self.odd
                .remove(&hub_params::qualified(&param.name, &param.component));
        }
        if param.component.is_empty() {
            self.plain.insert(&param.name, param);
        } else {
            self.by_component
                .entry(&param.component)
                .or_default()
                .push((&param.name, param));
        }
    }

    /// The parameter the text `name|component` (`name` when `component`
    /// is empty) names.
    fn get(&self, name: &str, component: &str) -> Option<&'e Parameter> {
        if !self.odd.is_empty() {
            if let Some(&param) = self.odd.get(&hub_params::qualified(name, component)) {
                return Some(param);
            }
        }
        // The other entries hold no `|`: the text splits one way only.
        let (name, component) = match (name.split_once('|'), component.is_empty()) {
            (Some((name, qualifier)), true) if !qualifier.is_empty() => (name, qualifier),
            (Some(_), _) => return None,
            (None, _) => (name, component),
        };
        if component.is_empty() {
            return self.plain.get(name).copied();
        }
        let own = self.by_component.get(component)?;
        own.iter().rev().find(|(n, _)| *n == name).map(|&(_, p)| p)
    }
}

/// Names still to look at, each once, with the parameter of the component
/// that (directly or not) reads it.
#[derive(Default)]
struct Reads {
    seen: HashSet<String>,
    pending: Vec<(String, String)>,
}

impl Reads {
    fn push(&mut self, name: &str, reader: &str) {
        if !name.is_empty() && self.seen.insert(name.to_string()) {
            self.pending.push((name.to_string(), reader.to_string()));
        }
    }

    fn next(&mut self) -> Option<(String, String)> {
        self.pending.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::{ComponentRef, Depends, Output};

    /// A component: its name, `depends`, its parameters as `(name, value)`
    /// and its declared outputs.
    struct Spec<'a> {
        name: &'a str,
        depends: &'a [&'a str],
        params: &'a [(&'a str, &'a str)],
        outputs: &'a [&'a str],
    }

    fn spec<'a>(name: &'a str, depends: &'a [&'a str]) -> Spec<'a> {
        Spec {
            name,
            depends,
            params: &[],
            outputs: &[],
        }
    }

    fn param(name: &str, value: &str) -> Parameter {
        Parameter {
            name: name.to_string(),
            value: (!value.is_empty()).then(|| Value::String(value.to_string())),
            ..Parameter::default()
        }
    }

    fn elaborated(specs: &[Spec], stack_params: &[(&str, &str)]) -> Elaborated {
        let mut e = Elaborated::default();
        for s in specs {
            e.stack.components.push(ComponentRef {
                name: s.name.to_string(),
                // No names is no `depends` key, not `depends: []`.
                depends: match s.depends.is_empty() {
                    true => Depends::default(),
                    false => s.depends.iter().map(|d| d.to_string()).collect(),
                },
                ..ComponentRef::default()
            });
            e.stack.lifecycle.order.push(s.name.to_string());
            let mut m = Manifest::default();
            m.meta.name = s.name.to_string();
            m.parameters = s.params.iter().map(|(n, v)| param(n, v)).collect();
            m.outputs = s
                .outputs
                .iter()
                .map(|o| Output {
                    name: o.to_string(),
                    ..Output::default()
                })
                .collect();
            e.components.push(m);
        }
        e.stack.parameters = stack_params
            .iter()
            .map(|(n, v)| match n.split_once('|') {
                Some((n, c)) => Parameter {
                    component: c.to_string(),
                    ..param(n, v)
                },
                None => param(n, v),
            })
            .collect();
        e
    }

    fn after(e: &Elaborated, written: bool) -> HashMap<String, Upstream> {
        upstream(e, &e.stack.lifecycle.order.clone(), written)
    }

    #[test]
    fn a_written_order_chains_components_without_depends() {
        let e = elaborated(&[spec("a", &[]), spec("b", &[]), spec("c", &[])], &[]);
        let edges = after(&e, true);
        assert!(edges["a"].names.is_empty());
        assert_eq!(edges["b"].names, ["a"]);
        assert_eq!(edges["c"].names, ["b"]);
        assert_eq!(edges["c"].reasons_for("b"), [Reason::Order]);
        let derived = after(&e, false);
        assert!(derived.values().all(|u| u.names.is_empty()));
    }

    #[test]
    fn declared_depends_opt_out_of_the_order() {
        // a, b(depends a), c(depends a), d: d waits for b and c.
        let e = elaborated(
            &[
                spec("a", &[]),
                spec("b", &["a"]),
                spec("c", &["a"]),
                spec("d", &[]),
            ],
            &[],
        );
        let edges = after(&e, true);
        assert_eq!(edges["b"].names, ["a"]);
        assert_eq!(edges["c"].names, ["a"]);
        assert_eq!(edges["d"].names, ["b", "c"]);
    }

    #[test]
    fn a_parameter_named_after_an_earlier_output_waits_for_its_producer() {
        let e = elaborated(
            &[
                Spec {
                    outputs: &["component.slow.slept"],
                    ..spec("slow", &[])
                },
                Spec {
                    params: &[("component.slow.slept", "")],
                    ..spec("after", &[])
                },
            ],
            &[],
        );
        let edges = after(&e, false);
        assert_eq!(edges["after"].names, ["slow"]);
        assert_eq!(
            edges["after"].reasons_for("slow"),
            [Reason::Output {
                reader: "component.slow.slept".into(),
                output: "component.slow.slept".into()
            }]
        );
    }

    #[test]
    fn references_are_followed_through_stack_parameters_and_cel() {
        let e = elaborated(
            &[
                Spec {
                    outputs: &["db.host", "db.port"],
                    ..spec("db", &[])
                },
                Spec {
                    params: &[("app.url", ""), ("app.port", "#{db.port + 1}")],
                    ..spec("app", &[])
                },
                Spec {
                    params: &[("web.db", "${db:db.host}")],
                    ..spec("web", &[])
                },
            ],
            &[("app.url|app", "http://${link}"), ("link", "${db.host}")],
        );
        let edges = after(&e, false);
        let reasons = edges["app"].reasons_for("db");
        assert!(reasons.contains(&Reason::Output {
            reader: "app.url".into(),
            output: "db.host".into()
        }));
        assert!(reasons.contains(&Reason::Output {
            reader: "app.port".into(),
            output: "db.port".into()
        }));
        assert_eq!(edges["web"].names, ["db"]);
    }

    /// Enough components that their edges are found on several threads:
    /// each reads the output of the one before, through `${}` or CEL (whose
    /// parser each thread has its own of), and runs after it only.
    #[test]
    fn every_component_of_a_long_chain_of_references_runs_after_the_one_before() {
        let names: Vec<String> = (0..1000).map(|at| format!("c{at:04}")).collect();
        let owned: Vec<(String, String, String)> = (0..1000)
            .map(|at| {
                let read = match at % 2 {
                    0 => format!("${{out{}}}", at.max(1) - 1),
                    _ => format!("#{{out{} + 1}}", at - 1),
                };
                (format!("in{at}"), read, format!("out{at}"))
            })
            .collect();
        let params: Vec<[(&str, &str); 1]> = owned
            .iter()
            .map(|(name, value, _)| [(name.as_str(), value.as_str())])
            .collect();
        let outputs: Vec<[&str; 1]> = owned.iter().map(|(_, _, out)| [out.as_str()]).collect();
        let specs: Vec<Spec> = (0..1000)
            .map(|at| Spec {
                params: match at {
                    0 => &[],
                    _ => &params[at],
                },
                outputs: &outputs[at],
                ..spec(&names[at], &[])
            })
            .collect();
        let edges = after(&elaborated(&specs, &[]), false);
        assert!(edges["c0000"].names.is_empty());
        for at in 1..1000 {
            let upstream = &edges[&names[at]];
            assert_eq!(upstream.names, [names[at - 1].as_str()], "{}", names[at]);
            assert_eq!(
                upstream.reasons_for(&names[at - 1]),
                [Reason::Output {
                    reader: format!("in{at}"),
                    output: format!("out{}", at - 1),
                }],
            );
        }
    }

    #[test]
    fn later_producers_and_the_component_itself_do_not_count() {
        let e = elaborated(
            &[
                Spec {
                    params: &[("x", "${y}")],
                    outputs: &["x"],
                    ..spec("a", &[])
                },
                Spec {
                    outputs: &["y"],
                    ..spec("b", &[])
                },
            ],
            &[],
        );
        let edges = after(&e, false);
        assert!(edges["a"].names.is_empty());
        assert!(edges["b"].names.is_empty());
    }

    fn stack_param(name: &str, component: &str, value: &str) -> Parameter {
        Parameter {
            component: component.to_string(),
            ..param(name, value)
        }
    }

    proptest::proptest! {
        /// The index finds what a map from each parameter's text
        /// `name|component` to its last declaration finds.
        #[test]
        fn stack_params_find_what_their_text_finds(
            declared in proptest::collection::vec(
                ("[ab|]{1,3}", "(|[cd|]{1,2})"), 0..24),
            lookups in proptest::collection::vec(("[ab|]{1,3}", "(|[cd|]{1,2})"), 1..24),
        ) {
            let params: Vec<Parameter> = declared
                .iter()
                .enumerate()
                .map(|(i, (n, c))| stack_param(n, c, &i.to_string()))
                .collect();
            let by_text: HashMap<String, &Parameter> = params
                .iter()
                .map(|p| (hub_params::qualified(&p.name, &p.component), p))
                .collect();
            let index = StackParams::new(&params, &[]);
            for (name, component) in &lookups {
                let expected = by_text
                    .get(&hub_params::qualified(name, component))
                    .map(|p| &p.value);
                proptest::prop_assert_eq!(
                    index.get(name, component).map(|p| &p.value),
                    expected,
                    "{}|{}", name, component
                );
            }
        }
    }
}
