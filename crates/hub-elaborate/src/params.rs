//! Collecting and merging top-level parameters from component manifests,
//! parent stacks, the stack manifest and parameters files.

use hub_manifest::declared::Mark;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{leaf_position, leaves, locate, value_is_empty, Parameter, Segment, SourceFile};
use indexmap::{IndexMap, IndexSet};
use std::collections::HashMap;
use std::path::Path;

/// Where a list of parameters comes from; the rules differ per source.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// The `hub-component.yaml` of a component instance.
    Component { instance: &'a str, file: &'a Path },
    /// A stack manifest or a parameters file.
    Stack { file: &'a Path, application: bool },
    /// The already merged list of a parent stack.
    Parent,
}

impl Origin<'_> {
    /// The line of the parameter `mark` points at in this source's file
    /// (the nested parameter itself, not its group). The file is read
    /// again: only warnings ask.
    fn parameter_location(&self, mark: Mark) -> Option<Location> {
        let file = match self {
            Origin::Component { file, .. } | Origin::Stack { file, .. } => *file,
            Origin::Parent => return None,
        };
        let Ok(source) = SourceFile::read(file) else {
            return Some(Location::file(file));
        };
        let found = match mark.leaf {
            Some(leaf) => leaf_position(&source.text, mark.index, leaf as usize),
            None => locate(
                &source.text,
                &[
                    Segment::Key("parameters".into()),
                    Segment::Index(mark.index),
                ],
            ),
        };
        Some(match found {
            Some((line, column)) => Location::at(file, line, column),
            None => Location::file(file),
        })
    }
}

/// Warns of a parameter without a name; it is kept as `prefix.`.
/// `mark`: the top-level item holding it, whose line the warning names.
fn warn_empty_name(prefix: &str, origin: Origin<'_>, mark: Mark, warnings: &mut Warnings) {
    let kept = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}.")
    };
    warnings.warn(
        origin.parameter_location(mark),
        format!("a parameter has an empty name (under `{prefix}`); it is kept as `{kept}`"),
    );
}

/// Where a merged parameter comes from: the first source that declared it
/// and the last that set its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub first: Mark,
    pub valued: Option<Mark>,
}

impl Trace {
    /// Where to point at: the value's source, else the first declaration.
    pub fn mark(&self) -> Mark {
        self.valued.unwrap_or(self.first)
    }
}

/// The source of a list of parameters, for [`Trace`]s: a file of the
/// provenance, or a parent's merged list with its traces.
#[derive(Debug, Clone, Copy)]
pub enum Traced<'a> {
    File(usize),
    Parent(&'a [Trace]),
}

/// The merge table: one entry per `name` or `name|component`.
///
/// The keys are an index beside the parameters (entry `i` of `keys` is
/// `params[i]`), not a map holding them: the parameters are then sorted in
/// place when the table is taken apart, instead of into a second list as
/// large as the first (20 stack parameters per component make this the
/// largest list `hub elaborate` holds).
#[derive(Debug, Default)]
pub struct ParamTable {
    keys: IndexSet<String>,
    params: Vec<Parameter>,
    /// One per entry, in the same order.
    traces: Vec<Trace>,
    /// For each name, the components that have a qualified entry.
    qualified: HashMap<String, IndexSet<String>>,
}

impl ParamTable {
    /// An empty table with room for `capacity` entries: the lists are
    /// then not grown by doubling while filled (up to half their room
    /// unused, at the largest moment of `hub elaborate`).
    pub fn with_capacity(capacity: usize) -> Self {
        ParamTable {
            keys: IndexSet::with_capacity(capacity),
            params: Vec::with_capacity(capacity),
            traces: Vec::with_capacity(capacity),
            qualified: HashMap::new(),
        }
    }

