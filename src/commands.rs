//! The edge between the command line and the library: turns parsed
//! arguments into validated options, runs the step, writes the result.

use crate::cli::{CelArgs, ElaborateArgs, ParamsArgs, UnlockArgs, ValidateArgs};
use crate::error::Error;
use hub_elaborate::{self as elaborate, Options, StateSource};
use hub_manifest::diag::Warnings;
use hub_manifest::{render_elaborated_with, write_output_as};
use indexmap::IndexMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

pub mod man;
pub mod params_report;
pub mod state;

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
    refuse_near_typos(warnings, args.lenient)?;
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
        }
    }
    Ok(())
}

/// Whether a parameter of the elaborated stack or of one of its
/// components has a value and a name that looks secret.
fn holds_secret_parameter(elaborated: &hub_manifest::Elaborated) -> bool {
    fn any_secret(params: &[hub_manifest::Parameter]) -> bool {
        params.iter().any(|p| {
            let valued = p.value.is_some() || p.default.is_some();
            (valued && hub_manifest::secrets::looks_secret(&p.name)) || any_secret(&p.parameters)
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

/// Unknown keys within a typo of a known key stop `elaborate`, `deploy`
/// and `plan` before anything is written, unless `--lenient`.
fn refuse_near_typos(warnings: &mut Warnings, lenient: bool) -> Result<(), Error> {
    if lenient {
        return Ok(());
    }
    let typos = warnings.take_near_typos();
    if typos.is_empty() {
        return Ok(());
    }
    Err(hub_manifest::ManifestError::NearTypos { typos }.into())
}

/// Prints each file's findings and a one-line summary to stderr; fails
/// when any file has an error.
pub fn validate(args: ValidateArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    use hub_manifest::validate::{validate_files, Severity};
    let reports = validate_files(&args.files);
    let mut err = std::io::stderr().lock();
    for report in &reports {
        for finding in &report.findings {
            let text = match finding.severity {
                Severity::Warning => format!("warning: {}: {}", finding.location, finding.message),
                Severity::Error => render(
                    &finding.message,
                    Some(finding.location.clone()),
                    finding.hint.clone(),
                ),
            };
            let _ = writeln!(err, "{text}");
        }
        let _ = writeln!(err, "{}", validate_summary(report));
    }
    let failed = reports.iter().filter(|r| !r.is_valid()).count();
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::Invalid {
            failed,
            total: reports.len(),
        })
    }
}

/// `ok: hub.yaml (stack, 2 warnings)` or `invalid: hub.yaml (stack, 1 error)`.
fn validate_summary(report: &hub_manifest::validate::FileReport) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut details = Vec::new();
    if let Some(document) = report.document {
        details.push(document.label().to_string());
    }
    if report.errors() > 0 {
        details.push(plural(report.errors(), "error"));
    }
    if report.warnings() > 0 {
        details.push(plural(report.warnings(), "warning"));
    }
    let verdict = if report.is_valid() { "ok" } else { "invalid" };
    let path = report.path.display();
    if details.is_empty() {
        format!("{verdict}: {path}")
    } else {
        format!("{verdict}: {path} ({})", details.join(", "))
    }
}

/// `hub cel`: evaluates and prints one expression (or, with -y, a value).
pub fn cel(args: CelArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_params::{evaluate_cel, evaluate_template, parse_bindings, ParamsError};
    let bindings = parse_bindings(&args.bindings)?;
    let text = if args.yaml {
        let (text, read_as_cel) =
            evaluate_template(&args.expression, &bindings).map_err(ParamsError::from)?;
        for source in read_as_cel {
            warnings.warn(
                None,
                format!("`${{{source}}}` is not a CEL substitution; evaluated as CEL"),
            );
        }
        text
    } else {
        evaluate_cel(&args.expression, &bindings).map_err(ParamsError::from)?
    };
    write_stdout(format!("{text}\n").as_bytes())
}

/// `hub params`: prints locked stack parameters or one component's.
pub fn params(args: ParamsArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_params::{interactive, Prompter, TerminalPrompter};
    use params_report::{params_report, ReportOptions};
    let overrides = parse_overrides(&args.environment)?;
    let environment = |name: &str| std::env::var(name).ok();
    let mut terminal = TerminalPrompter;
    let prompter: Option<&mut dyn Prompter> = if interactive() {
        Some(&mut terminal)
    } else {
        None
    };
    let options = ReportOptions {
        elaborated: &args.elaborated,
        state: args.state.as_deref(),
        overrides: &overrides,
        environment: &environment,
        prompter,
        component: args.component.as_deref(),
        json: args.format == "json",
        redactor: hub_manifest::redact::Redactor::new(args.reveal),
    };
    let text = params_report(options, warnings)?;
    write_stdout(text.as_bytes())
}

/// `hub unlock`: removes a stale lock (or, with --force, any lock) and
/// says on stderr what it removed.
pub fn unlock(args: UnlockArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    if args.force && !args.yes {
        confirm_unlocking_a_live_run(&args.state)?;
    }
    if hub_state::is_remote(&args.state) {
        let removed = hub_state::remote::lock::unlock(&args.state, args.force, args.id.as_deref())?;
        let _ = writeln!(std::io::stderr().lock(), "{removed}");
        return Ok(());
    }
    let removed = hub_state::lock::unlock(&args.state, args.force)?;
    let _ = writeln!(std::io::stderr().lock(), "{removed}");
    Ok(())
}

/// `hub unlock --force` of a lock whose holder still runs on this host:
/// asked on a terminal, refused without one (`--yes` skips this).
fn confirm_unlocking_a_live_run(state: &std::path::Path) -> Result<(), Error> {
    use std::io::IsTerminal;
    let holder = match hub_state::is_remote(state) {
        true => hub_state::remote::lock::live_holder(state)?,
        false => hub_state::lock::live_holder(state),
    };
    let Some(holder) = holder else {
        return Ok(());
    };
    let refused = || hub_state::StateError::UnlockLive {
        state: hub_state::shell_word(state),
        holder: Box::new(holder.clone()),
    };
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(refused().into());
    }
    let _ = write!(
        std::io::stderr().lock(),
        "the lock of `{}` belongs to {holder}, which is still running; remove it? [y/N] ",
        state.display()
    );
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(refused().into()),
    }
}

