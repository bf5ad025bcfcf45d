//! A plan as text (the default) or as JSON (`--format json`).

use super::{
    Action, ComponentPreview, Detail, ParameterChange, ParameterPreview, Preview, Requirement,
    SelectionSeen, Wait,
};
use hub_plan::plan::planned::OutputPlan;
use serde::Serialize;
use std::fmt::Write;

/// With [`Detail::Changes`] (the default):
///
/// ```text
/// plan: deploy stack `demo`
/// state: demo.state (serial 7)
/// jobs: 1
/// waves:
///   1. network
///   2. database, cache
///
/// network: update (parameters changed: component.network.cidr)
///   runs: deploy.sh
///   requires: cloud ← platform
///   parameters:
///     ~ component.network.cidr = 10.0.0.0/16 → 10.1.0.0/16
///     (1 unchanged; --verbose shows every parameter)
///
/// database: update (runs again: no --changed)
///
/// removed from the stack (use --prune):
///   cache: delete (removed from the stack; implementation in `/stack/cache`)
///
/// Plan: 0 to create, 2 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail
/// ```
///
/// [`Detail::All`] (`--verbose`) shows every component whole, with all
/// its parameters (`  name = value` for those unchanged). When nothing
/// would run or fail, [`Detail::Changes`] leaves the waves out.
pub fn render_text(preview: &Preview, detail: Detail) -> String {
    let mut out = header(preview, detail);
    let because = preview.selection.as_ref().map(SelectionSeen::reasons);
    let mut expanded = true;
    for component in &preview.components {
        // A blank line around each component shown past its action line;
        // the one-line components follow each other.
        let expands = detail.expands(component);
        if expands || expanded {
            out.push('\n');
        }
        expanded = expands;
        out.push_str(&component_text(component, because.as_ref(), detail));
    }
    if !preview.removed.is_empty() {
        let _ = writeln!(out, "\n{}:", removed_heading(preview));
        for removed in &preview.removed {
            let reasons = one_line(&removed.reasons.join("; "));
            let _ = writeln!(
                out,
                "  {}: {} ({reasons})",
                removed.name,
                removed.action.as_str()
            );
        }
    }
    if !preview.problems.is_empty() {
        out.push_str("\nwould fail before any component starts:\n");
        for problem in &preview.problems {
            let _ = writeln!(out, "  {}", one_line(&problem.to_string()));
            let _ = writeln!(out, "    help: {}", one_line(&problem.hint));
        }
    }
    if !preview.moved.is_empty() {
        out.push_str("\nrenamed in the state (`moved`):\n");
        for renamed in &preview.moved {
            let _ = writeln!(out, "  moved {} → {}", renamed.from, renamed.to);
        }
    }
    out.push('\n');
    out.push_str(&totals(preview));
    out
}

/// Whether the deploy planned deletes the removed components.
pub(super) fn removed_heading(preview: &Preview) -> &'static str {
    match preview.prune {
        true => "removed from the stack, deleted by --prune",
        false => "removed from the stack (use --prune)",
    }
}

fn header(preview: &Preview, detail: Detail) -> String {
    let verb = preview.verb.as_str();
    let mut out = format!("plan: {verb} {}\n", stack_text(&preview.stack));
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
    if detail == Detail::Changes && !preview.acts() {
        return out;
    }
    out.push_str("waves:\n");
    for (index, wave) in preview.waves.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", index + 1, wave.join(", "));
    }
    out
}

/// `stack `demo``, or what it lacks when it has no name.
pub(super) fn stack_text(name: &str) -> String {
    match name.is_empty() {
        true => "a stack without `meta.name`".into(),
        false => format!("stack `{name}`"),
    }
}