    /// Adds the parameters of one source, after the checks and filtering that
    /// apply to it. `components` ranks the component instances of the stack.
    pub fn add_source(
        &mut self,
        params: &[Parameter],
        origin: Origin<'_>,
        components: &HashMap<String, usize>,
        traced: Traced<'_>,
        warnings: &mut Warnings,
    ) {
        let stamped;
        let params = match origin {
            // Instances read by the stack already carry their name.
            Origin::Component { instance, .. }
                if params.iter().any(|p| p.component != instance) =>
            {
                stamped = params
                    .iter()
                    .map(|p| Parameter {
                        component: instance.to_string(),
                        ..p.clone()
                    })
                    .collect::<Vec<_>>();
                &stamped[..]
            }
            _ => params,
        };
        let file = match traced {
            // Already flattened and checked, one trace per parameter.
            Traced::Parent(traces) => {
                for (p, trace) in params.iter().zip(traces) {
                    self.merge(p.clone(), *trace, origin, components, warnings);
                }
                return;
            }
            Traced::File(file) => file,
        };
        for (index, top) in params.iter().enumerate() {
            let item = Mark {
                file,
                index,
                leaf: None,
            };
            let flat = leaves(top, |prefix| {
                warn_empty_name(prefix, origin, item, warnings)
            });
            let group = !top.parameters().is_empty();
            for (leaf, mut p) in flat.into_iter().enumerate() {
                let mark = Mark {
                    file,
                    index,
                    leaf: group.then_some(leaf as u32),
                };
                if !matches!(origin, Origin::Parent) && !prepare(&mut p, origin, mark, warnings) {
                    continue;
                }
                let trace = Trace {
                    first: mark,
                    valued: (!value_is_empty(&p.value)).then_some(mark),
                };
                self.merge(p, trace, origin, components, warnings);
            }
        }
    }

    fn merge(
        &mut self,
        incoming: Parameter,
        trace: Trace,
        origin: Origin<'_>,
        components: &HashMap<String, usize>,
        warnings: &mut Warnings,
    ) {
        if incoming.component.is_empty() {
            if let Some(targets) = self.qualified.get(&incoming.name) {
                // Only instances of this stack: a qualifier naming no
                // component keeps its own value.
                let mut targets: Vec<(usize, &String)> = targets
                    .iter()
                    .filter_map(|c| components.get(c).map(|rank| (*rank, c)))
                    .collect();
                targets.sort_unstable();
                for (_, component) in targets {
                    let key = format!("{}|{component}", incoming.name);
                    if let Some(i) = self.keys.get_index_of(&key) {
                        let existing = &mut self.params[i];
                        let at = || origin.parameter_location(trace.first);
                        warn_less_specific(existing, &incoming, &key, at, warnings);
                        merge_fields(existing, &incoming);
                        if trace.valued.is_some() {
                            self.traces[i].valued = trace.valued;
                        }
                    }
                }
            }
        } else {
            // Looked up before inserting: most names are already known.
            match self.qualified.get_mut(&incoming.name) {
                Some(known) => {
                    if !known.contains(&incoming.component) {
                        known.insert(incoming.component.clone());
                    }
                }
                None => {
                    let known = IndexSet::from([incoming.component.clone()]);
                    self.qualified.insert(incoming.name.clone(), known);
                }
            }
        }
        match self.keys.insert_full(incoming.qualified_name()) {
            (i, false) => {
                merge_fields(&mut self.params[i], &incoming);
                if trace.valued.is_some() {
                    self.traces[i].valued = trace.valued;
                }
            }
            // `empty` is cleared by a merge only: a parameter declared once
            // keeps `empty: allow` next to its value (§9.4, §4.3.1).
            (_, true) => {
                self.params.push(incoming);
                self.traces.push(trace);
            }
        }
    }

    /// Gives a value to every parameter whose `fromEnv` names an override.
    pub fn apply_overrides(&mut self, overrides: &IndexMap<String, String>) {
        if overrides.is_empty() {
            return;
        }
        for p in &mut self.params {
            if let Some(v) = overrides.get(p.from_env()) {
                p.value = Some(yaml_serde::Value::String(v.clone()));
                p.rare_mut().empty.clear();
            }
        }
    }

    /// The entries sorted by key in byte order, as they are written, and
    /// their traces. The parameters are moved within their own list: the
    /// room the table holds is all the sort needs, besides one number per
    /// entry.
    pub fn into_sorted(self) -> (Vec<Parameter>, Vec<Trace>) {
        let ParamTable {
            keys,
            mut params,
            traces,
            ..
        } = self;
        // `order[k]`: the entry that goes to position `k`.
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]));
        drop(keys);
        let traces = order.iter().map(|&i| traces[i]).collect();
        permute(&mut params, order);
        params.shrink_to_fit();
        (params, traces)
    }
}

