//! Whether a saved plan still holds: the plan made again now, from the
//! same files and arguments, compared with the saved one. Every
//! difference is said in a short phrase; none means the deploy runs
//! exactly what was reviewed.

use super::{PlanAction, PlannedComponent, PlannedFile, PlannedState, SavedPlan, ABSENT};
use std::collections::{BTreeMap, HashMap};

/// What moved between the `saved` plan and the one made `now`; empty when
/// nothing did. A state that moved is said alone: the components'
/// differences follow from it.
pub fn differences(saved: &SavedPlan, now: &SavedPlan) -> Vec<String> {
    let state = state_differences(&saved.state, &now.state);
    if !state.is_empty() {
        return state;
    }
    let mut found = beside_state(saved, now);
    found.extend(component_differences(&saved.components, &now.components));
    found
}

/// When only the state's serial moved (the same lineage: another run
/// wrote it) and the `saved` plan records each component's state entry:
/// what else moved, which still refuses the whole plan (the commit, the
/// files, the policy files, the stack, which components it has). The
/// components' own differences are then left to the run, which decides
/// each one under its lock. `None` when the plan is not narrowed so.
pub fn narrowed(saved: &SavedPlan, now: &SavedPlan) -> Option<Vec<String>> {
    let (before, after) = (&saved.state, &now.state);
    let moved = before.lineage.is_some()
        && before.lineage == after.lineage
        && before.serial.is_some()
        && after.serial.is_some()
        && before.serial != after.serial;
    if !moved || !records_entries(saved) {
        return None;
    }
    let mut found = beside_state(saved, now);
    let sets = component_sets(&saved.components, &now.components);
    if sets.is_empty() {
        found.extend(
            saved
                .components
                .iter()
                .zip(&now.components)
                .flat_map(|(before, after)| folders(before, after)),
        );
    }
    found.extend(sets);
    Some(found)
}

/// Every component of the plan records its state entry's digest.
pub fn records_entries(saved: &SavedPlan) -> bool {
    !saved.components.is_empty() && saved.components.iter().all(|c| c.entry.is_some())
}

/// The differences that are not the state's nor a component's.
fn beside_state(saved: &SavedPlan, now: &SavedPlan) -> Vec<String> {
    let mut found = commit_differences(saved.stack.commit.as_deref(), now.stack.commit.as_deref());
    found.extend(file_differences(
        &saved.stack.inputs,
        &now.stack.inputs,
        "file",
    ));
    found.extend(file_differences(
        &saved.policies,
        &now.policies,
        "policy file",
    ));
    if saved.stack.name != now.stack.name {
        found.push(format!(
            "it was made for stack `{}`, not `{}`",
            saved.stack.name, now.stack.name
        ));
    }
    if saved.stack.digest != now.stack.digest {
        found.push("the elaborated stack changed".into());
    }
    found
}

/// The commit the plan was made at and the one here: where either is not
/// known (outside git, without `--sha`), the plan is compared by its
/// files alone.
fn commit_differences(saved: Option<&str>, now: Option<&str>) -> Vec<String> {
    match (saved, now) {
        (Some(before), Some(after)) if before != after => vec![format!(
            "it was made at commit `{before}`, and this is commit `{after}`"
        )],
        _ => Vec::new(),
    }
}

/// Each file (or folder, its path ending in `/`) whose digest differs,
/// that is there now and was not, or the reverse, in path order.
fn file_differences(saved: &[PlannedFile], now: &[PlannedFile], what: &str) -> Vec<String> {
    differing_files(saved, now)
        .into_iter()
        .map(|(path, was, is)| {
            let what = match path.ends_with('/') {
                true => "folder",
                false => what,
            };
            match (was, is) {
                (None, _) => format!("the {what} `{path}` is new since the plan"),
                (_, None) => format!("the {what} `{path}` is gone since the plan"),
                _ => format!("the {what} `{path}` changed"),
            }
        })
        .collect()
}

/// The paths whose digest differs between `saved` and `now`, in path
/// order, each with its digest then and now (`None`: not there).
pub fn differing_files<'a>(
    saved: &'a [PlannedFile],
    now: &'a [PlannedFile],
) -> Vec<(&'a str, Option<&'a str>, Option<&'a str>)> {
    let digests = |files: &'a [PlannedFile]| -> BTreeMap<&'a str, &'a str> {
        files
            .iter()
            .filter(|f| f.digest != ABSENT)
            .map(|f| (f.path.as_str(), f.digest.as_str()))
            .collect()
    };
    let (before, after) = (digests(saved), digests(now));
    let mut paths: Vec<&str> = before.keys().chain(after.keys()).copied().collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .map(|path| (path, before.get(path).copied(), after.get(path).copied()))
        .filter(|(_, was, is)| was != is)
        .collect()
}

