//! `hub util otp` and `hub util run`: helpers for components.

use super::output::write_stdout;
use crate::error::Error;
use hub_manifest::diag::Warnings;
use std::io::IsTerminal;
use std::path::PathBuf;

/// `hub util ...`.
pub fn util(args: crate::request::UtilArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::request::UtilCommand::Run(args) => util_run(args, warnings),
        crate::request::UtilCommand::Otp(_) => util_otp(),
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
fn util_run(args: crate::request::UtilRunArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_engine::child::interrupt::Interrupts;
    use hub_engine::child::process::{run, Invocation};
    use hub_plan::outcome::lines::ConsoleSink;
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
    args: &crate::request::UtilRunArgs,
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