/// `hub state ...`.
pub fn state(args: crate::cli::StateCommandArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::cli::StateCommand::Pull(args) => state_pull(args, warnings),
        crate::cli::StateCommand::List(args) => state::list(args, warnings),
        crate::cli::StateCommand::Show(args) => state::show(args, warnings),
        crate::cli::StateCommand::Rm(args) => state::rm(args, warnings),
        crate::cli::StateCommand::Mv(args) => state::mv(args, warnings),
        crate::cli::StateCommand::Push(args) => state_push(args, warnings),
    }
}

/// `hub state push FILE LOCATION`: FILE's state written to LOCATION under
/// its lock, refused when LOCATION holds another lineage or a newer
/// serial (unless --force).
fn state_push(args: crate::cli::StatePushArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_state::{Clock, Locations, StateWriter, WriteOptions};
    let mut state =
        hub_state::read(&args.file, warnings)?.ok_or_else(|| hub_state::StateError::Read {
            path: args.file.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
            backup: None,
        })?;
    let clock = Clock::from_env(&|name| std::env::var(name).ok())?;
    let target = std::slice::from_ref(&args.location);
    let locations = Locations::lock(target, "push", &clock, warnings)?;
    let current = match hub_state::read(&args.location, warnings) {
        // A cut or changed state is what `--force` is there to replace.
        Err(error @ hub_state::StateError::Broken { .. }) if args.force => {
            warnings.warn(None, format!("{error}; replacing it (--force)"));
            None
        }
        read => read?,
    };
    if let Some(current) = current.as_ref().filter(|_| !args.force) {
        hub_state::push_allowed(&state, current, &args.file, &args.location)?;
    }
    let read = current
        .as_ref()
        .map(|c| (args.location.as_path(), c.serial));
    let mut writer = StateWriter::open_all(locations.paths(), WriteOptions::default(), read)?;
    writer.write(&mut state)?;
    let _ = writeln!(
        std::io::stderr().lock(),
        "pushed `{}` to `{}` (serial {})",
        args.file.display(),
        args.location.display(),
        state.serial
    );
    Ok(())
}

/// `hub state pull STATE [FILE]`: the state as every command reads it,
/// printed or written atomically to FILE; no lock, nothing else changed.
fn state_pull(args: crate::cli::StatePullArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let state =
        hub_state::read(&args.state, warnings)?.ok_or_else(|| hub_state::StateError::Read {
            path: args.state.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
            backup: None,
        })?;
    let text = hub_state::integrity::framed(&hub_state::render_as(&state, args.state_format)?);
    match &args.file {
        None => write_stdout(text.as_bytes()),
        Some(file) => {
            hub_state::write_atomically(file, text.as_bytes()).map_err(|source| Error::Write {
                path: file.clone(),
                source,
            })
        }
    }
}

/// `hub util ...`.
pub fn util(args: crate::cli::UtilArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::cli::UtilCommand::Run(args) => util_run(args, warnings),
        crate::cli::UtilCommand::Otp(_) => util_otp(),
    }
}

/// `hub util otp`: stdin XORed with the pad of `$HUB_RANDOM`, printed as
/// `secrets = <base64>`; nothing for blank input.
fn util_otp() -> Result<(), Error> {
    use hub_engine::child::otp::{self, OtpError};
    use std::io::Read;
    let pad = std::env::var(otp::PAD_VARIABLE).map_err(|_| OtpError::MissingPad)?;
    let pad = otp::pad_from_env(&pad)?;
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(OtpError::Stdin)?;
    match otp::encode(&input, &pad)? {
        Some(line) => write_stdout(format!("{line}\n").as_bytes()),
        None => Ok(()),
    }
}