fn component_text(
    component: &ComponentPreview,
    because: Option<&std::collections::HashMap<&str, String>>,
    detail: Detail,
) -> String {
    let mut out = format!("{}: {}", component.name, component.action.as_str());
    if !component.reasons.is_empty() {
        let _ = write!(out, " ({})", one_line(&component.reasons.join("; ")));
    }
    out.push('\n');
    if let Some(why) = because.and_then(|b| b.get(component.name.as_str())) {
        let _ = writeln!(out, "  selected: {}", one_line(why));
    }
    if let Some(deferred) = &component.through.deferred {
        let _ = writeln!(out, "  deferred: {}", one_line(&deferred.text()));
    }
    if !detail.expands(component) {
        return out;
    }
    if let Some(implementation) = &component.implementation {
        let _ = writeln!(out, "  runs: {implementation}");
    }
    if !component.waits_for.is_empty() {
        let waits: Vec<String> = component.waits_for.iter().map(Wait::to_string).collect();
        let _ = writeln!(out, "  waits for: {}", waits.join("; "));
    } else if component.needs_nothing {
        out.push_str("  waits for: nothing (`depends: []`)\n");
    }
    if !component.requires.is_empty() {
        let requires: Vec<String> = component.requires.iter().map(requirement_text).collect();
        let _ = writeln!(out, "  requires: {}", requires.join("; "));
    }
    if let Some(timeout) = &component.timeout {
        let _ = writeln!(out, "  timeout: {timeout} (lifecycle.timeouts)");
    }
    if let Some(retry) = &component.retry {
        let _ = writeln!(out, "  retry: {retry} (lifecycle.retry)");
    }
    let shown = detail.parameters(component);
    if !shown.is_empty() {
        out.push_str("  parameters:\n");
        for parameter in shown {
            let _ = writeln!(out, "    {}", parameter_text(parameter));
        }
        if let Some(hidden) = hidden_text(detail.hidden(component)) {
            let _ = writeln!(out, "    {hidden}");
        }
    }
    if !component.through.outputs.is_empty() {
        out.push_str("  planned outputs:\n");
        for output in &component.through.outputs {
            let _ = writeln!(out, "    {}", output_text(output));
        }
    }
    out
}

/// `name = value`, or `name = (known after apply)`: a planned output.
pub(super) fn output_text(output: &OutputPlan) -> String {
    match &output.value {
        Some(value) => format!("{} = {}", output.name, value_text(value)),
        None => format!("{} = {UNKNOWN}", output.name),
    }
}

/// What a value known only after a component applies is shown as.
pub(super) const UNKNOWN: &str = "(known after apply)";

