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
    let text = graph::render(&Graph::new(&plan, elaborated, status), format);
    write_stdout(text.as_bytes())
}
