use clap::Parser;
use hub::cli::{Cli, Command};
use hub_manifest::diag::Warnings;
use std::process::ExitCode;

mod allocator;

fn main() -> ExitCode {
    allocator::tune();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    hub_manifest::diag::set_debug(cli.debug);
    // Everything hub writes from here on is masked, unless the user asked
    // to see secrets (`--reveal`). `std::env::vars` would panic on a
    // variable that is not UTF-8: those are skipped.
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    if !args.iter().any(|arg| arg == "--reveal") {
        let variables = std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        });
        hub_manifest::masked::enable(variables);
        hub_manifest::redact::learn_args(&args);
    }
    let mut warnings = Warnings::new();
    let result = match cli.command {
        Command::Elaborate(args) => hub_workflow::elaborate(args.into(), &mut warnings),
        Command::Validate(args) => hub_workflow::validate(args.into(), &mut warnings),
        Command::Cel(args) => hub_workflow::cel(args.into(), &mut warnings),
        Command::Params(args) => hub_workflow::params(args.into(), &mut warnings),
        Command::Unlock(args) => hub_workflow::unlock(args.into(), &mut warnings),
        Command::State(args) => hub_workflow::state(args.into(), &mut warnings),
        Command::Util(args) => hub_workflow::util(args.into(), &mut warnings),
        Command::Deploy(args) => hub_workflow::deploy(args.into(), &mut warnings),
        Command::Undeploy(args) => hub_workflow::undeploy(args.into(), &mut warnings),
        Command::Check(args) => hub_workflow::check(args.into(), &mut warnings),
        Command::Invoke(args) => hub_workflow::invoke(args.into(), &mut warnings),
        Command::Render(args) => hub_workflow::render_templates(args.into(), &mut warnings),
        Command::Plan(args) => hub_workflow::plan(args.into(), &mut warnings),
        Command::Graph(args) => hub_workflow::graph(args.into(), &mut warnings),
        Command::Report(args) => hub_workflow::report(args.into(), &mut warnings),
        Command::Explain(args) => hub_workflow::explain(args.into(), &mut warnings),
        Command::Version => hub::commands::version(),
        Command::Completions(args) => hub::commands::completions(args),
        Command::Man(args) => hub::commands::man::write_pages(args),
        Command::Change(args) => hub_workflow::change(args.into(), &mut warnings),
        Command::Policy(args) => hub_workflow::policy(args.into(), &mut warnings),
        Command::Run(args) => hub_workflow::run(args.into(), &mut warnings),
        Command::Pipeline(args) => hub_workflow::pipeline(args.into(), &mut warnings),
        Command::Ci(args) => hub_workflow::ci(args.into(), &mut warnings),
    };
    for warning in warnings.iter() {
        hub_manifest::console::err_line(&format!("warning: {warning}"));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(hub::Error::PlanChanges) => ExitCode::from(2),
        Err(hub::Error::CiStatus(code)) => ExitCode::from(code),
        Err(error) => {
            hub_manifest::console::err_line(&hub_workflow::render_error(&error));
            ExitCode::from(error.exit_code() as u8)
        }
    }
}

/// Clap's own message and status; under `plan --detailed-exitcode` a
/// usage error exits 1, since 2 there means "changes".
fn usage_error(error: &clap::Error) -> ExitCode {
    if let Some(flag) = repeated_list_flag(error) {
        hub_manifest::console::err_line(&format!(
            "error: `{flag}` is given more than once\n  help: give all its values to one `{flag}`, separated by commas: `{flag} a,b`"
        ));
        return ExitCode::from(error.exit_code() as u8);
    }
    match usage_without_suggestion(error) {
        Some(text) => hub_manifest::console::err_line(text.trim_end()),
        None => {
            let _ = error.print();
        }
    }
    let detailed = std::env::args().any(|a| a == "--detailed-exitcode");
    match (error.use_stderr(), detailed) {
        (true, true) => ExitCode::from(1),
        _ => ExitCode::from(error.exit_code() as u8),
    }
}

/// An unknown flag with a suggestion: clap writes the usage line as if
/// the suggested flag had been given (`Usage: hub plan --clouds <LIST>
/// <MANIFEST>...`, as if --clouds were required); the command's own usage
/// line replaces it.
fn usage_without_suggestion(error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ErrorKind};
    use clap::CommandFactory;
    if error.kind() != ErrorKind::UnknownArgument || error.get(ContextKind::SuggestedArg).is_none()
    {
        return None;
    }
    let mut command = Cli::command();
    command.build();
    let mut current = &command;
    for arg in std::env::args().skip(1) {
        match current.find_subcommand(&arg) {
            Some(sub) => current = sub,
            None if arg.starts_with('-') => continue,
            None => break,
        }
    }
    let usage = current.clone().render_usage().to_string();
    let text = error.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(|line| match line.starts_with("Usage: ") {
            true => usage.as_str(),
            false => line,
        })
        .collect();
    Some(lines.join("\n"))
}

/// A flag that takes a comma-separated list (`elaborate -o a,b`) given
/// twice: clap's own message does not say how to give several values.
fn repeated_list_flag(error: &clap::Error) -> Option<&'static str> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::ArgumentConflict {
        return None;
    }
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let Some(ContextValue::String(prior)) = error.get(ContextKind::PriorArg) else {
        return None;
    };
    (arg == prior && arg == "--output <PATHS>").then_some("-o")
}