/// Puts `items[order[k]]` at position `k` for every `k`, in place, by
/// following each cycle of the permutation (`order` holds each index of
/// `items` once).
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        // Each cycle is walked once, from its smallest position; positions
        // already placed point at themselves.
        let mut k = start;
        while order[k] != start {
            let from = order[k];
            items.swap(k, from);
            order[k] = k;
            k = from;
        }
        order[k] = k;
    }
}

/// The per-parameter checks of one source; false when the parameter does
/// not take part in the top-level merge.
fn prepare(p: &mut Parameter, origin: Origin<'_>, mark: Mark, warnings: &mut Warnings) -> bool {
    let q = p.qualified_name();
    let at = if needs_warning(p, origin) {
        origin.parameter_location(mark)
    } else {
        None
    };
    if !matches!(p.kind.as_str(), "" | "user" | "tech" | "link") {
        warnings.warn(
            at.clone(),
            format!(
                "parameter `{q}` has unknown `kind: {}` (expected user, tech or link)",
                p.kind
            ),
        );
    }
    if !p.empty().is_empty() && p.empty() != "allow" {
        warnings.warn(
            at.clone(),
            format!(
                "parameter `{q}` has `empty: {}`; the only value recognised is `allow`",
                p.empty()
            ),
        );
    }
    if p.kind == "link" && value_is_empty(&p.value) {
        warnings.warn(
            at.clone(),
            format!("parameter `{q}` of kind `link` has no value"),
        );
    }
    let component = matches!(origin, Origin::Component { .. });
    if p.kind.is_empty() && (!p.from_env().is_empty() || !p.from_file().is_empty()) {
        p.kind = "user".into();
        if component {
            let (key, value) = if p.from_env().is_empty() {
                ("fromFile", p.from_file())
            } else {
                ("fromEnv", p.from_env())
            };
            warnings.warn(
                at.clone(),
                format!("parameter `{q}` sets `{key}: {value}` in a component manifest; it becomes a user parameter of the stack"),
            );
        }
    }
    if component {
        if p.kind == "link" {
            warnings.warn(at.clone(), format!("parameter `{q}` has `kind: link`, which is not supported in a component manifest"));
        }
        if p.kind != "user" && value_is_empty(&p.value) && !value_is_empty(p.default_value()) {
            warnings.warn(
                at.clone(),
                format!(
                    "parameter `{q}` sets `default:` in a component manifest; use `value:` instead"
                ),
            );
        }
        if p.kind != "user" {
            return false;
        }
    } else if let Origin::Stack {
        application: false, ..
    } = origin
    {
        if !p.env.is_empty() {
            warnings.warn(
                at,
                format!("parameter `{q}` sets `env: {}` at stack level, where it has no effect; set `env` in the component manifest", p.env),
            );
        }
    }
    p.env.clear();
    true
}

/// Whether [`prepare`] has a warning for `p` (the file is then read for
/// its line).
fn needs_warning(p: &Parameter, origin: Origin<'_>) -> bool {
    let component = matches!(origin, Origin::Component { .. });
    let stack = matches!(
        origin,
        Origin::Stack {
            application: false,
            ..
        }
    );
    !matches!(p.kind.as_str(), "" | "user" | "tech" | "link")
        || (!p.empty().is_empty() && p.empty() != "allow")
        || (p.kind == "link" && value_is_empty(&p.value))
        || (component
            && ((p.kind.is_empty() && (!p.from_env().is_empty() || !p.from_file().is_empty()))
                || p.kind == "link"
                || (p.kind != "user"
                    && value_is_empty(&p.value)
                    && !value_is_empty(p.default_value()))))
        || (stack && !p.env.is_empty())
}

fn warn_less_specific(
    existing: &Parameter,
    incoming: &Parameter,
    key: &str,
    at: impl FnOnce() -> Option<Location>,
    warnings: &mut Warnings,
) {
    // The same value written another way (`false`, `"false"`) is no change.
    if value_is_empty(&existing.value)
        || value_is_empty(&incoming.value)
        || existing.value == incoming.value
        || show(&existing.value) == show(&incoming.value)
    {
        return;
    }
    warnings.warn(
        at(),
        format!(
            "parameter `{key}` value `{}` is overwritten by the less specific parameter `{}` value `{}`",
            show(&existing.value),
            incoming.name,
            show(&incoming.value)
        ),
    );
}