/// `(3 unchanged; --verbose shows every parameter)`: what a plan of the
/// changes leaves out of a component it shows.
pub(super) fn hidden_text(hidden: usize) -> Option<String> {
    (hidden > 0).then(|| format!("({hidden} unchanged; --verbose shows every parameter)"))
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
    let value = value_text(parameter.value.as_deref().unwrap_or_default());
    match parameter.change {
        ParameterChange::Added => format!("+ {name} = {value}"),
        ParameterChange::Unchanged => format!("  {name} = {value}"),
        ParameterChange::Removed => format!("- {name}"),
        ParameterChange::Changed => {
            let previous = value_text(parameter.previous.as_deref().unwrap_or_default());
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

/// A parameter's value on one line, shortened when long.
fn value_text(text: &str) -> String {
    shortened(text).unwrap_or_else(|| one_line(text))
}

/// Longest value printed whole in a text or markdown plan.
pub(crate) const LONG_VALUE: usize = 256;

/// A value over [`LONG_VALUE`] bytes as its start, its size and its
/// digest: `"aaaaaaaaaaaaaaaa…" 200 KiB sha256:1f2e3d4c5b6a`. The JSON
/// plan keeps it whole.
pub fn shortened(text: &str) -> Option<String> {
    if text.len() <= LONG_VALUE {
        return None;
    }
    let start: String = text.chars().take(16).collect();
    let start = start.replace('\r', "\\r").replace('\n', "\\n");
    let digest = hub_plan::plan::text_digest(text);
    let digest = &digest[..digest.len().min("sha256:".len() + 12)];
    Some(format!(
        "\"{start}…\" {} {digest}",
        hub_plan::plan::preflight::size_text(text.len())
    ))
}

pub(super) fn totals(preview: &Preview) -> String {
    format!("Plan: {}\n", counts_text(preview))
}

/// `0 to create, 2 to update, 1 to replace, 0 to rerun, 1 to delete, 5 unchanged, 1
/// skipped, 0 would fail`.
pub(super) fn counts_text(preview: &Preview) -> String {
    let counts = format!(
        "{} to create, {} to update, {} to replace, {} to rerun, {} to delete, {} unchanged, {} skipped, {} would fail",
        preview.count(Action::Create),
        preview.count(Action::Update),
        preview.count(Action::Replace),
        preview.count(Action::Rerun),
        preview.count(Action::Delete),
        preview.count(Action::NoOp),
        preview.count(Action::Skip),
        preview.count(Action::Fail),
    );
    match preview.deferred() {
        0 => counts,
        deferred => format!("{counts}, {deferred} deferred"),
    }
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
///       "action": "update",
///       "reasons": ["folder content changed"],
///       "requires": [{ "name": "cloud", "providers": ["platform"] }],
///       "waits_for": [{ "component": "vpc", "reasons": ["`depends`"] }],
///       "parameters": [
///         { "name": "dns.domain", "value": "demo.local",
///           "previous": "demo.local", "change": "unchanged" }
///       ]
///     }
///   ],
///   "prune": false,
///   "removed": [
///     { "name": "cache", "action": "delete", "reasons": ["removed from the stack; …"],
///       "dir": "/stack/cache", "depends": [], "status": "deployed" }
///   ],
///   "counts": { "create": 0, "update": 1, "replace": 0, "delete": 0, "no-op": 1, "skip": 0, "fail": 0 }
/// }
/// ```
///
/// * `state` is `null` with `-n`; its `serial` is `null` when the file does
///   not exist yet.
/// * `selection` (only when a `-c` entry is widened: `app+`, `+app`,
///   `--with-deps`, `--with-dependents`): `requested` (the entries, with
///   those flags applied: `app+`), `components` (the resolved list) and `added` (`name`,
///   `from`, `relation`: `dependency` or `dependent`).
/// * `action`: `create` (never deployed), `update` (deployed, runs
///   again), `replace` (its last run failed or was interrupted, or
///   `--replace`), `no-op` (`--changed` only: it does not run), `delete`
///   (an undeploy), `skip` or `fail`; `reasons` says why.
/// * `removed`: the components the state holds and the stack no longer
///   lists, in the order `--prune` undeploys them; they count as `delete`
///   only when `prune` is true.
/// * `waits_for`: what the component waits for with `-j` (in a deploy
///   the components it runs after, in an undeploy those that run after
///   it), each with why: `` `depends` ``, `` provides `X` ``, `` `p` reads
///   its output `o` ``, `` comes before in `lifecycle.order` ``.
/// * `problems` (only when there are some): what the preflight found that
///   would stop the run and is no component's (a state folder that is
///   missing or cannot be written), each with `message` and `hint`; each
///   counts in `fail`. A component's own problems make it `fail`, with
///   the problem as its reason.
/// * `needs_nothing` (only when true): the component says `depends: []`
///   in a stack whose `lifecycle.order` is written, so the order alone
///   makes it wait for nothing.
/// * `requires[].providers`: component names, `environment`, `platform`,
///   or `NAME (state)` for a provider known only from the state; empty when
///   nobody provides it.
/// * `parameters[].change`: `added`, `changed`, `removed` (then `value` is
///   `null`) or `unchanged`; `previous` is the value in the state entry
///   (`null` without one). Values are text as the component receives them;
///   secrets are `(masked)` unless `--reveal`; a value that depends on an
///   output not known yet is `(known after NAME deploys)`, one that cannot
///   be expanded `(error: …)`. `known` is false for a value that reads an
///   output known only after a component of the run applies.
/// * `outputs` and `deferred` (`--plan-steps` only): the outputs a
///   component that runs will produce (`name`, `known`, `value` when
///   known, `source`: `plan-step`, `no-plan-step` or `deferred`), and for
///   a component whose parameters read an unknown output, `after` (the
///   upstream components) and `inputs` (`parameter`, `component`,
///   `output`); `counts.deferred` counts those components (when any).
pub fn render_json(preview: &Preview) -> String {
    let document = Document {
        preview,
        counts: Action::ALL
            .iter()
            .map(|action| (action.as_str(), preview.count(*action)))
            .chain((preview.deferred() > 0).then(|| ("deferred", preview.deferred())))
            .collect(),
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
    counts: indexmap::IndexMap<&'static str, usize>,
}
