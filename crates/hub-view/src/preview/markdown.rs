//! A plan as a pull-request comment (`hub plan --format markdown`): a
//! summary line, a table of the components and their actions, then, for
//! each component that changes (every one with `--verbose`), its waits,
//! requirements and the parameters that differ from the state (all of
//! them with `--verbose`) in a collapsed `<details>` block. Secrets are
//! always masked: the command refuses `--reveal` with this format.

use super::render::{
    counts_text, hidden_text, output_text, parameter_text, removed_heading, requirement_text,
};
use super::{ComponentPreview, Detail, Preview, Verb, Wait};
use crate::inert::{code, html, rich};
use std::fmt::Write;

/// ```markdown
/// ### Plan: deploy stack `demo`
///
/// **0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail**
///
/// State: `demo.state` (serial 7) · jobs: 1
///
/// | Component | Action | Why |
/// |---|---|---|
/// | `network` | **update** | folder content changed |
///
/// <details><summary><code>network</code>: update</summary>
///
/// ```diff
/// ~ component.network.cidr = 10.0.0.0/16 → 10.1.0.0/16
/// ```
///
/// (1 unchanged; --verbose shows every parameter)
///
/// </details>
/// ```
///
/// A component that does not change is its row of the table alone,
/// unless [`Detail::All`] (`--verbose`).
pub fn render_markdown(preview: &Preview, detail: Detail) -> String {
    let mut out = format!(
        "### Plan: {} {}\n\n",
        preview.verb.as_str(),
        match preview.stack.is_empty() {
            true => "a stack without `meta.name`".to_string(),
            false => format!("stack {}", code(&preview.stack)),
        }
    );
    let _ = writeln!(out, "**{}**\n", counts_text(preview));
    let _ = writeln!(out, "{}\n", context_line(preview));
    out.push_str("| Component | Action | Why |\n|---|---|---|\n");
    for component in &preview.components {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            code(&component.name),
            action_cell(component),
            rich(&why(component))
        );
    }
    if !preview.removed.is_empty() {
        let _ = writeln!(out, "\nComponents {}:\n", removed_heading(preview));
        out.push_str("| Component | Action | Why |\n|---|---|---|\n");
        for removed in &preview.removed {
            let action = match preview.prune {
                true => format!("**{}**", removed.action.as_str()),
                false => removed.action.as_str().to_string(),
            };
            let why = rich(&removed.reasons.join("; "));
            let _ = writeln!(out, "| {} | {action} | {why} |", code(&removed.name));
        }
    }
    if !preview.problems.is_empty() {
        out.push_str("\nWould fail before any component starts:\n\n");
        for problem in &preview.problems {
            let _ = writeln!(out, "- {}", rich(&problem.to_string()));
        }
    }
    if !preview.moved.is_empty() {
        out.push_str("\nRenamed in the state (`moved`):\n\n");
        for renamed in &preview.moved {
            let (from, to) = (code(&renamed.from), code(&renamed.to));
            let _ = writeln!(out, "- moved {from} → {to}");
        }
    }
    for component in preview.components.iter().filter(|c| detail.expands(c)) {
        out.push('\n');
        out.push_str(&details(component, detail));
    }
    out
}

/// `State: `demo.state` (serial 7) · selection: … · jobs: 1`.
fn context_line(preview: &Preview) -> String {
    let state = match &preview.state {
        None => "none (`-n`)".to_string(),
        Some(seen) => match (seen.serial, preview.verb) {
            (Some(serial), _) => format!("{} (serial {serial})", code(&seen.path)),
            (None, Verb::Deploy) => format!("{} does not exist: first deploy", code(&seen.path)),
            (None, Verb::Undeploy) => {
                format!("{} does not exist: nothing recorded", code(&seen.path))
            }
        },
    };
    let mut line = format!("State: {state}");
    if let Some(selection) = &preview.selection {
        let _ = write!(line, " · selection: {}", rich(&selection.line));
    }
    let _ = write!(line, " · jobs: {}", preview.jobs);
    line
}

/// Its reasons, and when it is deferred, what it waits for.
fn why(component: &ComponentPreview) -> String {
    let mut why = component.reasons.join("; ");
    if let Some(deferred) = &component.through.deferred {
        if !why.is_empty() {
            why.push_str("; ");
        }
        why.push_str("deferred: ");
        why.push_str(&deferred.text());
    }
    why
}

/// The action, in bold when the component's implementation would run.
fn action_cell(component: &ComponentPreview) -> String {
    let action = component.action.as_str();
    match component.action.runs() {
        true => format!("**{action}**"),
        false => action.to_string(),
    }
}

fn details(component: &ComponentPreview, detail: Detail) -> String {
    let mut out = format!(
        "<details><summary><code>{}</code>: {}</summary>\n\n",
        html(&component.name),
        component.action.as_str()
    );
    if let Some(implementation) = &component.implementation {
        let _ = writeln!(out, "Runs: {}\n", rich(implementation));
    }
    if !component.waits_for.is_empty() {
        let waits: Vec<String> = component.waits_for.iter().map(Wait::to_string).collect();
        let _ = writeln!(out, "Waits for: {}\n", rich(&waits.join("; ")));
    } else if component.needs_nothing {
        out.push_str("Waits for: nothing (`depends: []`)\n\n");
    }
    if !component.requires.is_empty() {
        let requires: Vec<String> = component.requires.iter().map(requirement_text).collect();
        let _ = writeln!(out, "Requires: {}\n", rich(&requires.join("; ")));
    }
    if let Some(timeout) = &component.timeout {
        let _ = writeln!(out, "Timeout: {} (`lifecycle.timeouts`)\n", rich(timeout));
    }
    if let Some(retry) = &component.retry {
        let _ = writeln!(out, "Retry: {} (`lifecycle.retry`)\n", rich(retry));
    }
    let shown = detail.parameters(component);
    let lines: Vec<String> = shown.into_iter().map(parameter_text).collect();
    if component.parameters.is_empty() {
        out.push_str("No parameters.\n\n");
    } else if !lines.is_empty() {
        let fence = fence_for(&lines);
        let _ = writeln!(out, "{fence}diff\n{}\n{fence}\n", lines.join("\n"));
    }
    if let Some(hidden) = hidden_text(detail.hidden(component)) {
        let _ = writeln!(out, "{hidden}\n");
    }
    if !component.through.outputs.is_empty() {
        let lines: Vec<String> = component.through.outputs.iter().map(output_text).collect();
        let fence = fence_for(&lines);
        let _ = writeln!(
            out,
            "Planned outputs:\n\n{fence}\n{}\n{fence}\n",
            lines.join("\n")
        );
    }
    out.push_str("</details>\n");
    out
}

/// A code fence longer than any run of backticks in the block.
fn fence_for(lines: &[String]) -> String {
    let longest = lines
        .iter()
        .flat_map(|line| line.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outgrows_the_backticks_of_its_block() {
        assert_eq!(fence_for(&["+ a = b".into()]), "```");
        assert_eq!(fence_for(&["+ a = ````x".into()]), "`````");
    }
}
