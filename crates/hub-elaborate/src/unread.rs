//! Stack parameters nobody reads.
//!
//! After elaboration every top-level parameter set in a file (the stack
//! manifest, its parameters files, `fromStack` parents) is checked against
//! what reads parameters, as the deploy will look them up (deploy.md §3,
//! §6.3, §7.8, §8.5):
//!
//! * a component reads its declared parameters: `name|component`, then
//!   plain `name` (templates, `env:` and outputs see only these);
//! * a value or default holding `${name}` or `#{...}` reads the names it
//!   refers to, in its own scope (a stack parameter's component, or the
//!   component whose parameter or output it is);
//! * an output reads its `value`'s names, and one without a value or a
//!   `fromTfVar` reads the parameter of its own name;
//! * `lifecycle.requires.optional` terms with a dot are parameter
//!   conditions; `readyConditions`, `templates` entries,
//!   `lifecycle.ignoreChanges` and `lifecycle.replaceTriggeredBy` name
//!   parameters of a component;
//! * hub itself reads a few names ([`read_by_hub`]).
//!
//! A parameter nothing reads is reported once, at the line that set its
//! value: with a read name of the same qualifier within a typo of it, as a
//! near typo ([`hub_manifest::typos`] decides whether it stops the
//! command, as for unknown keys); without one, as a warning.

use hub_manifest::diag::{Location, Origin, Topic, Warning, Warnings};
use hub_manifest::keys::{edit_distance, is_near_typo};
use hub_manifest::{IgnoreChanges, Manifest, Output, Parameter};
use hub_params::Cel;
use std::collections::{BTreeSet, HashMap};
use yaml_serde::Value;

mod hub_names;

pub(crate) use hub_names::read_by_hub;

/// The names read, by qualifier (`""` for the plain names), each with the
/// first thing found reading it (for the message). Hashed: a stack of
/// 10,000 components reads some 200,000 names, each looked up as it is
/// read; only [`Reads::close`] needs an order, and sorts what it looks at.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    names: HashMap<String, HashMap<String, String>>,
    /// Names a condition reads whatever their qualifier.
    any_qualifier: BTreeSet<String>,
}

impl Reads {
    /// Everything the stack `doc`, its merged top-level `params` and its
    /// `components` read.
    pub(crate) fn of(doc: &Manifest, params: &[Parameter], components: &[Manifest]) -> Reads {
        let cel = Cel::shared();
        let mut reads = Reads::default();
        for component in components {
            reads.component(&cel, component);
        }
        for param in params {
            let leaves = hub_params::flatten(std::slice::from_ref(param));
            for (leaf, _) in leaves {
                reads.values_of_stack_parameter(&cel, &leaf);
            }
        }
        if doc.kind == "application" {
            reads.application(doc, params);
        }
        reads.outputs(&cel, &doc.outputs, "", "stack output");
        reads.ready_conditions(&cel, doc, "");
        reads.lifecycle(doc);
        reads
    }

    /// Whether `name` (of `component`, `""` for a plain parameter) is read.
    pub(crate) fn contains(&self, name: &str, component: &str) -> bool {
        self.any_qualifier.contains(name)
            || self
                .names
                .get(component)
                .is_some_and(|names| names.contains_key(name))
    }

    /// The read name of the same qualifier that `name` most likely stands
    /// for, with what reads it.
    pub(crate) fn close(&self, name: &str, component: &str) -> Option<(&str, &str)> {
        let names = self.names.get(component)?;
        let mut read: Vec<&str> = names.keys().map(String::as_str).collect();
        read.sort_unstable();
        close_name(name, read.into_iter())
            .and_then(|found| names.get_key_value(found))
            .map(|(name, reader)| (name.as_str(), reader.as_str()))
    }