/// `hub util run`: one program run as deploy runs a component; fails with
/// the program's exit status.
fn util_run(args: crate::cli::UtilRunArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::child::process::{run, ConsoleSink, Invocation};
    use hub_engine::run::interrupt::Interrupts;
    let masker = util_run_masker(&args, warnings)?;
    let interrupts = Interrupts::install(args.grace).map_err(Error::Signals)?;
    let (program, program_args) = args.command.split_first().ok_or_else(|| Error::Usage {
        flag: "PROGRAM",
        value: String::new(),
        reason: "name the program to run after `--`".into(),
    })?;
    let program = PathBuf::from(program);
    let cwd = match args.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|source| Error::Write {
            path: PathBuf::from("."),
            source,
        })?,
    };
    let label = args.label.unwrap_or_else(|| {
        program.file_name().map_or_else(
            || program.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
    });
    let invocation = Invocation {
        label,
        program,
        args: program_args.to_vec(),
        cwd,
        env: util_run_env(args.clear_env, &args.env)?,
        log_file: args.log,
        timeout: args.timeout,
    };
    let finished = run(&invocation, &masker, &ConsoleSink, &interrupts)?;
    if finished.success() {
        Ok(())
    } else {
        Err(Error::ChildExit {
            label: invocation.label,
            exit: finished.exit,
        })
    }
}

/// What `util run` masks: the values of `--mask-env` variables, the
/// lines of stdin with `--mask-stdin`, `--mask` values (with a warning:
/// they are in hub's command line) and the credentials hub knows.
fn util_run_masker(
    args: &crate::cli::UtilRunArgs,
    warnings: &mut Warnings,
) -> Result<hub_manifest::redact::SecretMasker, Error> {
    let mut masker = hub_manifest::redact::SecretMasker::new(false);
    for name in &args.mask_env {
        let value = std::env::var(name).map_err(|_| Error::Usage {
            flag: "--mask-env",
            value: name.clone(),
            reason: format!(
                "`{name}` is not set (or not UTF-8) in hub's environment; export it first"
            ),
        })?;
        masker.add(&value);
    }
    if args.mask_stdin {
        masker.add(&mask_values_from_stdin()?);
    }
    if !args.mask.is_empty() {
        warnings.warn(
            None,
            "a --mask value is in hub's command line, which other users of this machine can read \
             (/proc/PID/cmdline, ps): pass it with --mask-env NAME or --mask-stdin instead",
        );
    }
    for value in &args.mask {
        masker.add(value);
    }
    masker.add_credentials(|name| std::env::var(name).ok());
    Ok(masker)
}

/// `--mask-stdin`: stdin, one value a line, refused from a terminal (the
/// values would show as they are typed).
fn mask_values_from_stdin() -> Result<String, Error> {
    let refused = |reason: String| Error::Usage {
        flag: "--mask-stdin",
        value: "stdin".into(),
        reason,
    };
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(refused(
            "it is a terminal: pipe the values in, one a line \
             (`printenv DB_PASSWORD | hub util run --mask-stdin -- ...`)"
                .into(),
        ));
    }
    let mut input = String::new();
    std::io::Read::read_to_string(&mut stdin, &mut input)
        .map_err(|source| refused(format!("cannot read the values: {source}")))?;
    Ok(input.trim_end_matches(['\n', '\r']).to_string())
}

/// Hub's environment (variables whose name or value is not UTF-8 left
/// out) unless `clear`, then each `NAME=VALUE` of `--env`.
fn util_run_env(clear: bool, pairs: &[String]) -> Result<Vec<(String, String)>, Error> {
    let mut env: Vec<(String, String)> = if clear {
        Vec::new()
    } else {
        std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect()
    };
    for pair in pairs {
        let (name, value) = pair.split_once('=').ok_or_else(|| Error::Usage {
            flag: "--env",
            value: pair.clone(),
            reason: "expected NAME=VALUE".into(),
        })?;
        env.retain(|(existing, _)| existing != name);
        env.push((name.to_string(), value.to_string()));
    }
    Ok(env)
}

/// `K=V,K=V` (the flag may also be repeated); the value may contain `=`.
pub fn parse_overrides(flags: &[String]) -> Result<IndexMap<String, String>, Error> {
    parse_pairs("-e", flags)
}

/// `NAME=value[,NAME=value]` flags, in order.
fn parse_pairs(flag: &'static str, flags: &[String]) -> Result<IndexMap<String, String>, Error> {
    let mut out = IndexMap::new();
    for pair in flags
        .iter()
        .flat_map(|f| f.split(','))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').ok_or_else(|| Error::Usage {
            flag,
            value: pair.to_string(),
            reason: "expected NAME=value".into(),
        })?;
        out.insert(key.to_string(), value.to_string());
    }
    Ok(out)
}

fn split_list(flags: &[String]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|f| f.split(','))
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// A closed pipe (`hub elaborate -o - | head`) is not an error.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    hub_manifest::console::out(bytes).map_err(|source| Error::Write {
        path: PathBuf::from("-"),
        source,
    })
}

