//! `hub graph`: the dependency graph of a stack.

use super::common::parse_overrides;
use super::load_stack;
use super::output::write_stdout;
use crate::error::Error;
use hub_manifest::diag::Warnings;

/// `hub graph`: the dependency graph of a stack.
pub fn graph(args: crate::request::GraphArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::run::error::EngineError;
    use hub_plan::order::{Schedule, Selection};
    use hub_plan::Verb;
    use hub_view::graph::{self, Format, Graph};
    let format = Format::from(args.format);
    let overrides = parse_overrides(&args.environment)?;
    let stack = load_stack(
        &args.manifest,
        args.base_dir.as_deref(),
        &overrides,
        warnings,
    )?;
    let elaborated = &stack.elaborated;
    let order = stack.validated_order()?;
    let selection = Selection {
        affected: match &args.affected {
            Some(base) => Some(super::selection::affected_components(
                &stack,
                base,
                args.base_dir.as_deref(),
            )?),
            None => None,
        },
        ..Selection::default()
    };
    let plan = Schedule::new(elaborated, order, Verb::Deploy, &selection, None)
        .map_err(EngineError::from)?;
    // Read-only: no lock is taken and nothing is written.
    let state = match &args.state {
        Some(path) => Some(hub_state::read(path, warnings)?),
        None => None,
    };
    let status =
        |name: &str| graph::component_status(state.as_ref().and_then(Option::as_ref), name);
    let status: Option<&dyn Fn(&str) -> String> = state.is_some().then_some(&status);
    let mut drawn = Graph::new(&plan, elaborated, status);
    if args.plan_steps {
        for (name, after) in deferred(&args, warnings)? {
            drawn.defer(&name, &after);
        }
    }
    let text = graph::render(&drawn, format);
    write_stdout(text.as_bytes())
}

/// `--plan-steps`: the components a plan through the graph defers, each
/// with what it waits for (the plan `hub plan --plan-steps` makes).
fn deferred(
    args: &crate::request::GraphArgs,
    warnings: &mut Warnings,
) -> Result<Vec<(String, Vec<String>)>, Error> {
    use crate::request::*;
    let plan_args = PlanArgs {
        common: CommonRunArgs {
            stack: StackArgs {
                manifest: args.manifest.clone(),
                environment: args.environment.clone(),
                base_dir: args.base_dir.clone(),
                lenient: false,
                strict: false,
                clouds: Vec::new(),
            },
            state: StateArgs {
                state: args
                    .state
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                no_state: args.state.is_none(),
                lock: LockTimeoutArgs {
                    lock_timeout: std::time::Duration::ZERO,
                },
            },
            selection: SelectionArgs {
                components: Vec::new(),
                affected: args.affected.clone(),
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
        undeploy: false,
        out: None,
        format: OutputFormat::Text,
        detailed_exitcode: false,
        verbose: false,
        plan_steps: true,
        change: ChangeArgs::default(),
    };
    let made = super::plan::make_plan(&plan_args, false, warnings)?;
    Ok(made
        .preview
        .components
        .iter()
        .filter_map(|c| Some((c.name.clone(), c.through.deferred.as_ref()?.after.clone())))
        .collect())
}