/// The state's identity (lineage) and version (serial).
fn state_differences(saved: &PlannedState, now: &PlannedState) -> Vec<String> {
    let path = now.read.as_deref().unwrap_or("-n");
    match (&saved.lineage, &now.lineage) {
        (None, Some(_)) => vec![format!(
            "the state `{path}` was written since the plan (there was none)"
        )],
        (Some(_), None) => vec![format!("the state `{path}` is gone")],
        (Some(before), Some(after)) if before != after => vec![format!(
            "the state `{path}` is another one (lineage `{after}`, the plan's `{before}`)"
        )],
        _ => match (saved.serial, now.serial) {
            (Some(before), Some(after)) if before != after => vec![format!(
                "the state `{path}` moved from serial {before} to {after} (another run wrote it)"
            )],
            _ => Vec::new(),
        },
    }
}

/// The selected components, then the removed ones deleted: first which
/// ones, then, when the same, what each relies on.
fn component_differences(saved: &[PlannedComponent], now: &[PlannedComponent]) -> Vec<String> {
    let found = component_sets(saved, now);
    if !found.is_empty() {
        return found;
    }
    saved
        .iter()
        .zip(now)
        .flat_map(|(before, after)| one_component(before, after))
        .collect()
}

/// Which components are selected, and which removed ones are deleted.
fn component_sets(saved: &[PlannedComponent], now: &[PlannedComponent]) -> Vec<String> {
    let mut found = Vec::new();
    let (saved_names, now_names) = (names(saved, false), names(now, false));
    if saved_names != now_names {
        found.push(format!(
            "the components changed (planned: {saved_names}; now: {now_names})"
        ));
    }
    let (saved_deletes, now_deletes) = (names(saved, true), names(now, true));
    if saved_deletes != now_deletes {
        found.push(format!(
            "the components removed from the stack changed (planned to delete: {saved_deletes}; now: {now_deletes})"
        ));
    }
    found
}

/// The names of the `delete`s (in a deploy's plan: the removed
/// components) or of the others, in order, on one line.
fn names(list: &[PlannedComponent], deletes: bool) -> String {
    let names: Vec<&str> = list
        .iter()
        .filter(|c| (c.action == PlanAction::Delete) == deletes)
        .map(|c| c.name.as_str())
        .collect();
    match names.is_empty() {
        true => "none".into(),
        false => names.join(", "),
    }
}

/// The component's folder (its digest) and, for a `delete`, the folder
/// the state records.
fn folders(before: &PlannedComponent, after: &PlannedComponent) -> Vec<String> {
    let name = &before.name;
    let mut found = Vec::new();
    if before.dir != after.dir {
        found.push(format!("the recorded folder of `{name}` changed"));
    }
    if before.folder != after.folder {
        found.push(format!("the folder of `{name}` changed"));
    }
    found
}

fn one_component(before: &PlannedComponent, after: &PlannedComponent) -> Vec<String> {
    let name = &before.name;
    let mut found = folders(before, after);
    let changed = changed_parameters(before, after);
    if !changed.is_empty() {
        found.push(format!(
            "parameters of `{name}` changed: {}",
            changed.join(", ")
        ));
    }
    if before.action != after.action {
        found.push(format!(
            "`{name}` would now {} (planned: {})",
            after.action.as_str(),
            before.action.as_str()
        ));
    }
    found
}