pub(super) fn show(v: &Option<yaml_serde::Value>) -> String {
    match v {
        Some(yaml_serde::Value::String(s)) => s.clone(),
        Some(other) => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
        None => String::new(),
    }
}

/// Field-wise merge: the incoming non-empty fields win, except that a kind
/// only ever moves towards `user`.
fn merge_fields(base: &mut Parameter, over: &Parameter) {
    if !over.kind.is_empty()
        && (base.kind.is_empty() || (base.kind == "tech" && over.kind == "user"))
    {
        base.kind.clone_from(&over.kind);
    }
    if !over.env.is_empty() {
        base.env.clone_from(&over.env);
    }
    if !over.rare().is_empty() {
        let (mine, theirs) = (base.rare_mut(), over.rare());
        for (mine, theirs) in [
            (&mut mine.brief, &theirs.brief),
            (&mut mine.description, &theirs.description),
            (&mut mine.from_env, &theirs.from_env),
            (&mut mine.from_file, &theirs.from_file),
            (&mut mine.empty, &theirs.empty),
        ] {
            if !theirs.is_empty() {
                mine.clone_from(theirs);
            }
        }
        if !value_is_empty(&theirs.default) {
            mine.default.clone_from(&theirs.default);
        }
    }
    if !value_is_empty(&over.value) {
        base.value.clone_from(&over.value);
    }
    if !value_is_empty(&base.value) {
        if let Some(rare) = base.rare.as_deref_mut() {
            rare.empty.clear();
        }
    }
}

/// Whether [`warn_missing_values`] may have something to say about `p`.
pub fn lacks_value(p: &Parameter) -> bool {
    p.value.as_ref().is_none_or(|v| v.is_null())
}

