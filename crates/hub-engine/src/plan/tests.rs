mod conditions {
    use crate::options::RunOptions;
    use crate::plan::{prepare, Action, Condition, Plan};
    use hub_manifest::diag::Warnings;
    use hub_plan::order::plan::Verb;
    use hub_plan::source::stack::Stack;
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
