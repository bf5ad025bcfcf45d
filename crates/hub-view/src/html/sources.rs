//! Where the HTML report's details come from: the state (dependencies,
//! outputs, and for `hub report STATE` the run itself, from its last
//! operation), the plan (action, reasons, parameters that changed) and
//! the log files beside the state (`STATE.logs/NAME.log`), of which the
//! part of the run reported only (see [`crate::child::log_marks`]).

use super::{Details, LogTail, ParameterChange};
use crate::report::{ComponentReport, RunReport, REPORT_VERSION};
use hub_manifest::redact::{SecretMasker, MASK};
use hub_plan::outcome::log_marks;
use hub_plan::plan::{ParameterChange as Change, Plan};
use hub_state::State;
use indexmap::IndexMap;
use std::path::Path;

/// How many lines of a component's log the report keeps.
pub(crate) const LOG_LINES: usize = 40;

/// Dependencies and outputs (secret ones masked) of every component of
/// `state`: its own outputs only (a component's entry in the state holds
/// those of the components before it too).
pub fn from_state(state: &State, details: &mut IndexMap<String, Details>) {
    for (name, entry) in &state.components {
        let detail = details.entry(name.clone()).or_default();
        if detail.depends.is_empty() {
            detail.depends = entry.depends.clone();
        }
        detail.outputs = entry
            .captured_outputs
            .outputs_of(name)
            .into_iter()
            .map(|output| {
                let value = if is_secret(&output) {
                    MASK.to_string()
                } else {
                    scalar(&output.value)
                };
                (output.name, value)
            })
            .collect();
    }
}

/// The secret values of `state` (secret outputs, parameters whose names
/// look secret), to mask wherever they appear in a log line.
pub fn masker(state: Option<&State>) -> SecretMasker {
    let mut masker = SecretMasker::new(false);
    let Some(state) = state else {
        return masker;
    };
    for entry in state.components.values() {
        for output in entry.captured_outputs.iter() {
            if is_secret(&output) {
                masker.add(&scalar(&output.value));
            }
        }
        for parameter in &entry.parameters {
            if hub_manifest::secrets::looks_secret(parameter.name()) {
                masker.add(&scalar(&parameter.value));
            }
        }
    }
    for parameter in &state.stack_parameters {
        if hub_manifest::secrets::looks_secret(parameter.name()) {
            masker.add(&scalar(&parameter.value));
        }
    }
    masker
}

/// Each component's action, reasons, dependencies and changed parameters
/// (as the plan shows them: masked unless `--reveal`).
pub(crate) fn from_plan(plan: &Plan, details: &mut IndexMap<String, Details>) {
    for component in &plan.components {
        let detail = details.entry(component.name.clone()).or_default();
        detail.action = component.action.as_str().to_string();
        detail.reasons = component.reasons.clone();
        if let Some(deferred) = &component.through.deferred {
            detail
                .reasons
                .push(format!("deferred: {}", deferred.text()));
        }
        detail.depends = component
            .waits_for
            .iter()
            .map(|w| w.component.clone())
            .collect();
        detail.parameters = component
            .parameters
            .iter()
            .filter_map(|p| {
                let change = match p.change {
                    Change::Added => "added",
                    Change::Changed => "changed",
                    Change::Removed => "removed",
                    Change::Unchanged => return None,
                };
                Some(ParameterChange {
                    name: p.name.clone(),
                    change: change.to_string(),
                    previous: p.previous.clone(),
                    value: p.value.clone(),
                    known: p.known,
                })
            })
            .collect();
    }
}

/// The last [`LOG_LINES`] lines of the part of run `operation` (the last
/// run's when `None`) of the log in `folder` of each component of
/// `details` that `ran` says ran, masked again with `masker` (the engine
/// masked them as it wrote them; this catches what a later state knows to
/// be secret).
pub fn logs(
    folder: &Path,
    operation: Option<&str>,
    masker: &SecretMasker,
    ran: &dyn Fn(&str) -> bool,
    details: &mut IndexMap<String, Details>,
) {
    for (name, detail) in details.iter_mut() {
        if !ran(name) || hub_manifest::names::check_component_name(name).is_err() {
            continue; // never a path out of the folder
        }
        let path = folder.join(format!("{name}.log"));
        let Some(part) = log_marks::part_of_run(&path, operation, LOG_LINES) else {
            continue;
        };
        detail.log = LogTail {
            file: path.display().to_string(),
            lines: part
                .lines
                .iter()
                .map(|line| masker.mask(line).into_owned())
                .collect(),
            omitted: part.omitted,
        };
    }
}