/// `error: …`, then where, then how to fix it.
pub fn render_error(error: &Error) -> String {
    render(&error.to_string(), error.location(), error.hint())
}

fn render(
    message: &str,
    location: Option<hub_manifest::diag::Location>,
    hint: Option<String>,
) -> String {
    let mut out = format!("error: {message}");
    if let Some(location) = location {
        out.push_str(&format!("\n  --> {location}"));
    }
    if let Some(hint) = hint {
        out.push_str(&format!("\n  help: {hint}"));
    }
    out
}

/// The flags of a deploy, undeploy or plan, by group.
pub struct RunRequest<'a> {
    pub common: &'a crate::cli::CommonRunArgs,
    /// `None` for a plan, which executes nothing.
    pub execute: Option<&'a crate::cli::ExecuteArgs>,
    pub guess: bool,
    pub changed: bool,
    /// `--replace` (deploy and plan).
    pub replace: &'a [String],
    /// `--prune` (deploy and plan).
    pub prune: bool,
}

/// `hub deploy`.
pub fn deploy(args: crate::cli::DeployArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::order::plan::Verb;
    if let Some(path) = &args.plan {
        return deploy_planned(path, &args, warnings);
    }
    if args.changed && args.common.state.no_state {
        return Err(Error::Usage {
            flag: "--changed",
            value: String::new(),
            reason: "it compares each component with the state: give `-s STATE` instead of `-n`"
                .into(),
        });
    }
    let request = RunRequest {
        common: &args.common,
        execute: Some(&args.execute),
        guess: true,
        changed: args.changed,
        replace: &args.replace.replace,
        prune: args.prune,
    };
    run_stack(&request, Verb::Deploy, warnings)
}

/// `hub undeploy`.
pub fn undeploy(args: crate::cli::UndeployArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let request = RunRequest {
        common: &args.common,
        execute: Some(&args.execute),
        guess: args.guess.guess,
        changed: false,
        replace: &[],
        prune: false,
    };
    run_stack(&request, hub_engine::order::plan::Verb::Undeploy, warnings)
}

/// Loads the stack and runs it ([`run_loaded`]).
fn run_stack(
    args: &RunRequest<'_>,
    verb: hub_engine::order::plan::Verb,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let (stack, options) = load_run(args, verb, warnings)?;
    run_loaded(args, &stack, &options, warnings)
}

/// `hub deploy --plan PLAN`: the plan's stack, state and arguments, made
/// again and compared with the plan before anything runs.
fn deploy_planned(
    path: &Path,
    args: &crate::cli::DeployArgs,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_engine::order::plan::Verb;
    use hub_engine::view::saved::{self, SavedPlanError};
    let planned = saved::read(path)?;
    let stale = |reasons: Vec<String>| SavedPlanError::Stale {
        path: path.to_path_buf(),
        reasons,
    };
    let mismatch = invocation_mismatch(&planned, args);
    if !mismatch.is_empty() {
        return Err(stale(mismatch).into());
    }
    let common = planned_run_args(&planned, &args.common);
    let request = RunRequest {
        common: &common,
        execute: Some(&args.execute),
        guess: true,
        changed: planned.arguments.changed,
        replace: &planned.arguments.replace,
        prune: planned.arguments.prune,
    };
    let (stack, mut options) = load_run(&request, Verb::Deploy, warnings)?;
    options.expected_state = Some(hub_engine::run::engine::ExpectedState {
        lineage: planned.state.lineage.clone(),
        serial: planned.state.serial,
    });
    // Made again as the plan was made; the engine says again what it
    // would warn about.
    let as_planned = hub_engine::run::engine::RunOptions {
        concurrency: planned.arguments.jobs,
        ..options.clone()
    };
    let mut quiet = Warnings::default();
    let environment = std::env::vars().collect();
    let preview = hub_engine::view::preview::preview(&stack, &as_planned, environment, &mut quiet)?;
    let made = saved::Made {
        files: &common.stack.manifest,
        clouds: &common.stack.clouds,
        created: planned.created.clone(),
    };
    let now =
        saved::SavedPlan::new(&preview, &stack, &as_planned, &made).map_err(
            |error| match error {
                SavedPlanError::WouldFail { components } => stale(vec![format!(
                    "`{}` would now fail",
                    components.join("`, `")
                )]),
                other => other,
            },
        )?;
    let reasons = saved::stale::differences(&planned, &now);
    if !reasons.is_empty() {
        return Err(stale(reasons).into());
    }
    // The engine executes this plan, once the state is found unchanged.
    options.planned = Some(std::sync::Arc::new(preview));
    run_loaded(&request, &stack, &options, warnings)
}

