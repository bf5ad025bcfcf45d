//! OpenTelemetry traces of a run.
//!
//! When `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the command line calls
//! [`traced_run`] around a deploy or an undeploy: a root span for the run,
//! and, below it, spans for each step the engine marks with one call of
//! this module ([`in_span`], [`component_start`], [`hook`]…). Without the
//! variables nothing is set up: every call here finds no exporter and
//! returns at once, and a [`Span`] is an empty value.
//!
//! The engine never waits on the collector: spans go to a bounded queue
//! that a thread of the SDK sends in batches (a full queue drops spans);
//! the run's end waits for the last batch at most the export timeout, and
//! a collector that could not be reached is a warning.
//!
//! * [`otel`] — the exporter, the spans and their contexts;
//! * [`ci`] — the CI/CD attributes of the root span, from the CI's
//!   variables.

pub mod ci;
mod masked;
mod otel;
#[cfg(test)]
mod tests;

use crate::child::process::{Exit, Finished, ProcessError};
use hub_plan::outcome::Outcome;

/// One span; it ends when dropped. Empty when traces are off.
#[derive(Default)]
pub struct Span(Option<otel::Live>);

impl Span {
    /// Sets an attribute (a string, integer or boolean).
    pub fn attr(&self, key: &'static str, value: impl Into<otel::Value>) {
        if let Some(live) = &self.0 {
            live.attr(key, value.into());
        }
    }

    /// Renames the span.
    pub fn rename(&self, name: &str) {
        if let Some(live) = &self.0 {
            live.rename(name);
        }
    }

    /// Marks the span failed (status Error) with `message`.
    pub fn fail(&self, message: &str) {
        if let Some(live) = &self.0 {
            live.fail(message);
        }
    }
}

/// Whether spans are exported in this process.
pub fn enabled() -> bool {
    otel::exporter().is_some()
}

/// Runs `run` (a deploy or an undeploy of the stack in `files`) under the
/// run's root span, when traces are on; the trace id is printed at the end.
pub fn traced_run<T, E: std::fmt::Display>(
    verb: &str,
    files: &[std::path::PathBuf],
    run: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if !enabled() {
        return run();
    }
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let Some(root) = otel::start_run(verb, &files.join(" ")) else {
        return run();
    };
    let result = run();
    if let Err(error) = &result {
        root.fail(&error.to_string());
    }
    otel::finish_run(root);
    result
}

/// Names the run's root span after the stack (`hub deploy NAME`), once
/// the stack is known.
pub fn stack_name(verb: &str, name: &str) {
    otel::rename_run(&format!("hub {verb} {name}"), name);
}

/// A span below the run's root, ended when the returned value is dropped.
pub fn span(name: &str) -> Span {
    Span(otel::child(name, None))
}

/// Runs `step` in a span named `name` below the run's root; an `Err` marks
/// the span failed.
pub fn in_span<T, E: std::fmt::Display>(
    name: &str,
    step: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let span = span(name);
    let result = step();
    if let Err(error) = &result {
        span.fail(&error.to_string());
    }
    result
}

/// The state lock's acquisition: [`in_span`] with the time it waited
/// (`hub.lock.wait_ms`).
pub fn lock<T, E: std::fmt::Display>(step: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let span = span("lock");
    let started = std::time::Instant::now();
    let result = step();
    span.attr("hub.lock.wait_ms", started.elapsed().as_millis() as i64);
    if let Err(error) = &result {
        span.fail(&error.to_string());
    }
    result
}

/// A write of the state, named `state fold` when it wrote the whole
/// state (`folds_before`/`after`: the writer's fold counts around it).
pub(crate) fn state_written(span: Span, folds_before: u64, folds_after: u64) {
    if folds_after > folds_before {
        span.rename("state fold");
    }
}

/// A component's turn starts: its span (`component NAME`), with the action
/// the plan gives it.
pub(crate) fn component_start(name: &str, action: Option<&str>) {
    otel::component_start(name, action);
}

/// The component's environment with `TRACEPARENT` (and `TRACESTATE`) of
/// its span, so that a program that understands them joins the trace.
pub(crate) fn with_traceparent(
    name: &str,
    mut env: Vec<(String, String)>,
) -> Vec<(String, String)> {
    if let Some(vars) = otel::component_traceparent(name) {
        env.retain(|(key, _)| key != "TRACEPARENT" && key != "TRACESTATE");
        env.extend(vars);
    }
    env
}

/// The end of one attempt of the component's process: the attempt count
/// and its exit code.
pub(crate) fn component_exit(name: &str, main: &Option<Result<Finished, ProcessError>>) {
    let exit = match main {
        None => return,
        Some(Ok(finished)) => Some(&finished.exit),
        Some(Err(_)) => None,
    };
    let code = match exit {
        Some(Exit::Code(code)) => Some(i64::from(*code)),
        _ => None,
    };
    otel::component_exit(name, code);
}

/// The component's turn ended: its outcome, status Error on failure.
pub(crate) fn component_end(name: &str, outcome: &Outcome) {
    let failure = match outcome {
        Outcome::Failed(reason) => Some(reason.as_str()),
        Outcome::Interrupted => Some("interrupted"),
        _ => None,
    };
    otel::component_end(name, outcome.label(), failure);
}

/// A hook of `component`: its span, below the component's.
pub fn hook(component: &str, file: &str, trigger: &str) -> Span {
    let span = Span(otel::child(&format!("hook {file}"), Some(component)));
    span.attr("hub.component", component.to_string());
    span.attr("hub.hook.file", file.to_string());
    span.attr("hub.hook.trigger", trigger.to_string());
    span
}
