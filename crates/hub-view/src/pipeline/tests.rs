//! The writers of [`super`] on pipelines made by hand: names that no
//! elaborated stack would hold (an elaborated file or a saved plan given
//! as is), and values that YAML must carry as they are.

use super::model::{Grouping, Job, Pipeline, PipelineError, Runner, Settings, Target};
use hub_plan::plan::Action;
use hub_plan::Verb;

fn pipeline(target: Target, stack: &str, component: &str, runner: Runner) -> Pipeline {
    Pipeline {
        stack: stack.to_string(),
        verb: Verb::Deploy,
        settings: Settings {
            target,
            grouping: Grouping::Components,
            hub: "hub".into(),
            state: "s.state".into(),
            plan_file: "hub.plan".into(),
            plan_arguments: Some(vec!["hub.yaml".into()]),
            stack_arguments: vec!["hub.yaml".into()],
            tags: Vec::new(),
            image: None,
            variables: vec!["TOKEN".into()],
        },
        jobs: vec![Job {
            component: component.to_string(),
            action: Action::Create,
            reason: Some("never deployed".into()),
            needs: Vec::new(),
            runner: runner.clone(),
            wave: 0,
        }],
        left_out: Vec::new(),
        runner,
        waves: 1,
        serial: Some(7),
    }
}

fn image() -> Runner {
    Runner {
        image: Some("registry/hub:1".into()),
        ..Runner::default()
    }
}

const TARGETS: [Target; 3] = [Target::Gitlab, Target::Github, Target::Argo];

#[test]
fn names_with_line_breaks_or_expressions_are_refused_by_every_target() {
    for target in TARGETS {
        for (stack, component) in [
            ("shop\rinjected:", "c"),
            ("shop\u{2028}x", "c"),
            ("shop", "c${{ secrets.X }}"),
            ("shop", "a,b"),
            ("shop", "c\nx"),
        ] {
            let error = super::render(&pipeline(target, stack, component, image()))
                .expect_err(&format!("{target:?} {stack:?} {component:?}"));
            assert!(matches!(error, PipelineError::BadName { .. }), "{error}");
        }
        let tag = Runner {
            tags: vec!["${{ secrets.X }}".into()],
            ..image()
        };
        let error = super::render(&pipeline(target, "shop", "c", tag)).expect_err("tag");
        assert!(error.to_string().contains("a runner tag"), "{error}");
    }
}

#[test]
fn values_are_written_escaped_and_read_back_as_they_were() {
    let value = "1\rinjected:\r  script: [x]\u{2028}y\u{85}z # w";
    let runner = Runner {
        env: [("NOTE".to_string(), value.to_string())]
            .into_iter()
            .collect(),
        tags: vec!["gpu,large".into()],
        ..image()
    };
    for target in TARGETS {
        let text = super::render(&pipeline(target, "shop", "c", runner.clone())).expect("written");
        assert!(
            !text.contains(['\r', '\u{2028}', '\u{85}']),
            "{target:?}: {text}"
        );
        let read: yaml_serde::Value = yaml_serde::from_str(&text).expect("YAML");
        let env = match target {
            Target::Gitlab => read["deploy-c"]["variables"]["NOTE"].clone(),
            Target::Github => read["jobs"]["deploy-c"]["env"]["NOTE"].clone(),
            Target::Argo => read["spec"]["templates"][2]["container"]["env"][0]["value"].clone(),
        };
        assert_eq!(env.as_str(), Some(value), "{target:?}");
    }
}

#[test]
fn github_run_lines_never_hold_an_expression() {
    let mut given = pipeline(Target::Github, "shop", "c", image());
    given.settings.plan_file = "${{ secrets.X }}.plan".into();
    let error = super::render(&given).expect_err("an expression");
    assert!(matches!(error, PipelineError::Expression { .. }), "{error}");
}

#[test]
fn comments_are_hub_s_own_text() {
    for target in TARGETS {
        let text = super::render(&pipeline(target, "shop-name", "component-name", image()))
            .expect("written");
        for line in text.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(
                !line.contains("shop-name") && !line.contains("component-name"),
                "{target:?}: {line}"
            );
        }
    }
}