/// A stack or state given to `deploy --plan` that is not the plan's.
fn invocation_mismatch(
    planned: &hub_engine::view::saved::SavedPlan,
    args: &crate::cli::DeployArgs,
) -> Vec<String> {
    let mut found = Vec::new();
    let given: Vec<String> = args
        .common
        .stack
        .manifest
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !given.is_empty() && given != planned.stack.files {
        found.push(format!(
            "it was made for the stack `{}`, not `{}`",
            planned.stack.files.join(" "),
            given.join(" ")
        ));
    }
    let state = split_list(std::slice::from_ref(&args.common.state.state));
    if !state.is_empty() && state != planned.state.locations {
        let made_for = match planned.state.locations.is_empty() {
            true => "no state (`-n`)".to_string(),
            false => format!("the state `{}`", planned.state.locations.join(",")),
        };
        found.push(format!(
            "it was made for {made_for}, not `{}`",
            state.join(",")
        ));
    }
    found
}

/// The run arguments of `deploy --plan`: what decides what runs from the
/// plan, how it runs (`-j`, `--reveal`, `--report`, `-e`) from the command.
fn planned_run_args(
    planned: &hub_engine::view::saved::SavedPlan,
    given: &crate::cli::CommonRunArgs,
) -> crate::cli::CommonRunArgs {
    use crate::cli::{
        CommonRunArgs, LockTimeoutArgs, RunArgs, SelectionArgs, StackArgs, StateArgs,
    };
    let arguments = &planned.arguments;
    CommonRunArgs {
        stack: StackArgs {
            manifest: planned.stack.files.iter().map(PathBuf::from).collect(),
            environment: given.stack.environment.clone(),
            base_dir: arguments.base_dir.as_ref().map(PathBuf::from),
            lenient: given.stack.lenient,
            clouds: arguments.clouds.clone(),
        },
        state: StateArgs {
            state: planned.state.locations.join(","),
            no_state: planned.state.locations.is_empty(),
            lock: LockTimeoutArgs {
                lock_timeout: given.state.lock.lock_timeout,
            },
        },
        selection: SelectionArgs {
            components: arguments.components.clone(),
            with_deps: arguments.with_deps,
            with_dependents: arguments.with_dependents,
            offset: arguments.offset.clone(),
            limit: arguments.limit.clone(),
        },
        run: RunArgs {
            force: arguments.force || given.run.force,
            reveal: given.run.reveal,
            jobs: given.run.jobs,
            report: given.run.report.clone(),
        },
    }
}

/// Runs a loaded stack, then prints the summary (also after a failure) on
/// stderr.
fn run_loaded(
    args: &RunRequest<'_>,
    stack: &hub_engine::source::stack::Stack,
    options: &hub_engine::run::engine::RunOptions,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_engine::run::engine::{self, Host};
    let interrupts = install_interrupts()?;
    let mut terminal = hub_params::TerminalPrompter;
    let prompter: Option<&mut dyn hub_params::Prompter> = if hub_params::interactive() {
        Some(&mut terminal)
    } else {
        None
    };
    // A live status line per running component when several run at once
    // on a terminal; plain lines otherwise.
    let live = (options.concurrency > 1 && std::io::stderr().is_terminal())
        .then(hub_engine::view::progress::TerminalProgress::default);
    let log = |line: &str| match &live {
        Some(live) => live.println(line),
        None => hub_manifest::console::err_line(line),
    };
    let sink: &dyn hub_engine::child::process::LineSink = match &live {
        Some(live) => live,
        None => &hub_engine::child::process::ConsoleSink,
    };
    let host = Host {
        environment: std::env::vars().collect(),
        hub: hub_executable(),
        sink,
        interrupts: &interrupts,
        log: &log,
        prompter,
        progress: live
            .as_ref()
            .map(|l| l as &dyn hub_engine::view::progress::Progress),
    };
    let finished = engine::run(stack, options, host, warnings);
    if let Some(cache) = hub_engine::run::digest_cache::installed() {
        // Only a hint for the next run: a cache that cannot be written is
        // left as it was; a planted one is said.
        if let Err(error) = cache.save() {
            if hub_state::beside::Planted::of(&error).is_some() {
                warnings.warn(
                    Some(hub_manifest::diag::Location::file(cache.path())),
                    format!("the fingerprint cache was not written: {error}"),
                );
            }
        }
    }
    if let Some(summary) = &finished.summary {
        hub_manifest::console::err(&summary.render());
    }
    let reported = match (&args.common.run.report, &finished.summary) {
        (Some(path), Some(summary)) => write_run_report(
            path,
            summary,
            stack,
            options,
            finished.result.as_ref().err(),
        ),
        _ => Ok(()),
    };
    match (finished.result, reported) {
        (Err(error), Err(report)) => {
            warnings.warn(None, report.to_string());
            Err(Error::from(error))
        }
        (Err(error), Ok(())) => Err(Error::from(error)),
        (Ok(()), reported) => reported,
    }
}

/// An elaborated file, or a stack manifest and its parameters files
/// elaborated in memory.
fn load_stack(
    manifest: &[PathBuf],
    base_dir: Option<&Path>,
    overrides: &IndexMap<String, String>,
    warnings: &mut Warnings,
) -> Result<hub_engine::source::stack::Stack, Error> {
    let (first, params) = manifest.split_first().ok_or(Error::Usage {
        flag: "MANIFEST",
        value: String::new(),
        reason: "give the elaborated file, or the stack manifest and its parameters files".into(),
    })?;
    Ok(hub_engine::source::stack::Stack::load(
        first, params, base_dir, overrides, warnings,
    )?)
}

