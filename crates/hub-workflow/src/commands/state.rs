//! `hub state list`, `show`, `rm`, `mv`, `pull` and `push`, and `hub
//! unlock`: look at and change what a state records, running nothing.
//!
//! `list` and `show` read the state as every command does (the newest of
//! the locations, its journal folded in) and take no lock, like `hub
//! explain`: during a deploy they show its progress. `rm` and `mv` work as
//! a run does: they lock every location (`--lock-timeout` waits for a run
//! that holds one), read the newest, change the state in memory (see
//! [`hub_state::edit`]) and write it to every location through one
//! [`StateWriter`], which keeps the previous state as `STATE.backup`, folds
//! a journal a killed run left and writes the next serial.

use super::output::write_stdout;
use crate::error::{quoted, Error};
use crate::request::UnlockArgs;
use crate::request::{
    StateChangeArgs, StateListArgs, StateLocationArgs, StateMvArgs, StateRmArgs, StateShowArgs,
};
use hub_manifest::diag::Warnings;
use hub_state::edit::{self};
use hub_state::{
    ComponentState, Locations, LockWait, Operation, State, StateError, StateWriter, WriteOptions,
};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::error::StateCommandError;

/// `hub state list`: one line per component entry (`--json`: an array).
pub fn list(mut args: StateListArgs, warnings: &mut Warnings) -> Result<(), Error> {
    if let Some(state) = args.legacy_state.take() {
        let old = format!("hub state list {state}");
        let new = format!("hub state list -s {state}");
        super::common::deprecated(warnings, &old, &new);
        args.location.state = state;
    }
    let state = read_newest(&args.location, warnings)?;
    let rows = rows(&state);
    let text = match args.json {
        true => list_json(&rows),
        false => list_text(&rows),
    };
    if rows.is_empty() && !args.json {
        say("hub: the state records no component");
    }
    super::output::write_stdout(text.as_bytes())
}

/// What `hub state list` shows of one component.
#[derive(Debug, Serialize)]
struct Row<'s> {
    name: &'s str,
    status: &'s str,
    /// When the entry last changed.
    updated: &'s str,
    /// The last recorded operation that ran the component.
    operation: Option<OperationSeen<'s>>,
    /// What the last `hub check` found.
    #[serde(skip_serializing_if = "Option::is_none")]
    health: Option<&'s hub_state::Health>,
}

#[derive(Debug, Serialize)]
struct OperationSeen<'s> {
    id: &'s str,
    /// `deploy`, `undeploy`.
    kind: &'s str,
    /// The component's phase in it.
    status: &'s str,
}

/// The entries in `lifecycle.order`, then the others in the state's order.
fn rows(state: &State) -> Vec<Row<'_>> {
    let ordered = state
        .lifecycle
        .order
        .iter()
        .filter_map(|name| state.components.get_key_value(name));
    let others = state
        .components
        .iter()
        .filter(|(name, _)| !state.lifecycle.order.contains(name));
    ordered
        .chain(others)
        .map(|(name, entry)| row(state, name, entry))
        .collect()
}

fn row<'s>(state: &'s State, name: &'s str, entry: &'s ComponentState) -> Row<'s> {
    let operation = state.operations.iter().rev().find_map(|op: &Operation| {
        let phase = op.phases.iter().rev().find(|p| p.phase == name)?;
        Some(OperationSeen {
            id: &op.id,
            kind: &op.operation,
            status: phase.status.as_str(),
        })
    });
    Row {
        name,
        status: entry.status.as_str(),
        updated: match entry.timestamp.is_empty() {
            true => &entry.timestamps.end,
            false => &entry.timestamp,
        },
        operation,
        health: entry.health.as_ref(),
    }
}

