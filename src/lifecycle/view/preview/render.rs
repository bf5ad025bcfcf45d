//! A plan as text (the default) or as JSON (`--format json`).

use super::{
    Action, ComponentPreview, ParameterChange, ParameterPreview, Preview, Requirement, Wait,
};
use serde::Serialize;
use std::fmt::Write;

/// ```text
/// plan: deploy stack `demo`
/// state: demo.state (serial 7)
/// jobs: 1
/// waves:
///   1. network
///   2. database, cache
///
/// network: deploy (folder content changed)
///   requires: cloud ← platform
///   parameters:
///     ~ component.network.cidr = 10.0.0.0/16 → 10.1.0.0/16
///       dns.domain = demo.local
///
/// plan: 1 to deploy, 1 unchanged, 0 skipped, 0 would fail
/// ```
pub fn render_text(preview: &Preview) -> String {
    let mut out = header(preview);
    for component in &preview.components {
        out.push('\n');
        out.push_str(&component_text(component));
    }
    out.push('\n');
    out.push_str(&totals(preview));
    out
}

fn header(preview: &Preview) -> String {
    let verb = preview.verb.as_str();
    let mut out = format!("plan: {verb} stack `{}`\n", preview.stack);
    let state = match &preview.state {
        None => "none (-n)".to_string(),
        Some(seen) => match seen.serial {
            Some(serial) => format!("{} (serial {serial})", seen.path),
            None => match preview.verb {
                super::Verb::Deploy => format!("{} does not exist: first deploy", seen.path),
                super::Verb::Undeploy => format!("{} does not exist: nothing recorded", seen.path),
            },
        },
    };
    let _ = writeln!(out, "state: {state}");
    if let Some(selection) = &preview.selection {
        let _ = writeln!(out, "selection: {}", selection.line);
    }
    let _ = writeln!(out, "jobs: {}", preview.jobs);
    out.push_str("waves:\n");
    for (index, wave) in preview.waves.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", index + 1, wave.join(", "));
    }
    out
}

fn component_text(component: &ComponentPreview) -> String {
    let mut out = format!("{}: {}", component.name, component.action.as_str());
    if !component.reasons.is_empty() {
        let _ = write!(out, " ({})", one_line(&component.reasons.join("; ")));
    }
    out.push('\n');
    if !component.waits_for.is_empty() {
        let waits: Vec<String> = component.waits_for.iter().map(Wait::to_string).collect();
        let _ = writeln!(out, "  waits for: {}", waits.join("; "));
    }
    if !component.requires.is_empty() {
        let requires: Vec<String> = component.requires.iter().map(requirement_text).collect();
        let _ = writeln!(out, "  requires: {}", requires.join("; "));
    }
    if !component.parameters.is_empty() {
        out.push_str("  parameters:\n");
        for parameter in &component.parameters {
            let _ = writeln!(out, "    {}", parameter_text(parameter));
        }
    }
    out
}

pub(super) fn requirement_text(requirement: &Requirement) -> String {
    let providers = match requirement.providers.as_slice() {
        [] => "nobody".to_string(),
        providers => providers.join(", "),
    };
    format!("{} ← {providers}", requirement.name)
}

/// `+ name = value`, `~ name = old → new`, `- name`, `  name = value`.
pub(super) fn parameter_text(parameter: &ParameterPreview) -> String {
    let name = &parameter.name;
    let value = one_line(parameter.value.as_deref().unwrap_or_default());
    match parameter.change {
        ParameterChange::Added => format!("+ {name} = {value}"),
        ParameterChange::Unchanged => format!("  {name} = {value}"),
        ParameterChange::Removed => format!("- {name}"),
        ParameterChange::Changed => {
            let previous = one_line(parameter.previous.as_deref().unwrap_or_default());
            format!("~ {name} = {previous} → {value}")
        }
    }
}

/// Values spanning lines are printed on one, with `\n`; the empty value
/// as `""`.
pub(super) fn one_line(text: &str) -> String {
    if text.is_empty() {
        return "\"\"".to_string();
    }
    text.replace('\r', "\\r").replace('\n', "\\n")
}

pub(super) fn totals(preview: &Preview) -> String {
    let run = match preview.verb {
        super::Verb::Deploy => preview.count(Action::Deploy),
        super::Verb::Undeploy => preview.count(Action::Undeploy),
    };
    format!(
        "plan: {run} to {}, {} unchanged, {} skipped, {} would fail\n",
        preview.verb.as_str(),
        preview.count(Action::Unchanged),
        preview.count(Action::Skip),
        preview.count(Action::Fail),
    )
}

/// The plan as one JSON document (`hub plan --format json`), pretty-printed:
///
/// ```json
/// {
///   "stack": "demo",
///   "verb": "deploy",
///   "state": { "path": "demo.state", "serial": 7 },
///   "jobs": 1,
///   "waves": [["network"], ["database", "cache"]],
///   "components": [
///     {
///       "name": "network",
///       "action": "deploy",
///       "reasons": ["folder content changed"],
///       "requires": [{ "name": "cloud", "providers": ["platform"] }],
///       "waits_for": [{ "component": "vpc", "reasons": ["`depends`"] }],
///       "parameters": [
///         { "name": "dns.domain", "value": "demo.local",
///           "previous": "demo.local", "change": "unchanged" }
///       ]
///     }
///   ],
///   "counts": { "deploy": 1, "undeploy": 0, "unchanged": 1, "skip": 0, "fail": 0 }
/// }
/// ```
///
/// * `state` is `null` with `-n`; its `serial` is `null` when the file does
///   not exist yet.
/// * `selection` (only when a `-c` entry is widened: `app+`, `+app`,
///   `--with-deps`, `--with-dependents`): `requested` (the entries, with
///   those flags applied: `app+`), `components` (the resolved list) and `added` (`name`,
///   `from`, `relation`: `dependency` or `dependent`).
/// * `action`: `deploy`, `undeploy`, `unchanged` (what `--changed` would
///   skip), `skip` or `fail`; `reasons` says why.
/// * `waits_for`: what the component waits for with `-j` (in a deploy
///   the components it runs after, in an undeploy those that run after
///   it), each with why: `` `depends` ``, `` provides `X` ``, `` `p` reads
///   its output `o` ``, `` comes before in `lifecycle.order` ``.
/// * `requires[].providers`: component names, `environment`, `platform`,
///   or `NAME (state)` for a provider known only from the state; empty when
///   nobody provides it.
/// * `parameters[].change`: `added`, `changed`, `removed` (then `value` is
///   `null`) or `unchanged`; `previous` is the value in the state entry
///   (`null` without one). Values are text as the component receives them;
///   secrets are `(masked)` unless `--reveal`; a value that depends on an
///   output not known yet is `(known after NAME deploys)`, one that cannot
///   be expanded `(error: …)`.
pub fn render_json(preview: &Preview) -> String {
    let document = Document {
        preview,
        counts: Counts {
            deploy: preview.count(Action::Deploy),
            undeploy: preview.count(Action::Undeploy),
            unchanged: preview.count(Action::Unchanged),
            skip: preview.count(Action::Skip),
            fail: preview.count(Action::Fail),
        },
    };
    // Plain data with string keys: serialising it cannot fail.
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    preview: &'a Preview,
    counts: Counts,
}

#[derive(Serialize)]
struct Counts {
    deploy: usize,
    undeploy: usize,
    unchanged: usize,
    skip: usize,
    fail: usize,
}