/// The stack and the run options of a deploy, undeploy or plan.
fn load_run(
    args: &RunRequest<'_>,
    verb: hub_engine::order::plan::Verb,
    warnings: &mut Warnings,
) -> Result<
    (
        hub_engine::source::stack::Stack,
        hub_engine::run::engine::RunOptions,
    ),
    Error,
> {
    use hub_engine::order::plan::Selection;
    use hub_engine::run::engine::RunOptions;
    let overrides = parse_overrides(&args.common.stack.environment)?;
    let os_environment = match args.execute {
        Some(execute) => parse_os_environment(&execute.os_environment)?,
        None => hub_engine::child::env::OsEnvironment::default(),
    };
    // `-s a,b`: every location is written, the newest is read (§11.5).
    let states: Vec<PathBuf> = match args.common.state.no_state {
        true => Vec::new(),
        false => split_list(std::slice::from_ref(&args.common.state.state))
            .into_iter()
            .map(PathBuf::from)
            .collect(),
    };
    if states.is_empty() && !args.common.state.no_state {
        return Err(Error::Usage {
            flag: "-s",
            value: args.common.state.state.clone(),
            reason: "give a state file (several separated by commas), or -n for no state".into(),
        });
    }
    if let Some(execute) = args.execute {
        check_encryption(execute.encrypted)?;
    }
    install_digest_cache(&states, args.execute);
    let enabled = hub_engine::order::clouds::Enabled::resolve(&args.common.stack.clouds, &|name| {
        std::env::var(name).ok()
    })
    .map_err(|error| Error::Usage {
        flag: "--clouds",
        value: error.0.clone(),
        reason: error.to_string(),
    })?;
    let mut stack = load_stack(
        &args.common.stack.manifest,
        args.common.stack.base_dir.as_deref(),
        &overrides,
        warnings,
    )?;
    refuse_near_typos(warnings, args.common.stack.lenient)?;
    hub_engine::source::stale::warn_if_stale(&stack, warnings);
    if let Some(warning) = hub_engine::order::clouds::filter(&mut stack.elaborated, &enabled) {
        warnings.warn(None, warning);
    }
    let options = RunOptions {
        verb: Some(verb),
        selection: Selection {
            components: args
                .common
                .selection
                .components
                .iter()
                .filter(|c| !c.is_empty())
                .cloned()
                .collect(),
            offset: args.common.selection.offset.clone(),
            limit: args.common.selection.limit.clone(),
            with_deps: args.common.selection.with_deps,
            with_dependents: args.common.selection.with_dependents,
        },
        state: states,
        overrides,
        os_environment,
        components_base_dir: args.common.stack.base_dir.clone(),
        force: args.common.run.force,
        compressed: args.execute.is_some_and(|e| e.compressed),
        state_format: args
            .execute
            .map_or(hub_state::StateFormat::default(), |e| e.state_format),
        guess: args.guess,
        reveal: args.common.run.reveal,
        args: hub_manifest::redact::recorded_args(std::env::args()),
        concurrency: match args.common.run.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        changed: args.changed,
        replace: args.replace.to_vec(),
        prune: args.prune,
        why: args.execute.is_some_and(|e| e.why),
        dry: args.execute.is_some_and(|e| e.dry),
        lock_timeout: args.common.state.lock.lock_timeout,
        timeout: args.execute.and_then(|e| e.timeout),
        expected_state: None,
        planned: None,
    };
    Ok((stack, options))
}

/// Fingerprints reuse the digests of unchanged files kept beside the
/// (first) state: runs that write the state also write the cache; plans
/// and dry runs only read it.
fn install_digest_cache(states: &[PathBuf], execute: Option<&crate::cli::ExecuteArgs>) {
    use hub_engine::run::digest_cache::{self, DigestCache};
    let Some(state) = states.first().filter(|s| !hub_state::is_remote(s)) else {
        return;
    };
    let writable = execute.is_some_and(|e| !e.dry);
    digest_cache::install(DigestCache::open(
        &digest_cache::path_beside(state),
        writable,
    ));
}

/// `--encrypted=true` needs `HUB_CRYPTO_PASSWORD`: refused before anything
/// runs. The password seals remote copies only; local files stay plain.
fn check_encryption(flag: Option<bool>) -> Result<(), Error> {
    hub_state::crypto::choose_remote_password(flag).map_err(|error| Error::Usage {
        flag: "--encrypted",
        value: "true".into(),
        reason: error.to_string(),
    })
}

