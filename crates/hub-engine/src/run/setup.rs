//! Checks and reads done once before a run's first component: the state
//! here; the locked parameters, the state's consistency with the stack,
//! every selected component's implementation and the rest in the planning
//! crate (`hub_plan::checks`), re-exported.

use super::error::EngineError;
use crate::options::Host;
use hub_manifest::diag::{Location, Warnings};
use hub_params::Locked;
use hub_plan::checks::partial_flag;
use hub_plan::error::PlanningError;
use hub_plan::options::RunOptions;
use hub_plan::source::stack::Stack;
use hub_plan::Verb;
use hub_state::{self as state, State};
use std::path::Path;

/// Reads the state of a run: missing is fine except for `-c`/`-o` (unless
/// `--force`); unreadable is fatal unless `--force` on a full deploy,
/// which first copies it to `STATE.unreadable` (a file of another kind is
/// always fatal).
pub(crate) fn read_state(
    path: Option<&Path>,
    verb: Verb,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Option<State>, EngineError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let partial = options.selection.is_partial();
    match state::read(path, warnings) {
        Ok(Some(state)) => Ok(Some(state)),
        Ok(None) if partial && !options.force => {
            Err(EngineError::Planning(PlanningError::StateRequired {
                flag: partial_flag(options),
                path: Some(path.to_path_buf()),
            }))
        }
        Ok(None) => Ok(None),
        // A file of another kind is a wrong `-s` path, not a damaged state:
        // never replaced.
        Err(error)
            if options.force
                && verb == Verb::Deploy
                && !partial
                && !matches!(error, state::StateError::WrongKind { .. }) =>
        {
            // The run's own writes soon replace `STATE.backup`: the damaged
            // file is copied where none of them goes, or the run stops.
            let Ok(kept) = keep_aside(path) else {
                return Err(error.into());
            };
            // The first write makes the unreadable file the backup: the
            // backup it replaces (often the last good state) is kept too.
            let backup = state::backup_path(path);
            let kept_backup = match backup.is_file() {
                true => match keep_copy(&backup, &with_suffix(&kept, ".backup")) {
                    Ok(copy) => format!(" and its backup as `{}`", copy.display()),
                    Err(_) => return Err(error.into()),
                },
                false => String::new(),
            };
            warnings.warn(
                Some(Location::file(path)),
                format!(
                    "{error}; starting a new state (--force); the old file is kept as `{}`{kept_backup}",
                    kept.display()
                ),
            );
            Ok(None)
        }
        Err(error) => Err(error.into()),
    }
}

fn with_suffix(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    std::path::PathBuf::from(name)
}

/// Copies `source` to `target`, which must not exist (mode 0600,
/// flushed).
fn keep_copy(source: &Path, target: &Path) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut source = std::fs::File::open(source)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(target)?;
    let copied = std::io::copy(&mut source, &mut file).and_then(|_| file.sync_all());
    if let Err(e) = copied {
        let _ = std::fs::remove_file(target);
        return Err(e);
    }
    Ok(target.to_path_buf())
}

/// Copies an unreadable state to the first free `STATE.unreadable`,
/// `STATE.unreadable.1`, … (mode 0600, flushed); none is ever replaced.
fn keep_aside(path: &Path) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut source = std::fs::File::open(path)?;
    for n in 0u32.. {
        let mut name = path.as_os_str().to_os_string();
        name.push(".unreadable");
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let target = std::path::PathBuf::from(name);
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&target);
        let mut file = match created {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let copied = std::io::copy(&mut source, &mut file).and_then(|_| file.sync_all());
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&target);
            return Err(e);
        }
        return Ok(target);
    }
    Err(std::io::Error::other("no free name"))
}

/// [`hub_plan::checks::lock_releasing_parameters`] with what the run gets
/// from hub's process: its environment and its prompter (taken: a run
/// prompts once). The stack's own parameter list is moved into the lock
/// and gone afterwards: from there on a run reads the locked parameters
/// only.
pub(crate) fn lock_parameters(
    stack: &mut Stack,
    options: &RunOptions,
    host: &mut Host<'_>,
    state_path: Option<&Path>,
    loaded: Option<&hub_state::State>,
    warnings: &mut Warnings,
) -> Result<Locked, EngineError> {
    let prompter = host.prompter.take();
    Ok(hub_plan::checks::lock_releasing_parameters(
        stack,
        options,
        &host.environment,
        prompter,
        state_path,
        loaded,
        warnings,
    )?)
}
