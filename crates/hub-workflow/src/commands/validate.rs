//! `hub validate`: each manifest's findings and a summary line.

use super::output::render;
use crate::error::Error;
use crate::request::ValidateArgs;
use hub_manifest::diag::Warnings;
use std::io::Write;

/// Prints each file's findings and a one-line summary to stderr; fails
/// when any file has an error.
pub fn validate(args: ValidateArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    use hub_manifest::validate::{validate_files, Severity};
    let policy = hub_manifest::typos::TypoPolicy::from_flags(args.strict, args.lenient);
    let mut reports = validate_files(&args.files, policy);
    unread_parameters(&mut reports, policy);
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

/// The stack parameters nothing reads, when the files are one stack
/// manifest and its parameters files, all valid: the stack is elaborated
/// in memory as `elaborate`, `plan` and `deploy` do (the one check at the
/// end of elaboration), and each finding goes to the report of the file
/// that set the parameter. A stack that does not elaborate (a component
/// not checked out) gets no such finding: `hub elaborate` says why.
fn unread_parameters(
    reports: &mut [hub_manifest::validate::FileReport],
    policy: hub_manifest::typos::TypoPolicy,
) {
    use hub_manifest::diag::{Location, Topic};
    use hub_manifest::keys::refused_hint_about;
    use hub_manifest::schema::DocumentType;
    use hub_manifest::typos::{is_refused, refused_message};
    use hub_manifest::validate::{Finding, Severity};
    if reports.iter().any(|r| !r.is_valid()) {
        return;
    }
    let of = |kind: DocumentType| {
        reports
            .iter()
            .filter(move |r| r.document == Some(kind))
            .map(|r| r.path.clone())
    };
    let stacks: Vec<_> = of(DocumentType::Stack).collect();
    let [stack] = &stacks[..] else {
        return;
    };
    let stack = stack.clone();
    let options = hub_elaborate::Options {
        stack: stack.clone(),
        params: of(DocumentType::Params).collect(),
        env_name: std::env::var("ENV").ok(),
        ..hub_elaborate::Options::default()
    };
    // Only the unread parameters are taken from the elaboration: the rest
    // is about the files given, which their checks reported as findings,
    // or about files `validate` was not asked to check (components).
    let mut found = Warnings::new();
    if hub_elaborate::elaborate(&options, &mut found).is_err() {
        return;
    }
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
    };
    for warning in found
        .into_warnings()
        .filter(|w| w.topic == Topic::UnreadParameter)
    {
        let location = warning
            .location
            .clone()
            .unwrap_or_else(|| Location::file(&stack));
        let refused = warning.near_typo && is_refused(warning.origin, policy);
        let finding = Finding {
            severity: if refused {
                Severity::Error
            } else {
                Severity::Warning
            },
            message: if refused {
                refused_message(&warning.message)
            } else {
                warning.message.clone()
            },
            hint: refused.then(|| refused_hint_about(warning.origin, warning.topic)),
            location,
        };
        let index = reports
            .iter()
            .position(|r| same(&r.path, &finding.location.file))
            .or_else(|| reports.iter().position(|r| r.path == stack));
        if let Some(report) = index.and_then(|i| reports.get_mut(i)) {
            report.findings.push(finding);
        }
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