    fn read(&mut self, name: &str, scope: &str, reader: &str) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        // `${name|component}` names a qualified parameter itself.
        if let Some((plain, qualifier)) = name.split_once('|') {
            self.insert(qualifier, plain, reader);
            return;
        }
        if !scope.is_empty() {
            self.insert(scope, name, reader);
        }
        self.insert("", name, reader);
    }

    /// Allocates only for a name not read before (most are read many
    /// times: every component reading `dns.domain`).
    fn insert(&mut self, qualifier: &str, name: &str, reader: &str) {
        let names = match self.names.get_mut(qualifier) {
            Some(names) => names,
            None => self.names.entry(qualifier.to_string()).or_default(),
        };
        if !names.contains_key(name) {
            names.insert(name.to_string(), reader.to_string());
        }
    }

    fn component(&mut self, cel: &Cel, component: &Manifest) {
        let scope = component.meta.name.as_str();
        let reader = format!("component `{scope}`");
        for (param, _) in hub_params::flatten(&component.parameters) {
            self.read(&param.name, scope, &reader);
            self.values(cel, &param, scope, &reader);
        }
        self.outputs(cel, &component.outputs, scope, &reader);
        self.ready_conditions(cel, component, scope);
        let templates = &component.templates;
        let entries = templates.files.iter().chain(&templates.directories).chain(
            templates
                .extra
                .iter()
                .flat_map(|set| set.files.iter().chain(&set.directories)),
        );
        for entry in entries {
            self.text(cel, entry, scope, &reader);
        }
    }

    /// An application is a component of its own stack that declares the
    /// stack's plain parameters and those qualified with its name.
    fn application(&mut self, doc: &Manifest, params: &[Parameter]) {
        let name = doc.meta.name.split(':').next().unwrap_or_default();
        let reader = format!("application `{name}`");
        for param in params {
            if param.component.is_empty() || param.component == name {
                self.read(&param.name, name, &reader);
            }
        }
    }

    /// A stack parameter's value and default, read in its component's
    /// scope; what reads them is named only when they read something.
    fn values_of_stack_parameter(&mut self, cel: &Cel, param: &Parameter) {
        for value in [&param.value, param.default_value()].into_iter().flatten() {
            let Value::String(text) = value else {
                continue;
            };
            let names = hub_params::template_names(cel, text);
            if names.is_empty() {
                continue;
            }
            let reader = format!("the value of `{}`", param.qualified_name());
            for name in names {
                self.read(&name, &param.component, &reader);
            }
        }
    }

    fn values(&mut self, cel: &Cel, param: &Parameter, scope: &str, reader: &str) {
        for value in [&param.value, param.default_value()].into_iter().flatten() {
            self.value(cel, value, scope, reader);
        }
    }

    fn value(&mut self, cel: &Cel, value: &Value, scope: &str, reader: &str) {
        if let Value::String(text) = value {
            self.text(cel, text, scope, reader);
        }
    }

    fn text(&mut self, cel: &Cel, text: &str, scope: &str, reader: &str) {
        for name in hub_params::template_names(cel, text) {
            self.read(&name, scope, reader);
        }
    }

    fn outputs(&mut self, cel: &Cel, outputs: &[Output], scope: &str, reader: &str) {
        for output in outputs {
            let reader = if scope.is_empty() {
                format!("{reader} `{}`", output.name)
            } else {
                reader.to_string()
            };
            match &output.value {
                Some(value) if !value.is_null() => self.value(cel, value, scope, &reader),
                _ if output.from_tf_var.is_empty() && !output.name.contains(':') => {
                    self.read(&output.name, scope, &reader);
                }
                _ => {}
            }
        }
    }

    fn ready_conditions(&mut self, cel: &Cel, manifest: &Manifest, scope: &str) {
        let reader = match scope {
            "" => "the stack's `readyConditions`".to_string(),
            name => format!("the `readyConditions` of `{name}`"),
        };
        for condition in &manifest.lifecycle.ready_conditions {
            self.text(cel, &condition.dns, scope, &reader);
            self.text(cel, &condition.url, scope, &reader);
        }
    }

    /// The stack's `lifecycle`: parameter conditions of
    /// `requires.optional`, and the parameters `ignoreChanges` and
    /// `replaceTriggeredBy` name for a component.
    fn lifecycle(&mut self, doc: &Manifest) {
        let reader = "`lifecycle.requires.optional`";
        for entry in &doc.lifecycle.requires.optional {
            match entry.split_once(':') {
                Some((term, component)) if term.contains('.') && !component.is_empty() => {
                    self.read(term, component, reader);
                }
                Some(_) => {}
                None if entry.contains('.') => {
                    self.any_qualifier.insert(entry.clone());
                }
                None => {}
            }
        }
        for (component, ignored) in &doc.lifecycle.ignore_changes {
            if let IgnoreChanges::Parameters(names) = ignored {
                for name in names {
                    self.read(name, component, "`lifecycle.ignoreChanges`");
                }
            }
        }
        for (component, triggers) in &doc.lifecycle.replace_triggered_by {
            for name in triggers {
                self.read(name, component, "`lifecycle.replaceTriggeredBy`");
            }
        }
    }
}

