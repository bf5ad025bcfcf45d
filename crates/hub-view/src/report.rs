//! The machine-readable report of a run (`--report FILE.json`): what ran,
//! how each component ended, when and for how long. Output names are
//! listed, never their values.
//!
//! The report's JSON Schema is committed as `schemas/hub-report.schema.json`;
//! a unit test fails when it is out of date (regenerate with
//! `UPDATE_SCHEMAS=1 cargo test --lib schema`).

use hub_plan::outcome::{Entry, Outcome, Summary};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The version of the report format written by this hub.
pub(crate) const REPORT_VERSION: u32 = 1;

/// The file name of the report's schema in `schemas/`.
pub const SCHEMA_FILE: &str = "hub-report.schema.json";

/// The report of one `hub deploy`, `hub undeploy` or `hub plan` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct RunReport {
    /// The version of the report format: 1.
    #[schemars(extend("const" = 1))]
    pub version: u32,
    /// What ran.
    #[schemars(extend("enum" = ["deploy", "undeploy", "plan"]))]
    pub kind: String,
    /// The stack's `meta.name`.
    pub stack: String,
    /// The state file read and written (the first one of `-s a,b`); null
    /// with `-n/--no-state`.
    pub state: Option<String>,
    /// How many components could run at once (`-j`).
    pub jobs: usize,
    /// When the run started (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub started: String,
    /// When the run ended (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub ended: String,
    /// How long the run took, in seconds.
    pub duration_seconds: f64,
    /// The stack status written to the state; empty without a state;
    /// `planned` for a plan.
    #[schemars(extend("enum" = ["", "deploying", "undeploying", "deployed", "undeployed", "incomplete", "planned"]))]
    pub status: String,
    /// How the run ended.
    #[schemars(extend("enum" = ["success", "failure", "interrupted"]))]
    pub result: String,
    /// The error that stopped the run, when it failed.
    pub error: Option<String>,
    /// Every component of the run, in the order the run took them.
    pub components: Vec<ComponentReport>,
    /// The id of the operation the run recorded in the state; it marks
    /// the run's part of each component's log. Absent without a state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The run's warnings, each once, as printed (`FILE:LINE: message`
    /// when it comes from a file); absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How one component of a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct ComponentReport {
    /// The component's name in the stack.
    pub name: String,
    /// What happened to it. A plan says what would happen: `deploy` or
    /// `undeploy` (it would run), `skipped` or `unchanged`.
    #[schemars(extend("enum" = [
        "deployed", "undeployed", "error", "skipped", "interrupted", "not-run",
        "unchanged", "cancelled", "deploy", "undeploy"
    ]))]
    pub status: String,
    /// When it started (RFC 3339); null when it never started.
    #[schemars(extend("format" = "date-time"))]
    pub started: Option<String>,
    /// When it ended (RFC 3339); null when it never started.
    #[schemars(extend("format" = "date-time"))]
    pub ended: Option<String>,
    /// How long it ran, in seconds.
    pub duration_seconds: f64,
    /// Why it was skipped, failed or was cancelled.
    pub reason: Option<String>,
    /// The names of the outputs it produced (never their values).
    pub outputs: Vec<String>,
    /// `lifecycle.retry`: the attempt it ended on (`2`: it ran twice);
    /// absent when it has no retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
}

/// What a report says about the run beyond the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportContext {
    /// `deploy`, `undeploy` or `plan`.
    pub kind: String,
    /// The stack's `meta.name`.
    pub stack: String,
    /// The first state path; `None` with `-n`.
    pub state: Option<String>,
    pub jobs: usize,
    /// RFC 3339 times from the run's clock.
    pub started: String,
    pub ended: String,
    /// `success`, `failure` or `interrupted`.
    pub result: String,
    /// The error message when the run failed.
    pub error: Option<String>,
}

/// The `kind` of a plan report.
const PLAN_KIND: &str = "plan";

