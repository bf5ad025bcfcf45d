use super::*;
use crate::order::schedule;
use hub_params::{ExpandedParam, Locked, LockedParam, Origin};
use hub_state::StateParameter;
use std::path::PathBuf;
use yaml_serde::Value;

fn removed(name: &str) -> prune::Removed {
    prune::Removed {
        name: name.into(),
        dir: Some(PathBuf::from(format!("/stack/{name}"))),
        depends: Vec::new(),
        status: "deployed".into(),
    }
}

#[test]
fn a_removed_component_keeps_the_parameters_its_undeploy_gets() {
    let mut state = State::default();
    state.component_mut("old").parameters = vec![
        StateParameter::new("old.size", Value::from("small")),
        StateParameter::new("old.password", Value::from("hunter2")),
    ];
    let shown = RemovedPlan::of(&removed("old"), Some(&state), &Redactor::default());
    let kept: Vec<(&str, Option<&str>, bool)> = shown
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_deref(), p.digest.is_some()))
        .collect();
    assert_eq!(
        kept,
        [
            ("old.size", Some("small"), false),
            ("old.password", Some(hub_manifest::redact::MASK), true),
        ]
    );
    assert_eq!(
        shown.parameters[1].digest.as_deref(),
        Some(text_digest("hunter2").as_str())
    );
    let revealed = RemovedPlan::of(&removed("old"), Some(&state), &Redactor::new(true));
    assert_eq!(revealed.parameters[1].value.as_deref(), Some("hunter2"));
    assert_eq!(revealed.parameters[1].digest, shown.parameters[1].digest);
}

#[test]
fn conditions_read_expanded_parameters_before_stack_parameters() {
    let tuning = schedule::Tuning::parse(&["f.on:c".into()]);
    let mut locked = Locked::default();
    locked.insert(LockedParam::new(
        "f.on",
        "",
        Some(Value::String("false".into())),
        Origin::Value,
    ));
    let off = schedule::component_conditions(&tuning, "c", None, &locked);
    assert_eq!(off.skip_reason().as_deref(), Some("`f.on` is off"));
    assert_eq!(off.wildcard_warning(), None);
    let expanded = [ExpandedParam {
        name: "f.on".into(),
        value: Some(Value::String("true".into())),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }];
    let on = schedule::component_conditions(&tuning, "c", Some(&expanded), &locked);
    assert_eq!(on.skip_reason(), None);
    let everywhere = schedule::Tuning::parse(&["f.on".into()]);
    let wildcard = schedule::component_conditions(&everywhere, "c", None, &locked);
    assert!(wildcard
        .wildcard_warning()
        .is_some_and(|w| w.contains("`f.on:<component>`")));
}

mod conditions {
    use crate::options::RunOptions;
    use crate::order::schedule::Verb;
    use crate::plan::{prepare, Action, Condition, Plan};
    use crate::source::stack::Stack;
    use hub_manifest::diag::Warnings;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    /// `a`, then `b` which depends on `a`, each in a folder of its own.
    fn stack(root: &Path) -> Stack {
        let (a, b) = (root.join("a"), root.join("b"));
        let manifest = format!(
            "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n  \
             - {{name: a, source: {{dir: {}}}}}\n  - {{name: b, source: {{dir: {}}}, depends: [a]}}\n",
            a.display(),
            b.display()
        );
        std::fs::write(root.join("hub.yaml"), manifest).unwrap();
        for name in ["a", "b"] {
            let folder = root.join(name);
            std::fs::create_dir_all(&folder).unwrap();
            let component = format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n");
            std::fs::write(folder.join("hub-component.yaml"), component).unwrap();
            for verb in ["deploy", "undeploy"] {
                let script = folder.join(format!("{verb}.sh"));
                std::fs::write(&script, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let overrides = indexmap::IndexMap::new();
        let mut warnings = Warnings::default();
        Stack::load(
            &root.join("hub.yaml"),
            &[],
            Some(root),
            &overrides,
            &mut warnings,
        )
        .unwrap()
    }

    fn made(stack: &Stack, options: &RunOptions) -> Plan {
        let options = RunOptions {
            verb: Some(Verb::Deploy),
            concurrency: 1,
            ..options.clone()
        };
        prepare::plan(stack, &options, Vec::new(), &mut Warnings::default()).unwrap()
    }

    #[test]
    fn a_dependent_is_not_run_if_its_dependency_fails() {
        let dir = tempfile::tempdir().unwrap();
        let plan = made(&stack(dir.path()), &RunOptions::default());
        let (a, b) = (&plan.components[0], &plan.components[1]);
        assert_eq!((a.action, b.action), (Action::Create, Action::Create));
        assert!(a.conditions.is_empty(), "{:?}", a.conditions);
        assert_eq!(
            b.conditions,
            [
                Condition::SkippedIfDependencyFails(vec!["a".into()]),
                Condition::OutputsKnownAtRunTime
            ]
        );
        let execution = b.execution.as_ref().unwrap();
        assert_eq!(execution.action, Action::Create);
        assert!(!execution.unless_inputs_change);
    }

    #[test]
    fn conditions_say_what_they_wait_for() {
        let condition = Condition::SkippedIfDependencyFails(vec!["a".into(), "b".into()]);
        assert_eq!(condition.to_string(), "not run if `a` or `b` fails");
    }
}
