//! `make_plan` in process, as `hub ci` calls it: a typed request in, the
//! plan, its saved form and the policies' results out, nothing printed.

use super::make_plan;
use crate::request::{
    ChangeArgs, CommonRunArgs, GuessArgs, LockTimeoutArgs, PlanArgs, PolicyArgs, ReplaceArgs,
    RunArgs, SelectionArgs, StackArgs, StateArgs,
};
use hub_manifest::diag::Warnings;
use hub_view::preview::Action;
use std::path::{Path, PathBuf};

/// `hub plan fixtures/demo/hub.yaml fixtures/demo/params.yaml -n`, as a
/// request.
fn demo_plan(undeploy: bool) -> PlanArgs {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo");
    PlanArgs {
        plan_steps: false,
        common: CommonRunArgs {
            stack: StackArgs {
                manifest: vec![demo.join("hub.yaml"), demo.join("params.yaml")],
                environment: Vec::new(),
                base_dir: None,
                lenient: false,
                strict: false,
                clouds: Vec::new(),
            },
            state: StateArgs {
                state: String::new(),
                no_state: true,
                lock: LockTimeoutArgs {
                    lock_timeout: std::time::Duration::ZERO,
                },
            },
            selection: SelectionArgs {
                components: Vec::new(),
                affected: None,
                with_deps: false,
                with_dependents: false,
                offset: None,
                limit: None,
                status: Vec::new(),
            },
            run: RunArgs {
                force: false,
                reveal: false,
                jobs: 1,
                report: None,
            },
            policy: PolicyArgs {
                policies: Vec::new(),
            },
        },
        guess: GuessArgs { guess: true },
        replace: ReplaceArgs {
            replace: Vec::new(),
        },
        changed: false,
        prune: false,
        undeploy,
        out: None::<PathBuf>,
        format: crate::request::OutputFormat::Text,
        detailed_exitcode: false,
        verbose: false,
        change: ChangeArgs::default(),
    }
}

fn names_and_actions(args: &PlanArgs, save: bool) -> (Vec<(String, Action)>, bool) {
    let mut warnings = Warnings::default();
    let made = match make_plan(args, save, &mut warnings) {
        Ok(made) => made,
        Err(error) => panic!("the demo stack plans: {error}"),
    };
    assert!(made.policies.refusal().is_none() && made.policies.failure().is_none());
    let components = made
        .preview
        .components
        .iter()
        .map(|c| (c.name.clone(), c.action))
        .collect();
    let saved = match made.saved {
        Some(Ok(_)) => true,
        Some(Err(error)) => panic!("the saved form is made: {error}"),
        None => false,
    };
    (components, saved)
}

/// Without a state every component of the demo is created, in the order
/// of its `depends`; a saved form is made only when asked for.
#[test]
fn a_deploy_plan_creates_every_component_and_is_saved_when_asked() {
    let args = demo_plan(false);
    let (components, saved) = names_and_actions(&args, false);
    let names: Vec<&str> = components.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.starts_with(&["network", "database", "app"]));
    assert!(components
        .iter()
        .filter(|(name, _)| name != "monitoring")
        .all(|(_, action)| *action == Action::Create));
    assert!(!saved);
    let (again, saved) = names_and_actions(&args, true);
    assert_eq!(again, components);
    assert!(saved);
}

/// An undeploy has no saved form, even when a change asks for one; with
/// no state, nothing is deployed to take down.
#[test]
fn an_undeploy_plan_has_no_saved_form() {
    let (components, saved) = names_and_actions(&demo_plan(true), true);
    assert!(!saved);
    assert!(components
        .iter()
        .all(|(_, action)| *action != Action::Create && *action != Action::Update));
}
