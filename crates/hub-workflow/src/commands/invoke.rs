//! `hub invoke` and `hub render`: one component's verb, or its templates,
//! outside a deploy.

use super::common::{
    flag_or_env, hub_executable, install_interrupts, non_empty_env, parse_os_environment,
    parse_overrides, parse_pairs,
};
use crate::error::Error;
use hub_manifest::diag::Warnings;
use indexmap::IndexMap;
use std::path::PathBuf;

/// `hub invoke COMPONENT VERB`.
pub fn invoke(args: crate::request::InvokeArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::run::invoke::{invoke, InvokeOptions};
    let exported = parse_overrides(&args.environment)?;
    let elaborate = flag_or_env(args.elaborate, "-m", "HUB_ELABORATE")?;
    let state = flag_or_env(args.state, "-s", "HUB_STATE")?;
    let stack = hub_plan::source::stack::Stack::load(
        &elaborate,
        &[],
        args.base_dir.as_deref(),
        &exported,
        warnings,
    )
    .map_err(Error::from)?;
    let options = InvokeOptions {
        component: args.component,
        verb: args.verb,
        state,
        components_base_dir: args.base_dir,
        os_environment: parse_os_environment(&args.os_environment)?,
        exported,
        force: args.force,
        reveal: args.reveal,
        timeout: args.timeout,
    };
    let interrupts = install_interrupts()?;
    let environment: Vec<(String, String)> = std::env::vars().collect();
    invoke(
        &stack,
        &options,
        &environment,
        hub_executable(),
        &hub_plan::outcome::lines::ConsoleSink,
        &interrupts,
        warnings,
    )
    .map_err(Error::from)
}

/// `hub render GLOB...`.
pub fn render_templates(
    args: crate::request::RenderArgs,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_engine::run::render::{render, RenderOptions};
    let additional = parse_pairs("-a", &args.additional)?;
    let state = flag_or_env(args.state, "-s", "HUB_STATE")?;
    let elaborate = args
        .elaborate
        .or_else(|| non_empty_env("HUB_ELABORATE").map(PathBuf::from));
    let component = args.component.or_else(|| non_empty_env("HUB_COMPONENT"));
    let stack = match &elaborate {
        Some(path) => Some(
            hub_plan::source::stack::Stack::load(
                path,
                &[],
                args.base_dir.as_deref(),
                &IndexMap::new(),
                warnings,
            )
            .map_err(Error::from)?,
        ),
        _ => None,
    };
    let options = RenderOptions {
        globs: args.globs,
        kind: args.kind,
        additional,
        states: state
            .to_string_lossy()
            .split(',')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect(),
        component: component.filter(|c| !c.is_empty()),
    };
    let dir = std::env::current_dir().map_err(|source| Error::Write {
        path: PathBuf::from("."),
        source,
    })?;
    let environment: Vec<(String, String)> = std::env::vars().collect();
    render(stack.as_ref(), &options, &dir, &environment, warnings)?;
    Ok(())
}