impl RunReport {
    /// The report of a run from its end-of-run summary.
    ///
    /// For a plan (`context.kind == "plan"`) nothing ran: a component that
    /// would run is given as `not run` (or as `deployed`/`undeployed`) in the
    /// summary and reported with the plan's verb (`deploy`/`undeploy`), and
    /// the stack status is `planned`.
    pub fn from_summary(summary: &Summary, context: ReportContext) -> RunReport {
        let is_plan = context.kind == PLAN_KIND;
        let components = summary
            .entries
            .iter()
            .map(|entry| ComponentReport::from_entry(entry, is_plan.then_some(summary.verb)))
            .collect();
        let status = if is_plan {
            "planned".to_string()
        } else {
            summary.stack_status.to_string()
        };
        RunReport {
            version: REPORT_VERSION,
            kind: context.kind,
            stack: context.stack,
            state: context.state,
            jobs: context.jobs,
            started: context.started,
            ended: context.ended,
            duration_seconds: seconds(summary.total),
            status,
            result: context.result,
            error: context.error,
            components,
            operation: non_empty(&summary.operation),
            warnings: Vec::new(),
        }
    }
}

impl ComponentReport {
    /// `plan_verb` is the verb of a plan (`deploy`/`undeploy`), `None` for
    /// a real run.
    fn from_entry(entry: &Entry, plan_verb: Option<hub_plan::Verb>) -> ComponentReport {
        let status = match (&entry.outcome, plan_verb) {
            (Outcome::NotRun(_) | Outcome::Deployed | Outcome::Undeployed, Some(verb)) => {
                planned_status(&entry.outcome, verb)
            }
            (Outcome::NotRun(_), None) => "not-run".to_string(),
            (outcome, _) => outcome.label().to_string(),
        };
        let reason = entry.outcome.detail().map(str::to_string);
        ComponentReport {
            name: entry.component.clone(),
            status,
            started: non_empty(&entry.started),
            ended: non_empty(&entry.ended),
            duration_seconds: seconds(entry.duration),
            reason,
            outputs: entry.outputs.clone(),
            attempts: entry.attempt.map(|(attempt, _)| attempt),
        }
    }
}