/// `--report FILE.json` of a deploy or undeploy.
fn write_run_report(
    path: &Path,
    summary: &hub_engine::view::summary::Summary,
    stack: &hub_engine::source::stack::Stack,
    options: &hub_engine::run::engine::RunOptions,
    error: Option<&hub_engine::run::error::EngineError>,
) -> Result<(), Error> {
    use hub_engine::run::error::EngineError;
    use hub_engine::view::report::{self, ReportContext, RunReport};
    let result = match error {
        None => "success",
        Some(EngineError::Interrupted { .. }) => "interrupted",
        Some(_) => "failure",
    };
    let context = ReportContext {
        kind: summary.verb.clone(),
        stack: stack.elaborated.stack.meta.name.clone(),
        state: options.state.first().map(|p| p.display().to_string()),
        jobs: options.concurrency,
        started: summary.started.clone(),
        ended: summary.ended.clone(),
        result: result.to_string(),
        error: error.map(ToString::to_string),
    };
    report::write(path, &RunReport::from_summary(summary, context))?;
    Ok(())
}

/// `hub invoke COMPONENT VERB`.
pub fn invoke(args: crate::cli::InvokeArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::run::invoke::{invoke, InvokeOptions};
    let exported = parse_overrides(&args.environment)?;
    let elaborate = flag_or_env(args.elaborate, "-m", "HUB_ELABORATE")?;
    let state = flag_or_env(args.state, "-s", "HUB_STATE")?;
    let stack = hub_engine::source::stack::Stack::load(
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
        &hub_engine::child::process::ConsoleSink,
        &interrupts,
        warnings,
    )
    .map_err(Error::from)
}