fn list_text(rows: &[Row<'_>]) -> String {
    // A HEALTH column once `hub check` has recorded one.
    let checked = rows.iter().any(|row| row.health.is_some());
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let operation = row.operation.as_ref().map_or("-".to_string(), |op| {
                format!(
                    "{} {} ({})",
                    or_dash(op.kind),
                    or_dash(op.id),
                    or_dash(op.status)
                )
            });
            let mut cells = vec![
                row.name.to_string(),
                or_dash(row.status).to_string(),
                or_dash(row.updated).to_string(),
            ];
            if checked {
                cells.push(row.health.map_or("-".into(), |h| h.status.to_string()));
            }
            cells.push(operation);
            cells
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    let mut header: Vec<String> = ["NAME", "STATUS", "UPDATED"].map(String::from).to_vec();
    if checked {
        header.push("HEALTH".into());
    }
    header.push("OPERATION".into());
    let last = header.len() - 1;
    let lines: Vec<&Vec<String>> = std::iter::once(&header).chain(&cells).collect();
    let width = |column: usize| lines.iter().map(|l| l[column].chars().count()).max();
    let widths: Vec<usize> = (0..last).map(|c| width(c).unwrap_or(0)).collect();
    let mut out = String::new();
    for line in lines {
        for (column, cell) in line.iter().enumerate().take(last) {
            out.push_str(&format!("{cell:<width$}  ", width = widths[column]));
        }
        out.push_str(&line[last]);
        out.push('\n');
    }
    out
}

fn or_dash(text: &str) -> &str {
    match text {
        "" => "-",
        text => text,
    }
}

fn list_json(rows: &[Row<'_>]) -> String {
    let mut text = serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".into());
    text.push('\n');
    text
}

/// `hub state show COMPONENT`: its status, parameters and outputs, secrets
/// masked unless `--reveal`, as `hub explain -c` shows them.
pub fn show(args: StateShowArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::explain::render::{self, ComponentDocument, Style};
    use std::io::IsTerminal;
    let state = read_newest(&args.location, warnings)?;
    edit::check_known(&state, &args.component).map_err(StateCommandError::from)?;
    let request = crate::explain::Request {
        elaborated: None,
        states: Vec::new(),
        component: Some(args.component.clone()),
        global: false,
        raw_outputs: false,
        reveal: args.reveal,
    };
    let explained = crate::explain::build(&state, Vec::new(), &request)?;
    let text = match (args.json, explained.components.first()) {
        (true, Some(component)) => {
            #[derive(Serialize)]
            struct Shown<'a> {
                name: &'a str,
                #[serde(flatten)]
                component: ComponentDocument<'a>,
            }
            let shown = Shown {
                name: &component.name,
                component: ComponentDocument::of(component, true),
            };
            let mut text = serde_json::to_string_pretty(&shown).unwrap_or_default();
            text.push('\n');
            text
        }
        _ => {
            let style = Style::detect(
                std::io::stdout().is_terminal(),
                std::env::var("NO_COLOR").ok().as_deref(),
            );
            render::text(&explained, style).trim_start().to_string()
        }
    };
    super::output::write_stdout(text.as_bytes())
}

/// `hub state rm COMPONENT...`: forgets the entries, after asking on a
/// terminal (or with `--yes`).
pub fn rm(args: StateRmArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let mut names: Vec<String> = Vec::with_capacity(args.components.len());
    for name in args.components {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let yes = args.yes;
    refuse_protected(args.elaborate, &names, warnings)?;
    let changed = change(&args.change, "state rm", warnings, |state, path| {
        for name in &names {
            edit::check_known(state, name)?;
        }
        confirm_forget(state, &names, path, yes)?;
        edit::forget(state, &names)?;
        Ok(())
    })?;
    say(&format!(
        "hub: forgot {} (nothing was undeployed); {}",
        quoted(&names),
        changed
    ));
    Ok(())
}

/// Refuses to forget a component the stack (`-m`, else `$HUB_ELABORATE`)
/// protects with `lifecycle.protected`, before the state is locked.
fn refuse_protected(
    elaborate: Option<PathBuf>,
    names: &[String],
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_engine::run::error::EngineError;
    use hub_plan::plan::guard::{refuse_if_protected, Operation};
    let Some(path) =
        elaborate.or_else(|| super::common::non_empty_env("HUB_ELABORATE").map(PathBuf::from))
    else {
        return Ok(());
    };
    let stack = hub_plan::source::stack::Stack::load(
        &path,
        &[],
        None,
        &indexmap::IndexMap::new(),
        warnings,
    )?;
    for name in names {
        refuse_if_protected(&stack, name, Operation::Forget).map_err(EngineError::from)?;
    }
    Ok(())
}

/// Asks on the terminal unless `yes`; refuses when nobody can answer.
fn confirm_forget(
    state: &State,
    names: &[String],
    path: &Path,
    yes: bool,
) -> Result<(), StateCommandError> {
    if yes {
        return Ok(());
    }
    if !hub_params::interactive() {
        return Err(StateCommandError::NeedsYes {
            components: names.to_vec(),
        });
    }
    let described: Vec<String> = names
        .iter()
        .map(|name| {
            let status = state.components.get(name).map_or("", |e| e.status.as_str());
            format!("`{name}` ({})", or_dash(status))
        })
        .collect();
    let question = format!(
        "Forget {} in `{}`? Nothing is undeployed",
        described.join(", "),
        path.display()
    );
    match super::common::confirm(question).map_err(StateCommandError::Prompt)? {
        true => Ok(()),
        false => Err(StateCommandError::Declined),
    }
}

/// `hub state mv OLD NEW`.
pub fn mv(args: StateMvArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let (old, new) = (args.old.as_str(), args.new.as_str());
    let changed = change(&args.change, "state mv", warnings, |state, _| {
        hub_plan::plan::moved::rename(state, old, new)?;
        Ok(())
    })?;
    say(&format!("hub: renamed `{old}` to `{new}`; {changed}"));
    Ok(())
}

/// What a change wrote: `hub.yaml.state is at serial 7`.
struct Written {
    locations: Vec<PathBuf>,
    serial: u64,
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .locations
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect();
        let verb = if names.len() == 1 { "is" } else { "are" };
        write!(f, "{} {verb} at serial {}", names.join(", "), self.serial)
    }
}

/// Locks the locations, reads the newest, applies `edit` (given the
/// location read) and writes the result to every location.
fn change(
    args: &StateChangeArgs,
    operation: &str,
    warnings: &mut Warnings,
    edit: impl FnOnce(&mut State, &Path) -> Result<(), StateCommandError>,
) -> Result<Written, Error> {
    let paths = locations(&args.location)?;
    let clock = super::common::clock()?;
    let notify = |line: &str| say(line);
    let wait = LockWait::new(args.lock.lock_timeout, Some(&notify));
    let locked = Locations::lock_waiting(&paths, operation, &clock, &wait, warnings)?;
    let read_path = locked.to_read().unwrap_or(locked.first()).to_path_buf();
    let mut state = hub_state::read(&read_path, warnings)?.ok_or_else(|| missing(&read_path))?;
    let read_serial = state.serial;
    edit(&mut state, &read_path)?;
    state.timestamp = clock.now();
    let options = WriteOptions {
        compressed: is_compressed(&read_path),
        format: args.state_format,
        encrypted: None,
    };
    let mut writer = StateWriter::open_locked(&locked, options, Some((&read_path, read_serial)))?;
    writer.write(&mut state)?;
    for failure in writer.take_failures() {
        warnings.warn(None, failure.to_string());
    }
    Ok(Written {
        locations: writer.written().map(Path::to_path_buf).collect(),
        serial: state.serial,
    })
}

/// `-s a,b` as paths; at least one.
fn locations(args: &StateLocationArgs) -> Result<Vec<PathBuf>, Error> {
    let paths: Vec<PathBuf> = args
        .state
        .split(',')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    if paths.is_empty() {
        return Err(Error::Usage {
            flag: "-s",
            value: args.state.clone(),
            reason: "give a state file (several separated by commas)".into(),
        });
    }
    Ok(paths)
}

/// The newest of the locations, read with its journal; no lock.
fn read_newest(args: &StateLocationArgs, warnings: &mut Warnings) -> Result<State, Error> {
    let paths = locations(args)?;
    let path = hub_state::locations::to_read(&paths).unwrap_or(&paths[0]);
    Ok(hub_state::read(path, warnings)?.ok_or_else(|| missing(path))?)
}

fn missing(path: &Path) -> StateError {
    StateError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
        backup: None,
    }
}

