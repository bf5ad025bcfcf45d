//! A merge queue's entry: the plan of the queue's commit compared, one
//! component at a time, with the plan approved for the change: which
//! components run, each one's action, its parameters, the digest of its
//! folder, the planned outputs it reads (`--plan-steps`), and the files
//! outside the components' folders that the plan read. Pure code on two
//! saved plans; secret values are compared by their digests and never
//! named, only the parameter is. Names come from the stack's files (the
//! pull request's): each is shown inert (no control character), and the
//! comment quotes them as code.

use hub_plan::plan::saved::stale::differing_files;
use hub_plan::plan::saved::{PlannedComponent, PlannedFile, SavedPlan};
use hub_state::changes::inert;
use std::collections::BTreeMap;

/// One thing that differs between the approved plan and the queue's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Difference {
    /// The component whose plan differs; `None` for a file the whole
    /// stack read.
    pub(super) component: Option<String>,
    /// What differs: the input the component reads, or its plan.
    pub(super) input: String,
}

impl Difference {
    fn of(component: &str, input: String) -> Self {
        Difference {
            component: Some(component.to_string()),
            input,
        }
    }

    /// `` `app`: its parameter `db.host` differs ``.
    pub(super) fn line(&self) -> String {
        match &self.component {
            Some(name) => format!("`{}`: {}", inert(name), self.input),
            None => self.input.clone(),
        }
    }
}

/// What differs between the `approved` plan and the `queue`'s plan; empty
/// when every component plans as it was approved.
pub(super) fn differences(approved: &SavedPlan, queue: &SavedPlan) -> Vec<Difference> {
    let mut found = Vec::new();
    let now: BTreeMap<&str, &PlannedComponent> = queue
        .components
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    for before in &approved.components {
        match now.get(before.name.as_str()) {
            Some(after) => found.extend(component(before, after)),
            None => found.push(Difference::of(
                &before.name,
                "it is not in the plan of the queue's commit".into(),
            )),
        }
    }
    for after in &queue.components {
        if !approved.components.iter().any(|c| c.name == after.name) {
            found.push(Difference::of(
                &after.name,
                format!(
                    "it is not in the approved plan, and the queue's commit would {} it",
                    after.action.as_str()
                ),
            ));
        }
    }
    found.extend(files(&approved.stack.inputs, &queue.stack.inputs));
    found
}

/// What differs in one component's plan.
fn component(before: &PlannedComponent, after: &PlannedComponent) -> Vec<Difference> {
    let name = &before.name;
    let mut found = Vec::new();
    if before.action != after.action {
        found.push(Difference::of(
            name,
            format!(
                "it would {} (approved: {})",
                after.action.as_str(),
                before.action.as_str()
            ),
        ));
    }
    if before.folder != after.folder || before.dir != after.dir {
        found.push(Difference::of(
            name,
            "the files of its folder differ".into(),
        ));
    }
    let was: BTreeMap<&str, &str> = before
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    let is: BTreeMap<&str, &str> = after
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    for (parameter, value) in &was {
        match is.get(parameter) {
            Some(now) if now == value => {}
            Some(_) => found.push(Difference::of(
                name,
                format!("its parameter `{}` differs", inert(parameter)),
            )),
            None => found.push(Difference::of(
                name,
                format!("its parameter `{}` is gone", inert(parameter)),
            )),
        }
    }
    for parameter in is.keys().filter(|p| !was.contains_key(*p)) {
        found.push(Difference::of(
            name,
            format!("its parameter `{}` is new", inert(parameter)),
        ));
    }
    for read in &after.reads {
        let same = before.reads.iter().any(|r| {
            r.component == read.component && r.output == read.output && r.digest == read.digest
        });
        if !same {
            found.push(Difference::of(
                name,
                format!(
                    "the output `{}` of `{}` it reads differs",
                    inert(&read.output),
                    inert(&read.component)
                ),
            ));
        }
    }
    found
}

/// The files outside the components' folders the plans read.
fn files(before: &[PlannedFile], after: &[PlannedFile]) -> Vec<Difference> {
    differing_files(before, after)
        .into_iter()
        .map(|(path, _, _)| Difference {
            component: None,
            input: format!("the file `{}` the stack reads differs", inert(path)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_plan::plan::saved::{
        PlanAction, PlannedArguments, PlannedParameter, PlannedStack, PlannedState,
    };

    fn parameter(name: &str, value: &str) -> PlannedParameter {
        PlannedParameter {
            name: name.into(),
            value: value.into(),
            secret: false,
        }
    }

    fn plan(host: &str, folder: &str) -> SavedPlan {
        SavedPlan {
            version: 3,
            created: "2026-01-01T00:00:00Z".into(),
            stack: PlannedStack {
                name: "s".into(),
                files: vec!["hub.yaml".into()],
                digest: "sha256:a".into(),
                commit: Some("c1".into()),
                inputs: Vec::new(),
            },
            state: PlannedState {
                locations: vec!["s.state".into()],
                read: Some("s.state".into()),
                lineage: Some("l".into()),
                serial: Some(1),
            },
            arguments: PlannedArguments::default(),
            components: vec![PlannedComponent {
                name: "app".into(),
                action: PlanAction::Update,
                reasons: Vec::new(),
                folder: Some(folder.into()),
                parameters: vec![parameter("db.host", host), parameter("replicas", "3")],
                dir: None,
                reads: Vec::new(),
                entry: None,
            }],
            policies: Vec::new(),
            change: Some("42".into()),
        }
    }

    #[test]
    fn the_same_components_planned_the_same_way_match_whatever_the_commit_and_state() {
        let mut queue = plan("db.10", "sha256:f");
        queue.stack.commit = Some("c2".into());
        queue.state.serial = Some(7);
        queue.stack.digest = "sha256:b".into();
        assert!(differences(&plan("db.10", "sha256:f"), &queue).is_empty());
    }

    #[test]
    fn each_component_and_input_that_differs_is_named() {
        let approved = plan("db.10", "sha256:f");
        let mut queue = plan("db.11", "sha256:g");
        queue.components[0].action = PlanAction::Create;
        queue.components[0].parameters.push(parameter("tier", "ha"));
        let mut extra = queue.components[0].clone();
        extra.name = "cache".into();
        queue.components.push(extra);
        queue.stack.inputs.push(PlannedFile {
            path: "../lib/x.sh".into(),
            digest: "sha256:x".into(),
        });
        let lines: Vec<String> = differences(&approved, &queue)
            .iter()
            .map(Difference::line)
            .collect();
        assert_eq!(
            lines,
            [
                "`app`: it would create (approved: update)",
                "`app`: the files of its folder differ",
                "`app`: its parameter `db.host` differs",
                "`app`: its parameter `tier` is new",
                "`cache`: it is not in the approved plan, and the queue's commit would create it",
                "the file `../lib/x.sh` the stack reads differs",
            ]
        );
        let gone = differences(&queue, &approved);
        assert!(gone.contains(&Difference::of(
            "cache",
            "it is not in the plan of the queue's commit".into()
        )));
    }
}
