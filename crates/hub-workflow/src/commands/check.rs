//! `hub check`: run the components' checks, record their health, print
//! the result as text or as Markdown (the body of an issue).

use super::common::{
    hub_executable, install_interrupts, parse_os_environment, parse_overrides, refuse_near_typos,
    split_list,
};
use crate::error::Error;
use crate::request::CheckFormat;
use hub_engine::run::check::{CheckOptions, CheckReport, Checked};
use hub_manifest::diag::Warnings;
use hub_state::HealthStatus;
use std::path::PathBuf;

/// `hub check`.
pub fn check(args: crate::request::CheckArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let overrides = parse_overrides(&args.stack.environment)?;
    let states: Vec<PathBuf> = split_list(std::slice::from_ref(&args.state))
        .into_iter()
        .map(PathBuf::from)
        .collect();
    if states.is_empty() {
        return Err(Error::Usage {
            flag: "-s",
            value: args.state.clone(),
            reason: "give a state file (several separated by commas)".into(),
        });
    }
    let (first, params) = args.stack.manifest.split_first().ok_or(Error::Usage {
        flag: "MANIFEST",
        value: String::new(),
        reason: "give the elaborated file, or the stack manifest and its parameters files".into(),
    })?;
    let stack = hub_plan::source::stack::Stack::load(
        first,
        params,
        args.stack.base_dir.as_deref(),
        &overrides,
        warnings,
    )?;
    refuse_near_typos(warnings, args.stack.strict, args.stack.lenient)?;
    let healthy_or_not = match with_health(&args.selection.status, &states, &stack, warnings) {
        Err(Error::NoneWithHealth(healths)) => return nothing_with_health(&healths),
        found => found?,
    };
    let options = CheckOptions {
        state: states,
        selection: {
            let mut selection =
                super::selection::resolve(&stack, &args.selection, args.stack.base_dir.as_deref())?;
            if let Some(components) = healthy_or_not {
                selection.components = components;
            }
            selection
        },
        components_base_dir: args.stack.base_dir.clone(),
        os_environment: parse_os_environment(&args.os_environment)?,
        reveal: args.reveal,
        concurrency: match args.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        timeout: args.timeout,
        lock_timeout: args.lock.lock_timeout,
        state_format: hub_state::StateFormat::default(),
    };
    let interrupts = install_interrupts()?;
    let environment: Vec<(String, String)> = std::env::vars().collect();
    let report = hub_engine::run::check::check(
        &stack,
        &options,
        &environment,
        hub_executable(),
        &interrupts,
        warnings,
    )?;
    for name in &report.not_deployed {
        hub_manifest::console::err_line(&format!(
            "hub: {name}: not deployed according to the state, not checked"
        ));
    }
    let text = match args.format {
        CheckFormat::Markdown => markdown(&stack.elaborated.stack.meta.name, &report),
        CheckFormat::Text => text(&report),
    };
    super::output::write_stdout(text.as_bytes())?;
    let count = |health| report.checked.iter().filter(|c| c.health == health).count();
    match (count(HealthStatus::Failed), count(HealthStatus::Drifted)) {
        (0, 0) => Ok(()),
        (0, _) if args.detailed_exitcode => Err(Error::PlanChanges),
        (0, _) => Ok(()),
        (failed, _) => Err(Error::CheckFailures(failed)),
    }
}

/// `--status LIST`: the components of the stack whose recorded health is
/// one of `healths` (`None` without the flag); none is
/// [`Error::NoneWithHealth`], so that the run does nothing rather than
/// everything.
pub(crate) fn with_health(
    healths: &[hub_state::HealthStatus],
    states: &[PathBuf],
    stack: &hub_plan::source::stack::Stack,
    warnings: &mut Warnings,
) -> Result<Option<Vec<String>>, Error> {
    if healths.is_empty() {
        return Ok(None);
    }
    let read_path = hub_state::locations::to_read(states).or(states.first().map(PathBuf::as_path));
    let stored = match read_path {
        Some(path) => hub_state::read(path, warnings)?,
        None => None,
    };
    let Some(stored) = stored else {
        return Err(hub_engine::run::error::EngineError::Planning(
            hub_plan::error::PlanningError::StateRequired {
                flag: "--status",
                path: read_path.map(PathBuf::from),
            },
        )
        .into());
    };
    let matching: Vec<String> = stack
        .elaborated
        .stack
        .components
        .iter()
        .map(|c| c.name.clone())
        .filter(|name| {
            stored
                .components
                .get(name)
                .and_then(|entry| entry.health.as_ref())
                .is_some_and(|health| healths.iter().any(|h| health.status.known() == Some(*h)))
        })
        .collect();
    match matching.is_empty() {
        true => Err(Error::NoneWithHealth(healths.to_vec())),
        false => Ok(Some(matching)),
    }
}

/// A run selected by `--status` when nothing matched: it says so and
/// succeeds.
pub(crate) fn nothing_with_health(healths: &[hub_state::HealthStatus]) -> Result<(), Error> {
    hub_manifest::console::err_line(&format!(
        "hub: no component has the health {}: nothing to do",
        crate::error::health_words(healths)
    ));
    Ok(())
}

/// `db: healthy (make check)`, the evidence of a drifted or failed check
/// indented below, and a summary line.
fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    for one in &report.checked {
        out.push_str(&format!("{}: {} ({})\n", one.component, one.health, one.by));
        for line in &one.evidence {
            out.push_str(&format!("  | {line}\n"));
        }
    }
    out.push_str(&format!("{} at {}\n", summary(report), report.time));
    out
}

/// `1 healthy, 1 drifted, 0 failed, 0 unverifiable`.
fn summary(report: &CheckReport) -> String {
    report
        .counts()
        .iter()
        .map(|(health, n)| format!("{n} {health}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A Markdown page for an issue: a table of every component, then the
/// evidence of each drifted or failed one.
fn markdown(stack: &str, report: &CheckReport) -> String {
    let mut out = format!("## Drift check of `{}`\n\n", cell(stack));
    out.push_str(&format!(
        "Checked at {}: {}.\n\n",
        report.time,
        summary(report)
    ));
    out.push_str("| Component | Health | Checked by |\n|---|---|---|\n");
    for one in &report.checked {
        let by = match one.health {
            HealthStatus::Unverifiable => "no check".to_string(),
            _ => format!("`{}`", cell(&one.by)),
        };
        out.push_str(&format!(
            "| {} | {} {} | {by} |\n",
            cell(&one.component),
            mark(one.health),
            one.health,
        ));
    }
    let detailed: Vec<&Checked> = report
        .checked
        .iter()
        .filter(|c| !c.evidence.is_empty())
        .collect();
    for one in detailed {
        let fence = fence(&one.evidence);
        out.push_str(&format!(
            "\n### {}: {}\n\n{fence}text\n",
            cell(&one.component),
            one.health
        ));
        for line in &one.evidence {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&fence);
        out.push('\n');
    }
    out
}

fn mark(health: HealthStatus) -> &'static str {
    match health {
        HealthStatus::Healthy => "✅",
        HealthStatus::Drifted => "⚠️",
        HealthStatus::Failed => "❌",
        HealthStatus::Unverifiable => "❔",
    }
}

/// Text safe in a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('`', "'")
}

/// A code fence longer than any run of backticks in the lines.
fn fence(lines: &[String]) -> String {
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::fence;

    #[test]
    fn a_fence_is_longer_than_the_backticks_it_holds() {
        assert_eq!(fence(&["plain".into()]), "```");
        assert_eq!(fence(&["a ```` b".into()]), "`````");
    }
}