/// The report of the last run recorded in `state` (its last operation):
/// the components it touched in order, how each ended, their times.
pub fn report_from_state(state: &State, path: &str) -> Option<RunReport> {
    let operation = state.operations.iter().max_by(|a, b| {
        let at = |t: &str| hub_state::rfc3339_to_unix(t).unwrap_or((0, 0));
        at(&a.timestamp).cmp(&at(&b.timestamp))
    })?;
    let verb = operation.operation.as_str();
    let done = if verb == "undeploy" {
        "undeployed"
    } else {
        "deployed"
    };
    let components: Vec<ComponentReport> = operation
        .phases
        .iter()
        .map(|phase| phase_report(state, phase, done))
        .collect();
    let failed: Vec<&str> = components
        .iter()
        .filter(|c| c.status != done)
        .map(|c| c.name.as_str())
        .collect();
    let error = (!failed.is_empty()).then(|| format!("failed: {}", failed.join(", ")));
    let first = earliest_start(&components);
    let started = first
        .map(|(_, _, text)| text)
        .unwrap_or_else(|| operation.timestamp.clone());
    let result = match operation.status.as_str() {
        "success" => "success",
        "error" => "failure",
        _ => "interrupted",
    };
    Some(RunReport {
        version: REPORT_VERSION,
        kind: if verb == "undeploy" {
            "undeploy"
        } else {
            "deploy"
        }
        .to_string(),
        stack: state.meta.name.clone(),
        state: Some(path.to_string()),
        jobs: 1,
        duration_seconds: between(&started, &operation.timestamp),
        started,
        ended: operation.timestamp.clone(),
        status: state.status.to_string(),
        result: result.to_string(),
        error,
        components,
        operation: Some(operation.id.clone()).filter(|id| !id.is_empty()),
        warnings: Vec::new(),
    })
}

/// How the component of `phase` ended in that run (`done`: the word of
/// a success), with its times, outputs and why it failed.
fn phase_report(state: &State, phase: &hub_state::Phase, done: &str) -> ComponentReport {
    let entry = state.components.get(&phase.phase);
    let times = entry.map(|e| &e.timestamps);
    let started = times.map(|t| t.start.clone()).filter(|t| !t.is_empty());
    let ended = times.map(|t| t.end.clone()).filter(|t| !t.is_empty());
    let status = match phase.status.as_str() {
        "success" => done,
        "error" => "error",
        _ => "interrupted",
    };
    let duration = match (&started, &ended) {
        (Some(s), Some(e)) => between(s, e),
        _ => 0.0,
    };
    ComponentReport {
        name: phase.phase.clone(),
        status: status.to_string(),
        started,
        ended,
        duration_seconds: duration,
        reason: (status == "error").then(|| {
            entry
                .map(|e| e.message.clone())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "it failed".to_string())
        }),
        outputs: entry
            .map(|e| {
                let own = e.captured_outputs.outputs_of(&phase.phase);
                own.into_iter().map(|o| o.name).collect()
            })
            .unwrap_or_default(),
        attempts: None,
    }
}

/// The earliest start of the components (the first of equal ones), as
/// (seconds, nanoseconds, text).
fn earliest_start(components: &[ComponentReport]) -> Option<(i64, u32, String)> {
    let mut first: Option<(i64, u32, String)> = None;
    for started in components.iter().filter_map(|c| c.started.as_ref()) {
        let Some(at) = hub_state::rfc3339_to_unix(started) else {
            continue;
        };
        if first
            .as_ref()
            .is_none_or(|(s, n, _)| (at.0, at.1) < (*s, *n))
        {
            first = Some((at.0, at.1, started.clone()));
        }
    }
    first
}

fn between(start: &str, end: &str) -> f64 {
    let at = |t: &str| hub_state::rfc3339_to_unix(t).map(|(s, n)| s as f64 + f64::from(n) / 1e9);
    match (at(start), at(end)) {
        (Some(s), Some(e)) => ((e - s).max(0.0) * 1000.0).round() / 1000.0,
        _ => 0.0,
    }
}

/// An output hub masks: `kind: secret…`, or a name that looks secret.
fn is_secret(output: &hub_state::CapturedOutput) -> bool {
    output.kind.starts_with("secret") || hub_manifest::secrets::looks_secret(&output.name)
}

/// A YAML value as one line of text.
fn scalar(value: &yaml_serde::Value) -> String {
    match value {
        yaml_serde::Value::String(text) => text.clone(),
        yaml_serde::Value::Null => String::new(),
        yaml_serde::Value::Bool(b) => b.to_string(),
        yaml_serde::Value::Number(n) => n.to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Everything the page says of each component of `report`: from the plan
/// when there is one, from the state and, for a run, from the logs in
/// `log_folder` (the state's `STATE.logs`).
pub fn gather(
    report: &RunReport,
    state: Option<&State>,
    log_folder: Option<&Path>,
    plan: Option<&Plan>,
) -> IndexMap<String, Details> {
    let mut details: IndexMap<String, Details> = report
        .components
        .iter()
        .map(|c| (c.name.clone(), Details::default()))
        .collect();
    if let Some(plan) = plan {
        from_plan(plan, &mut details);
    }
    if let Some(state) = state {
        from_state(state, &mut details);
    }
    details.retain(|name, _| report.components.iter().any(|c| &c.name == name));
    // A plan ran nothing: the logs there are an earlier run's. Of a run,
    // the components it ran, each its part of its log.
    if let Some(folder) = log_folder.filter(|_| report.kind != "plan") {
        let ran = |name: &str| {
            let ran = |c: &ComponentReport| c.name == name && super::ran(c);
            report.components.iter().any(ran)
        };
        logs(
            folder,
            report.operation.as_deref(),
            &masker(state),
            &ran,
            &mut details,
        );
    }
    details
}