/// `hub render GLOB...`.
pub fn render_templates(
    args: crate::cli::RenderArgs,
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
            hub_engine::source::stack::Stack::load(
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

/// The value of `variable` unless it is unset or empty.
fn non_empty_env(variable: &str) -> Option<String> {
    std::env::var(variable).ok().filter(|v| !v.is_empty())
}

/// A path given with `flag`, else the value of `variable`.
fn flag_or_env(
    given: Option<PathBuf>,
    flag: &'static str,
    variable: &str,
) -> Result<PathBuf, Error> {
    given
        .or_else(|| non_empty_env(variable).map(PathBuf::from))
        .ok_or_else(|| Error::Usage {
            flag,
            value: String::new(),
            reason: format!("give it, or set {variable} (a deploy sets it for its components)"),
        })
}

fn parse_os_environment(text: &str) -> Result<hub_engine::child::env::OsEnvironment, Error> {
    text.parse().map_err(|reason| Error::Usage {
        flag: "--os-environment",
        value: text.to_string(),
        reason,
    })
}

fn install_interrupts() -> Result<std::sync::Arc<hub_engine::run::interrupt::Interrupts>, Error> {
    use hub_engine::run::interrupt::{Interrupts, DEFAULT_GRACE};
    Interrupts::install(DEFAULT_GRACE)
        .map_err(|e| Error::from(hub_engine::run::error::EngineError::Signals(e)))
}

/// The running hub, for components that call it back (`$HUB`).
fn hub_executable() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hub"))
}

/// `hub plan`: what a deploy or undeploy would do.
pub fn plan(args: crate::cli::PlanArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let detailed = args.detailed_exitcode;
    let planned = plan_and_print(&args, warnings);
    match planned {
        Err(error) if detailed => Err(Error::Detailed(Box::new(error))),
        Err(error) => Err(error),
        Ok(_) if !detailed => Ok(()),
        Ok(preview) => match preview.count(hub_engine::view::preview::Action::Fail) {
            0 if preview.would_change() => Err(Error::PlanChanges),
            0 => Ok(()),
            failing => Err(Error::PlanFailures(failing)),
        },
    }
}

fn plan_and_print(
    args: &crate::cli::PlanArgs,
    warnings: &mut Warnings,
) -> Result<hub_engine::view::preview::Preview, Error> {
    use hub_engine::order::plan::Verb;
    use hub_engine::view::preview;
    let verb = match args.undeploy {
        true => Verb::Undeploy,
        false => Verb::Deploy,
    };
    refuse_plan_flags(args)?;
    let request = RunRequest {
        common: &args.common,
        execute: None,
        guess: args.guess.guess,
        changed: args.changed,
        replace: &args.replace.replace,
        prune: args.prune,
    };
    let (stack, options) = load_run(&request, verb, warnings)?;
    let plan = preview_between_runs(&stack, &options, warnings)?;
    let clock = hub_state::Clock::from_env(&|name| std::env::var(name).ok())?;
    if let Some(path) = &args.common.run.report {
        hub_engine::view::report::write(path, &preview::report(&plan, &clock.now()))?;
    }
    let saved = args
        .out
        .as_ref()
        .map(|path| (path, save_plan(&plan, &stack, &options, args, clock.now())));
    let text = match args.format.as_str() {
        "json" => preview::render_json(&plan),
        "markdown" => preview::render_markdown(&plan),
        _ => preview::render_text(&plan),
    };
    write_stdout(text.as_bytes())?;
    // Written after the plan is shown, so that a refusal comes with it.
    if let Some((path, saved)) = saved {
        hub_engine::view::saved::write(path, &saved?)?;
    }
    Ok(plan)
}

/// The preview, refused (or, with `--lock-timeout`, delayed) while a run
/// holds the lock of a state location: what it read would be stale at
/// once. A run that took the lock while the plan read is caught by a
/// second look. Plans take no lock, so they run side by side.
fn preview_between_runs(
    stack: &hub_engine::source::stack::Stack,
    options: &hub_engine::run::engine::RunOptions,
    warnings: &mut Warnings,
) -> Result<hub_engine::view::preview::Preview, Error> {
    use hub_state::lock::await_unheld;
    let notify = |line: &str| {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    };
    let wait = hub_state::LockWait::new(options.lock_timeout, Some(&notify));
    await_unheld(&options.state, &wait)?;
    let plan =
        hub_engine::view::preview::preview(stack, options, std::env::vars().collect(), warnings)?;
    await_unheld(&options.state, &hub_state::LockWait::default())?;
    Ok(plan)
}

/// The plan of `plan --out`.
fn save_plan(
    plan: &hub_engine::view::preview::Preview,
    stack: &hub_engine::source::stack::Stack,
    options: &hub_engine::run::engine::RunOptions,
    args: &crate::cli::PlanArgs,
    created: String,
) -> Result<hub_engine::view::saved::SavedPlan, Error> {
    use hub_engine::view::saved::{Made, SavedPlan};
    let made = Made {
        files: &args.common.stack.manifest,
        clouds: &args.common.stack.clouds,
        created,
    };
    Ok(SavedPlan::new(plan, stack, options, &made)?)
}

/// Flags of `plan` that do not go together.
fn refuse_plan_flags(args: &crate::cli::PlanArgs) -> Result<(), Error> {
    if args.format == "markdown" && args.common.run.reveal {
        return Err(Error::Usage {
            flag: "--reveal",
            value: String::new(),
            reason: "a markdown plan is meant to be posted where others read it: its secrets stay masked; use `--format text --reveal` to see them".into(),
        });
    }
    for (given, flag) in [(args.prune, "--prune"), (args.changed, "--changed")] {
        if args.undeploy && given {
            return Err(Error::Usage {
                flag,
                value: String::new(),
                reason: "it is a flag of a deploy; an undeploy takes down every selected component"
                    .into(),
            });
        }
    }
    if args.undeploy && !args.replace.replace.is_empty() {
        return Err(Error::Usage {
            flag: "--replace",
            value: args.replace.replace.join(","),
            reason: "an undeploy runs every selected component; `--replace` is for a deploy".into(),
        });
    }
    Ok(())
}

/// `hub graph`: the dependency graph of a stack.
pub fn graph(args: crate::cli::GraphArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::order::plan::{Plan, Selection, Verb};
    use hub_engine::run::error::EngineError;
    use hub_engine::view::graph::{self, Format, Graph};
    let format = Format::parse(&args.format).ok_or_else(|| Error::Usage {
        flag: "--format",
        value: args.format.clone(),
        reason: "use `dot` or `mermaid`".into(),
    })?;
    let overrides = parse_overrides(&args.environment)?;
    let stack = load_stack(
        &args.manifest,
        args.base_dir.as_deref(),
        &overrides,
        warnings,
    )?;
    let elaborated = &stack.elaborated;
    let order = stack.validated_order()?;
    let plan = Plan::new(elaborated, order, Verb::Deploy, &Selection::default(), None)
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

/// `hub explain [ELABORATED] STATE`: what the state records, in the format
/// asked for.
pub fn explain(args: crate::cli::ExplainArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::explain::render::{self, Style};
    let (elaborated, states) = match args.files.as_slice() {
        [states] => (None, states),
        [elaborated, states] => (Some(PathBuf::from(elaborated)), states),
        _ => unreachable!("clap takes one or two files"),
    };
    let request = crate::explain::Request {
        elaborated,
        states: split_list(std::slice::from_ref(states))
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        component: args.component,
        global: args.global,
        raw_outputs: args.raw_outputs,
        reveal: args.reveal,
    };
    let explained = crate::explain::explain(&request, warnings)?;
    let style = Style::detect(
        std::io::stdout().is_terminal(),
        std::env::var("NO_COLOR").ok().as_deref(),
    );
    let text = if args.op_log {
        render::operations(&explained, style)
    } else if args.json {
        render::json(&explained)
    } else if args.yaml {
        render::yaml(&explained)?
    } else if args.kv {
        render::kv(&explained)
    } else if args.sh {
        let (text, clashes) = render::sh(&explained);
        for name in clashes {
            warnings.warn(
                None,
                format!("two keys both make the shell variable `{name}`: the first is printed"),
            );
        }
        text
    } else {
        render::text(&explained, style)
    };
    write_stdout(text.as_bytes())
}

/// `hub version`: the same line as `hub --version`.
pub fn version() -> Result<(), Error> {
    write_stdout(format!("hub {}\n", crate::cli::VERSION).as_bytes())
}

/// `hub completions SHELL`: a completion script on stdout.
pub fn completions(args: crate::cli::CompletionsArgs) -> Result<(), Error> {
    use clap::CommandFactory;
    let mut command = crate::cli::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "hub", &mut script);
    write_stdout(&script)
}
