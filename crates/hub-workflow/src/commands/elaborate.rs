//! `hub elaborate`: a stack and its parameters written as one elaborated file.

use super::common::{parse_overrides, refuse_near_typos, split_list};
use super::output::write_stdout;
use crate::error::Error;
use crate::request::ElaborateArgs;
use hub_elaborate::{self as elaborate, Options, StateSource};
use hub_manifest::diag::Warnings;
use hub_manifest::{render_elaborated_with, write_output_as};
use std::path::{Path, PathBuf};

pub fn elaborate(args: ElaborateArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let command = elaborate_command(&args);
    let options = Options {
        stack: args.stack,
        params: args.params,
        overrides: parse_overrides(&args.environment)?,
        base_dir: args.base_dir,
        platform_provides: split_list(&args.platform_provides),
        env_name: std::env::var("ENV").ok(),
        state: args
            .state
            .as_deref()
            .and_then(state_to_read)
            .map(|path| StateSource {
                path,
                use_stack_parameters: args.state_stack_parameters,
            }),
    };
    let elaborated = elaborate::elaborate(&options, warnings)?;
    refuse_near_typos(warnings, args.strict, args.lenient)?;
    let text = render_elaborated_with(&elaborated, command.as_deref())?;
    let private = !options.overrides.is_empty()
        || options.state.is_some()
        || holds_secret_parameter(&elaborated);
    for target in args.output.split(',').filter(|t| !t.is_empty()) {
        if target == "-" {
            write_stdout(text.as_bytes())?;
        } else {
            let path = PathBuf::from(target);
            write_output_as(&path, text.as_bytes(), args.compressed, private)
                .map_err(|source| Error::Write { path, source })?;
            hub_manifest::console::err_line(&written(&elaborated, target));
        }
    }
    Ok(())
}

/// The confirmation of a file written: `hub: elaborated stack `demo` (4
/// components) into hub.yaml.elaborate`.
fn written(elaborated: &hub_manifest::Elaborated, target: &str) -> String {
    let count = elaborated.components.len();
    let plural = if count == 1 { "" } else { "s" };
    format!(
        "hub: elaborated stack `{}` ({count} component{plural}) into {target}",
        elaborated.stack.meta.name
    )
}

/// Whether a parameter of the elaborated stack or of one of its
/// components has a value and a name that looks secret.
fn holds_secret_parameter(elaborated: &hub_manifest::Elaborated) -> bool {
    fn any_secret(params: &[hub_manifest::Parameter]) -> bool {
        params.iter().any(|p| {
            let valued = p.value.is_some() || p.default_value().is_some();
            (valued && hub_manifest::secrets::looks_secret(&p.name)) || any_secret(p.parameters())
        })
    }
    std::iter::once(&elaborated.stack)
        .chain(&elaborated.components)
        .any(|doc| any_secret(&doc.parameters))
}

/// The command that makes the same elaborated file again from any folder
/// (paths made absolute, `ENV` first when set); `None` when it cannot be
/// given: `-e` values are not recorded, and `-o -` went wherever stdout did.
fn elaborate_command(args: &ElaborateArgs) -> Option<Vec<String>> {
    let outputs: Vec<&str> = args.output.split(',').filter(|t| !t.is_empty()).collect();
    if !args.environment.is_empty() || outputs.contains(&"-") {
        return None;
    }
    let path = |p: &Path| hub_elaborate::paths::absolute(p).display().to_string();
    let mut command: Vec<String> = std::env::var("ENV")
        .ok()
        .filter(|e| !e.is_empty())
        .map(|e| format!("ENV={e}"))
        .into_iter()
        .collect();
    command.extend(["hub".into(), "elaborate".into(), path(&args.stack)]);
    command.extend(args.params.iter().map(|p| path(p)));
    let outputs: Vec<String> = outputs.iter().map(|o| path(Path::new(o))).collect();
    command.extend(["-o".into(), outputs.join(",")]);
    if let Some(dir) = &args.base_dir {
        command.extend(["-b".into(), path(dir)]);
    }
    let provides = split_list(&args.platform_provides);
    if !provides.is_empty() {
        command.extend(["-p".into(), provides.join(",")]);
    }
    if let Some(states) = &args.state {
        let states: Vec<String> = split_list(std::slice::from_ref(states))
            .iter()
            .map(|state| path(Path::new(state)))
            .collect();
        command.extend(["-s".into(), states.join(",")]);
        if !args.state_stack_parameters {
            command.push("--state-stack-parameters=false".into());
        }
    }
    if args.compressed {
        command.push("--compressed".into());
    }
    Some(command)
}

/// The state `elaborate -s a,b` reads: the newest of the locations that
/// exist, as a deploy chooses; the first when none does (reading it then
/// says so).
fn state_to_read(list: &str) -> Option<PathBuf> {
    let paths: Vec<PathBuf> = split_list(&[list.to_string()])
        .into_iter()
        .map(PathBuf::from)
        .collect();
    hub_state::locations::to_read(&paths)
        .map(Path::to_path_buf)
        .or_else(|| paths.first().cloned())
}
