//! The selection of a run from its flags: `-c` entries, folder entries
//! resolved to the components in them, and `--affected` asked of git.

use crate::error::Error;
use crate::request::SelectionArgs;
use hub_plan::order::schedule::{Chosen, Schedule, Selection};
use hub_plan::source::stack::Stack;
use hub_plan::source::{affected, folders};
use hub_plan::Verb;
use std::path::Path;

/// The selection `args` ask for on `stack`.
pub(crate) fn resolve(
    stack: &Stack,
    args: &SelectionArgs,
    components_base: Option<&Path>,
) -> Result<Selection, Error> {
    let given: Vec<String> = args
        .components
        .iter()
        .filter(|c| !c.is_empty())
        .cloned()
        .collect();
    let components = match given.iter().any(|c| folders::is_folder(c)) {
        true => folders::resolve(stack, &given, &current_dir()?, components_base)?,
        false => given,
    };
    Ok(Selection {
        components,
        offset: args.offset.clone(),
        limit: args.limit.clone(),
        with_deps: args.with_deps,
        with_dependents: args.with_dependents,
        affected: match &args.affected {
            Some(base) => Some(affected_components(stack, base, components_base)?),
            None => None,
        },
    })
}

/// The components `--affected[=BASE]` selects, each with why.
pub(crate) fn affected_components(
    stack: &Stack,
    base: &str,
    components_base: Option<&Path>,
) -> Result<Vec<Chosen>, Error> {
    let order = stack.validated_order()?;
    let everything = Schedule::new(
        &stack.elaborated,
        order,
        Verb::Deploy,
        &Selection::default(),
        None,
    )
    .map_err(hub_engine::run::error::EngineError::from)?;
    let request = affected::Request {
        base: Some(base),
        environment_base: std::env::var("HUB_GIT_BASE").ok(),
        components_base,
    };
    Ok(affected::affected(stack, &everything, &request)?)
}

fn current_dir() -> Result<std::path::PathBuf, Error> {
    std::env::current_dir().map_err(|error| Error::Usage {
        flag: "-c",
        value: ".".into(),
        reason: format!("the current folder cannot be read: {error}"),
    })
}