/// Warnings for top-level parameters that still have no value, each at
/// the line `declared` gives for its qualified name.
pub fn warn_missing_values(
    params: &[Parameter],
    declared: &dyn Fn(&str) -> Option<Location>,
    warnings: &mut Warnings,
) {
    for p in params.iter().filter(|p| lacks_value(p)) {
        let q = p.qualified_name();
        if p.kind == "user" {
            if value_is_empty(p.default_value())
                && p.from_env().is_empty()
                && p.from_file().is_empty()
            {
                warnings.warn(declared(&q), format!("user parameter `{q}` has no value nor default; give one in a parameters file or at deploy"));
            }
        } else {
            warnings.warn(declared(&q), format!("parameter `{q}` has no value"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(yaml: &str) -> Vec<Parameter> {
        yaml_serde::from_str(yaml).unwrap()
    }

    #[test]
    fn flattening_inherits_kind_empty_component() {
        let mut w = Warnings::default();
        let flat: Vec<Parameter> = param("- name: grp\n  kind: user\n  empty: allow\n  value: dropped\n  parameters:\n  - name: x\n  - name: y\n    kind: tech\n  - name: deep\n    parameters:\n    - name: z\n      value: 1\n")
            .iter()
            .flat_map(|p| leaves(p, |prefix| {
                    warn_empty_name(prefix, Origin::Parent, Mark::default(), &mut w)
                }))
            .collect();
        let names: Vec<_> = flat
            .iter()
            .map(|p| (p.name.as_str(), p.kind.as_str(), p.empty()))
            .collect();
        assert_eq!(
            names,
            [
                ("grp.x", "user", "allow"),
                ("grp.y", "tech", "allow"),
                ("grp.deep.z", "user", "allow")
            ]
        );
        assert!(flat[0].value.is_none());
    }

    #[test]
    fn traces_point_at_the_last_value_else_the_first_declaration() {
        let mut w = Warnings::default();
        let mut table = ParamTable::default();
        let ranks = HashMap::new();
        let stack = Origin::Stack {
            file: Path::new("hub.yaml"),
            application: false,
        };
        let own =
            param("- name: a\n  kind: user\n- name: g\n  parameters:\n  - name: b\n    value: 1\n");
        table.add_source(&own, stack, &ranks, Traced::File(0), &mut w);
        let more = param("- name: c\n- name: a\n- name: g.b\n  value: 2\n");
        table.add_source(&more, stack, &ranks, Traced::File(1), &mut w);
        let (params, traces) = table.into_sorted();
        let at = |file, index| Mark {
            file,
            index,
            leaf: None,
        };
        let found: Vec<(&str, Mark)> = params
            .iter()
            .zip(&traces)
            .map(|(p, t)| (p.name.as_str(), t.mark()))
            .collect();
        assert_eq!(found, [("a", at(0, 0)), ("c", at(1, 0)), ("g.b", at(1, 2))]);
        assert_eq!(
            traces[2].first,
            Mark {
                leaf: Some(0),
                ..at(0, 1)
            }
        );

        let mut child = ParamTable::default();
        child.add_source(
            &params,
            Origin::Parent,
            &ranks,
            Traced::Parent(&traces),
            &mut w,
        );
        let (_, inherited) = child.into_sorted();
        assert_eq!(inherited, traces);
    }

    #[test]
    fn permute_places_each_item_where_the_order_says() {
        // Every permutation of five items, and larger ones from a simple
        // generator (one cycle, many cycles, fixed points).
        let mut orders: Vec<Vec<usize>> = Vec::new();
        let mut all = vec![Vec::new()];
        for n in 0..5 {
            all = all
                .into_iter()
                .flat_map(|order: Vec<usize>| {
                    (0..=order.len()).map(move |at| {
                        let mut next = order.clone();
                        next.insert(at, n);
                        next
                    })
                })
                .collect();
        }
        orders.extend(all);
        for size in [1usize, 7, 64, 1000] {
            orders.push((0..size).map(|i| (i * 37 + 11) % size).collect());
            orders.push((0..size).rev().collect());
        }
        for order in orders {
            let mut items: Vec<String> = (0..order.len()).map(|i| format!("i{i}")).collect();
            let expected: Vec<String> = order.iter().map(|&i| format!("i{i}")).collect();
            permute(&mut items, order.clone());
            assert_eq!(items, expected, "{order:?}");
        }
    }

    #[test]
    fn entries_come_out_sorted_by_key_with_their_traces() {
        let mut w = Warnings::default();
        let mut table = ParamTable::default();
        let ranks = HashMap::from([("c".to_string(), 0)]);
        let stack = Origin::Stack {
            file: Path::new("hub.yaml"),
            application: false,
        };
        let own = param("- name: z\n  value: 1\n- name: b\n  component: c\n  value: 2\n- name: a.b\n- name: b\n  value: 3\n- name: a\n");
        table.add_source(&own, stack, &ranks, Traced::File(0), &mut w);
        let (params, traces) = table.into_sorted();
        let found: Vec<(String, usize)> = params
            .iter()
            .zip(&traces)
            .map(|(p, t)| (p.qualified_name(), t.first.index))
            .collect();
        let expected = [("a", 4), ("a.b", 2), ("b", 3), ("b|c", 1), ("z", 0)];
        let expected: Vec<(String, usize)> =
            expected.iter().map(|(k, i)| (k.to_string(), *i)).collect();
        assert_eq!(found, expected);
        assert_eq!(params.capacity(), params.len());
    }

    #[test]
    fn kind_only_moves_towards_user() {
        let mut base = Parameter {
            kind: "tech".into(),
            ..Default::default()
        };
        merge_fields(
            &mut base,
            &Parameter {
                kind: "user".into(),
                ..Default::default()
            },
        );
        assert_eq!(base.kind, "user");
        merge_fields(
            &mut base,
            &Parameter {
                kind: "tech".into(),
                ..Default::default()
            },
        );
        assert_eq!(base.kind, "user");
    }

    #[test]
    fn empty_values_do_not_override() {
        let mut base = Parameter {
            value: Some("x".into()),
            ..Default::default()
        };
        merge_fields(
            &mut base,
            &Parameter {
                value: Some("".into()),
                ..Default::default()
            },
        );
        assert_eq!(base.value, Some("x".into()));
        merge_fields(
            &mut base,
            &Parameter {
                value: Some(false.into()),
                ..Default::default()
            },
        );
        assert_eq!(base.value, Some(false.into()));
    }
}