/// The state was written gzip-compressed: it stays so.
fn is_compressed(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .is_ok_and(|()| magic == [0x1f, 0x8b])
}

fn say(line: &str) {
    hub_manifest::console::err_line(line);
}

/// `hub state ...`.
pub fn state(args: crate::request::StateCommandArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::request::StateCommand::Pull(args) => state_pull(args, warnings),
        crate::request::StateCommand::List(args) => list(args, warnings),
        crate::request::StateCommand::Show(args) => show(args, warnings),
        crate::request::StateCommand::Rm(args) => rm(args, warnings),
        crate::request::StateCommand::Mv(args) => mv(args, warnings),
        crate::request::StateCommand::Push(args) => state_push(args, warnings),
    }
}

/// `hub state push FILE LOCATION`: FILE's state written to LOCATION under
/// its lock, refused when LOCATION holds another lineage or a newer
/// serial (unless --force).
fn state_push(args: crate::request::StatePushArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_state::{Locations, StateWriter, WriteOptions};
    let mut state =
        hub_state::read(&args.file, warnings)?.ok_or_else(|| hub_state::StateError::Read {
            path: args.file.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
            backup: None,
        })?;
    let clock = super::common::clock()?;
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
    let mut writer = StateWriter::open_locked(&locations, WriteOptions::default(), read)?;
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
fn state_pull(
    mut args: crate::request::StatePullArgs,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    if let Some(state) = args.legacy.first().cloned() {
        let output = args.legacy.get(1).cloned();
        let (file, flag) = match &output {
            Some(file) => (
                format!(" {}", file.display()),
                format!(" -o {}", file.display()),
            ),
            None => (String::new(), String::new()),
        };
        let old = format!("hub state pull {}{file}", state.display());
        let new = format!("hub state pull -s {}{flag}", state.display());
        super::common::deprecated(warnings, &old, &new);
        args.state = state;
        args.output = output;
    }
    let state =
        hub_state::read(&args.state, warnings)?.ok_or_else(|| hub_state::StateError::Read {
            path: args.state.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
            backup: None,
        })?;
    let text = hub_state::integrity::framed(&hub_state::render_as(&state, args.state_format)?);
    match &args.output {
        None => write_stdout(text.as_bytes()),
        Some(file) => {
            hub_state::write_atomically(file, text.as_bytes()).map_err(|source| Error::Write {
                path: file.clone(),
                source,
            })
        }
    }
}

/// `hub unlock`: removes a stale lock (or, with --force, any lock) and
/// says on stderr what it removed.
pub fn unlock(mut args: UnlockArgs, warnings: &mut Warnings) -> Result<(), Error> {
    if let Some(state) = args.legacy_state.take() {
        let old = format!("hub unlock {}", state.display());
        let new = format!("hub unlock -s {}", state.display());
        super::common::deprecated(warnings, &old, &new);
        args.state = state;
    }
    if (args.force || args.id.is_some()) && !args.yes {
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