/// Among `read`, the name `name` most likely stands for: within a typo of
/// it ([`is_near_typo`]), the fewest edits away, the first in order on a
/// tie; never `name` itself, nor one that changes half of it or more, nor
/// a name that differs from it only in its
/// digits (`node1` and `node2`, `p10` and `p1` are members of a numbered
/// family, not typos of each other).
pub(crate) fn close_name<'r>(name: &str, read: impl Iterator<Item = &'r str>) -> Option<&'r str> {
    let lower = name.to_lowercase();
    let letters = |text: &str| -> String { text.chars().filter(|c| !c.is_ascii_digit()).collect() };
    let family = letters(name);
    let length = name.chars().count();
    read.filter(|candidate| is_near_typo(name, candidate) && letters(candidate) != family)
        .map(|candidate| (edit_distance(&lower, &candidate.to_lowercase()), candidate))
        // Edits must change less than half of the name: `x` is no typo
        // of `y`.
        .filter(|(distance, _)| distance * 2 < length)
        .min()
        .map(|(_, candidate)| candidate)
}

/// One parameter nothing reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// `name` or `name|component`.
    pub qualified: String,
    /// The read name it most likely stands for, and what reads that.
    pub close: Option<(String, String)>,
}

/// The stack parameters of an elaborated stack that nothing reads, each
/// with the read name it most likely stands for (what `hub params` shows
/// of a file elaborated with `--lenient`).
pub fn unread_in(elaborated: &hub_manifest::Elaborated) -> Vec<Unread> {
    let params = &elaborated.stack.parameters;
    let reads = Reads::of(&elaborated.stack, params, &elaborated.components);
    unread(params, &reads)
}

/// The parameters of `params` that `reads` and hub do not read, in order.
pub(crate) fn unread(params: &[Parameter], reads: &Reads) -> Vec<Unread> {
    params
        .iter()
        .filter(|p| !reads.contains(&p.name, &p.component) && !read_by_hub(&p.name))
        .map(|p| Unread {
            qualified: p.qualified_name(),
            close: reads.close(&p.name, &p.component).map(|(name, reader)| {
                (
                    hub_params::qualified(name, &p.component),
                    reader.to_string(),
                )
            }),
        })
        .collect()
}

/// The warning for `unread`, set in a file of `origin` at `location`.
pub(crate) fn warning(unread: &Unread, location: Option<Location>, origin: Origin) -> Warning {
    let name = &unread.qualified;
    let (message, near_typo) = match &unread.close {
        // A name that differs only in case is as likely two authors'
        // spellings of a group (`certManager.*` in a stack,
        // `certmanager.*` in a component) as a slip: a warning.
        Some((close, reader)) => (
            format!("stack parameter `{name}` is ignored: nothing reads it (did you mean `{close}`, read by {reader}?)"),
            close.to_lowercase() != name.to_lowercase(),
        ),
        None => (
            format!("stack parameter `{name}` is set but never read (no component declares it; no expression, output or condition names it)"),
            false,
        ),
    };
    Warning {
        location,
        message,
        near_typo,
        origin,
        topic: Topic::UnreadParameter,
    }
}

/// Where a parameter was set and who wrote that file; `None` for one no
/// file set.
pub(crate) type SetAt<'a> = dyn Fn(&str) -> Option<(Option<Location>, Origin)> + 'a;

/// Reports the parameters of `params` nothing reads into `warnings`;
/// `set_at` gives where each qualified name was set and who wrote that
/// file, `None` for a parameter no file set (filled from a state).
pub(crate) fn report(
    params: &[Parameter],
    reads: &Reads,
    set_at: &SetAt<'_>,
    warnings: &mut Warnings,
) {
    for found in unread(params, reads) {
        if let Some((location, origin)) = set_at(&found.qualified) {
            warnings.push(warning(&found, location, origin));
        }
    }
}

#[cfg(test)]
mod tests;
