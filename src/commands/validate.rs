//! `hub validate`: each manifest's findings and a summary line.

use super::output::render;
use crate::cli::ValidateArgs;
use crate::error::Error;
use hub_manifest::diag::Warnings;
use std::io::Write;

/// Prints each file's findings and a one-line summary to stderr; fails
/// when any file has an error.
pub fn validate(args: ValidateArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    use hub_manifest::validate::{validate_files, Severity};
    let policy = hub_manifest::typos::TypoPolicy::from_flags(args.strict, args.lenient);
    let reports = validate_files(&args.files, policy);
    let mut err = std::io::stderr().lock();
    for report in &reports {
        for finding in &report.findings {
            let text = match finding.severity {
                Severity::Warning => format!("warning: {}: {}", finding.location, finding.message),
                Severity::Error => render(
                    &finding.message,
                    Some(finding.location.clone()),
                    finding.hint.clone(),
                ),
            };
            let _ = writeln!(err, "{text}");
        }
        let _ = writeln!(err, "{}", validate_summary(report));
    }
    let failed = reports.iter().filter(|r| !r.is_valid()).count();
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::Invalid {
            failed,
            total: reports.len(),
        })
    }
}

/// `ok: hub.yaml (stack, 2 warnings)` or `invalid: hub.yaml (stack, 1 error)`.
fn validate_summary(report: &hub_manifest::validate::FileReport) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut details = Vec::new();
    if let Some(document) = report.document {
        details.push(document.label().to_string());
    }
    if report.errors() > 0 {
        details.push(plural(report.errors(), "error"));
    }
    if report.warnings() > 0 {
        details.push(plural(report.warnings(), "warning"));
    }
    let verdict = if report.is_valid() { "ok" } else { "invalid" };
    let path = report.path.display();
    if details.is_empty() {
        format!("{verdict}: {path}")
    } else {
        format!("{verdict}: {path} ({})", details.join(", "))
    }
}