/// Names whose value (or secret digest) differs, or that only one side
/// has, in the saved order, then the new ones.
fn changed_parameters(before: &PlannedComponent, after: &PlannedComponent) -> Vec<String> {
    let now: HashMap<&str, &str> = after
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    let was: HashMap<&str, &str> = before
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    let mut names: Vec<String> = before
        .parameters
        .iter()
        .filter(|p| now.get(p.name.as_str()) != Some(&p.value.as_str()))
        .map(|p| format!("`{}`", p.name))
        .collect();
    names.extend(
        after
            .parameters
            .iter()
            .filter(|p| !was.contains_key(p.name.as_str()))
            .map(|p| format!("`{}`", p.name)),
    );
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::super::{PlannedArguments, PlannedParameter, PlannedStack};
    use super::*;

    fn plan(serial: u64, value: &str) -> SavedPlan {
        SavedPlan {
            version: 1,
            created: "2026-01-01T00:00:00Z".into(),
            stack: PlannedStack {
                name: "s".into(),
                files: vec!["hub.yaml".into()],
                digest: "sha256:a".into(),
                commit: Some("c1".into()),
                inputs: vec![PlannedFile {
                    path: "../lib/common.sh".into(),
                    digest: "sha256:l".into(),
                }],
            },
            state: PlannedState {
                locations: vec!["s.state".into()],
                read: Some("s.state".into()),
                lineage: Some("l".into()),
                serial: Some(serial),
            },
            arguments: PlannedArguments::default(),
            components: vec![PlannedComponent {
                name: "app".into(),
                action: PlanAction::Update,
                reasons: Vec::new(),
                folder: Some("sha256:f".into()),
                parameters: vec![PlannedParameter {
                    name: "db.password".into(),
                    value: value.into(),
                    secret: true,
                }],
                dir: None,
                reads: Vec::new(),
                entry: Some("sha256:e".into()),
            }],
            policies: Vec::new(),
            change: None,
        }
    }

    /// `plan(3, …)` deleting the removed component `old`.
    fn deleting(folder: &str) -> SavedPlan {
        let mut plan = plan(3, "sha256:x");
        plan.components.push(PlannedComponent {
            name: "old".into(),
            action: PlanAction::Delete,
            reasons: Vec::new(),
            folder: Some(folder.into()),
            parameters: Vec::new(),
            dir: Some("/stack/old".into()),
            reads: Vec::new(),
            entry: Some(ABSENT.into()),
        });
        plan
    }

    #[test]
    fn the_deletes_are_compared_apart_then_by_folder() {
        let saved = deleting("sha256:o");
        assert!(differences(&saved, &deleting("sha256:o")).is_empty());
        assert_eq!(
            differences(&saved, &deleting("sha256:p")),
            ["the folder of `old` changed"]
        );
        let mut more = deleting("sha256:o");
        let mut cache = more.components[1].clone();
        cache.name = "cache".into();
        more.components.push(cache);
        assert_eq!(
            differences(&saved, &more),
            ["the components removed from the stack changed (planned to delete: old; now: old, cache)"]
        );
        assert_eq!(
            differences(&plan(3, "sha256:x"), &saved),
            ["the components removed from the stack changed (planned to delete: none; now: old)"]
        );
        let mut moved = deleting("sha256:o");
        moved.components[1].dir = Some("/elsewhere/old".into());
        assert_eq!(
            differences(&saved, &moved),
            ["the recorded folder of `old` changed"]
        );
    }

    #[test]
    fn the_commit_and_each_file_read_are_compared() {
        let saved = plan(3, "sha256:x");
        let mut now = plan(3, "sha256:x");
        now.stack.commit = Some("c2".into());
        now.stack.inputs[0].digest = "sha256:m".into();
        now.stack.inputs.push(PlannedFile {
            path: "../modules/net/".into(),
            digest: "sha256:n".into(),
        });
        now.policies.push(PlannedFile {
            path: "deny.yaml".into(),
            digest: ABSENT.into(),
        });
        assert_eq!(
            differences(&saved, &now),
            [
                "it was made at commit `c1`, and this is commit `c2`",
                "the file `../lib/common.sh` changed",
                "the folder `../modules/net/` is new since the plan",
            ]
        );
        now.stack.commit = None;
        assert_eq!(
            differences(&saved, &now)[0],
            "the file `../lib/common.sh` changed"
        );
        let mut outside_git = plan(3, "sha256:x");
        outside_git.stack.commit = None;
        let mut here = plan(3, "sha256:x");
        here.stack.commit = Some("c9".into());
        assert!(differences(&outside_git, &here).is_empty());
    }

    #[test]
    fn the_same_plan_made_again_is_not_stale() {
        assert!(differences(&plan(3, "sha256:x"), &plan(3, "sha256:x")).is_empty());
    }

    #[test]
    fn each_difference_is_named() {
        let saved = plan(3, "sha256:x");
        let mut now = plan(3, "sha256:y");
        now.components[0].folder = Some("sha256:g".into());
        assert_eq!(
            differences(&saved, &now),
            [
                "the folder of `app` changed",
                "parameters of `app` changed: `db.password`",
            ]
        );
        now.state.serial = Some(4);
        assert_eq!(
            differences(&saved, &now),
            ["the state `s.state` moved from serial 3 to 4 (another run wrote it)"]
        );
        now.state.lineage = Some("m".into());
        assert_eq!(
            differences(&saved, &now)[0],
            "the state `s.state` is another one (lineage `m`, the plan's `l`)"
        );
    }

    #[test]
    fn a_moved_serial_is_narrowed_to_the_components_and_what_else_moved() {
        let saved = plan(3, "sha256:x");
        let mut now = plan(4, "sha256:y");
        // The parameters differ: the run decides per component.
        assert_eq!(narrowed(&saved, &now), Some(Vec::new()));
        now.stack.inputs[0].digest = "sha256:m".into();
        now.components[0].folder = Some("sha256:g".into());
        assert_eq!(
            narrowed(&saved, &now),
            Some(vec![
                "the file `../lib/common.sh` changed".to_string(),
                "the folder of `app` changed".to_string(),
            ])
        );
        // Another lineage, the same serial, or a plan without entries: not narrowed.
        let mut other = plan(4, "sha256:x");
        other.state.lineage = Some("m".into());
        assert_eq!(narrowed(&saved, &other), None);
        assert_eq!(narrowed(&saved, &plan(3, "sha256:y")), None);
        let mut older = plan(3, "sha256:x");
        older.components[0].entry = None;
        assert_eq!(narrowed(&older, &plan(4, "sha256:x")), None);
    }
}
