//! The HTML run report: `--report FILE.html` of `deploy`, `undeploy` and
//! `plan`, and `hub report STATE|REPORT.json -o FILE.html` for a past run.

use crate::error::Error;
use hub_manifest::diag::Warnings;
use hub_view::html::{self, sources};
use hub_view::report::{self, ReportError, RunReport};
use std::path::{Path, PathBuf};

/// Writes `report` as HTML to `path`, with what the state at
/// `report.state` (as it is now), its logs and `plan` say of each
/// component.
pub fn write_html(
    path: &Path,
    report: &RunReport,
    plan: Option<&hub_plan::plan::Plan>,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let state_path = report.state.as_deref().map(Path::new);
    let state = match state_path {
        // A state that cannot be read leaves the page without outputs,
        // not without a report.
        Some(state_path) => hub_state::read(state_path, warnings).ok().flatten(),
        None => None,
    };
    let logs = state_path.map(hub_plan::decide::records::log_dir);
    let details = sources::gather(report, state.as_ref(), logs.as_deref(), plan);
    html::write(path, report, &details)?;
    Ok(())
}

/// `hub report`: the HTML page of the run a JSON report describes
/// (`--from`), or of the last run a state records (`-s`).
pub fn report(mut args: crate::request::ReportArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let (input, is_json) = match (args.input.take(), args.from.take()) {
        (Some(input), _) => {
            let is_json = input
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"));
            let flag = if is_json { "--from" } else { "-s" };
            let old = format!("hub report {}", input.display());
            let new = format!("hub report {flag} {}", input.display());
            super::common::deprecated(warnings, &old, &new);
            (input, is_json)
        }
        (None, Some(from)) => (from, true),
        (None, None) => (
            args.state
                .take()
                .unwrap_or_else(|| PathBuf::from("hub.yaml.state")),
            false,
        ),
    };
    let input = &input;
    let mut run = if is_json {
        report::read(input)?
    } else {
        let state = hub_state::read(input, warnings)?.ok_or_else(|| ReportError::Read {
            path: input.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such state"),
        })?;
        let text = input.display().to_string();
        sources::report_from_state(&state, &text).ok_or_else(|| ReportError::NoRun {
            path: input.clone(),
        })?
    };
    if let Some(state) = &args.state {
        run.state = Some(state.display().to_string());
    }
    write_html(&args.output, &run, None, warnings)
}