/// What a plan says a component would do.
fn planned_status(outcome: &Outcome, verb: hub_plan::Verb) -> String {
    match outcome {
        Outcome::Deployed => "deploy".to_string(),
        Outcome::Undeployed => "undeploy".to_string(),
        _ => verb.as_str().to_string(),
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// Seconds, to the millisecond: finer digits are noise in a report.
fn seconds(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write the run report `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot serialise the run report `{}`: {source}", path.display())]
    Serialise {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot read the run report `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` is not a run report of this hub: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("the state `{}` records no run: it has no operation", path.display())]
    NoRun { path: PathBuf },
    #[error("cannot render the HTML report `{}`: {message}", path.display())]
    Render { path: PathBuf, message: String },
}

impl ReportError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ReportError::Write { .. } => {
                Some("check that the report's folder exists and is writable".into())
            }
            ReportError::Serialise { .. } => None,
            ReportError::Read { .. } => {
                Some("give the path of a state or of a `--report FILE.json`".into())
            }
            ReportError::Parse { .. } => Some(
                "give a report written by `--report FILE.json`, or the state the run wrote".into(),
            ),
            ReportError::NoRun { .. } => {
                Some("a state records its runs once hub deploys or undeploys it".into())
            }
            ReportError::Render { .. } => None,
        }
    }
}

/// Reads a report written by [`write`].
pub fn read(path: &Path) -> Result<RunReport, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ReportError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes the report as pretty JSON ending in a newline, atomically (a
/// temporary file in the same folder, fsync, rename).
pub fn write(path: &Path, report: &RunReport) -> Result<(), ReportError> {
    let mut text =
        serde_json::to_string_pretty(report).map_err(|source| ReportError::Serialise {
            path: path.to_path_buf(),
            source,
        })?;
    text.push('\n');
    hub_manifest::write_private_output(path, text.as_bytes()).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The JSON Schema of [`RunReport`].
pub fn schema() -> Value {
    hub_manifest::schema::of_output::<RunReport>(
        SCHEMA_FILE,
        "Hub run report",
        "The report `hub deploy`, `hub undeploy` and `hub plan` write with \
         `--report FILE.json`: the run, and how each component ended.",
    )
}

/// The schema as written to `schemas/`: pretty JSON ending in a newline.
pub fn schema_text() -> String {
    hub_manifest::schema::pretty(&schema())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary() -> Summary {
        let mut summary = Summary {
            verb: hub_plan::Verb::Deploy,
            stack_status: "incomplete".into(),
            total: Duration::from_millis(1234),
            ..Summary::default()
        };
        summary.push("network", Outcome::Deployed, Duration::from_millis(20));
        summary.push(
            "database",
            Outcome::Failed("exit code 3".into()),
            Duration::from_secs(1),
        );
        summary.push("app", Outcome::NotRun(None), Duration::ZERO);
        summary.push(
            "monitoring",
            Outcome::Cancelled("`database` failed".into()),
            Duration::ZERO,
        );
        for (name, started, ended) in [
            ("network", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
            ("database", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"),
        ] {
            let entry = summary.entry_mut(name).unwrap();
            entry.started = started.into();
            entry.ended = ended.into();
        }
        summary.entry_mut("network").unwrap().outputs = vec!["subnet".into()];
        summary
    }

    fn context(kind: &str) -> ReportContext {
        ReportContext {
            kind: kind.into(),
            stack: "demo".into(),
            state: Some("demo.state".into()),
            jobs: 2,
            started: "2026-01-01T00:00:00Z".into(),
            ended: "2026-01-01T00:00:01Z".into(),
            result: "failure".into(),
            error: Some("component `database` failed: exit code 3".into()),
        }
    }

    #[test]
    fn a_run_reports_each_component_with_its_times_and_reason() {
        let report = RunReport::from_summary(&summary(), context("deploy"));
        assert_eq!(report.version, 1);
        assert_eq!(
            (report.status.as_str(), report.duration_seconds),
            ("incomplete", 1.234)
        );
        let statuses: Vec<&str> = report
            .components
            .iter()
            .map(|c| c.status.as_str())
            .collect();
        assert_eq!(statuses, ["deployed", "error", "not-run", "cancelled"]);
        let network = &report.components[0];
        assert_eq!(network.started.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(network.outputs, ["subnet"]);
        assert_eq!(report.components[1].reason.as_deref(), Some("exit code 3"));
        let app = &report.components[2];
        assert_eq!(
            (app.started.as_deref(), app.reason.as_deref()),
            (None, None)
        );
    }

    #[test]
    fn a_plan_reports_what_would_run_with_the_verb() {
        let mut summary = Summary {
            verb: hub_plan::Verb::Undeploy,
            ..Summary::default()
        };
        summary.push("a", Outcome::NotRun(None), Duration::ZERO);
        summary.push("b", Outcome::Unchanged, Duration::ZERO);
        summary.push("c", Outcome::Skipped("off".into()), Duration::ZERO);
        let report = RunReport::from_summary(&summary, context("plan"));
        assert_eq!(report.status, "planned");
        let statuses: Vec<&str> = report
            .components
            .iter()
            .map(|c| c.status.as_str())
            .collect();
        assert_eq!(statuses, ["undeploy", "unchanged", "skipped"]);
    }

    #[test]
    fn the_json_has_snake_case_keys_and_explicit_nulls() {
        let mut context = context("deploy");
        context.state = None;
        let report = RunReport::from_summary(&summary(), context);
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(value["duration_seconds"], json!(1.234));
        assert_eq!(value["state"], Value::Null);
        assert_eq!(value["components"][2]["started"], Value::Null);
        let back: RunReport = serde_json::from_value(value).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn write_replaces_the_file_and_names_it_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, "old").unwrap();
        let report = RunReport::from_summary(&summary(), context("deploy"));
        write(&path, &report).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\n  \"version\": 1,") && text.ends_with("}\n"));
        let back: RunReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, report);
        let missing = dir.path().join("no/such/folder/run.json");
        let error = write(&missing, &report).unwrap_err();
        assert!(
            error.to_string().contains("no/such/folder/run.json"),
            "{error}"
        );
        assert!(error.hint().is_some());
    }

    #[test]
    fn reports_validate_against_the_schema() {
        let schema = schema();
        let validator = jsonschema::draft7::new(&schema).expect("the schema compiles");
        for kind in ["deploy", "plan"] {
            let report = RunReport::from_summary(&summary(), context(kind));
            let instance = serde_json::to_value(&report).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&instance)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{kind}: {errors:?}");
        }
        let mut wrong =
            serde_json::to_value(RunReport::from_summary(&summary(), context("deploy"))).unwrap();
        wrong["result"] = json!("maybe");
        wrong["extra"] = json!(1);
        assert!(!validator.is_valid(&wrong));
    }

    /// `schemas/hub-report.schema.json` must be what the types generate.
    #[test]
    fn report_schema_file_is_up_to_date() {
        hub_manifest::schema::assert_committed(
            SCHEMA_FILE,
            &schema_text(),
            "crates/hub-view/src/report.rs",
        );
    }
}
