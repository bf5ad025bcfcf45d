//! Where a run keeps its records: a folder beside a local state, objects
//! beside a remote one.

use super::error::RunError;
use super::records::{JobRecord, RunRecord, JOB_SUFFIX, RUN_FILE};
use crate::remote::client::{Client, Put, Write};
use crate::remote::{is_remote, RemoteLocation};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where the run of a state keeps its records.
pub enum RunPlace {
    Local {
        /// `STATE.run`, beside the state's real file.
        folder: PathBuf,
        state: PathBuf,
    },
    Remote {
        location: RemoteLocation,
        client: Box<Client>,
    },
}

/// What [`RunPlace::open`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// This job opened the run.
    Created,
    /// The run was open already, for this plan.
    Joined(RunRecord),
}

impl RunPlace {
    /// The run's place for the state at `state`.
    pub fn of(state: &Path) -> Result<RunPlace, RunError> {
        if is_remote(state) {
            let location = RemoteLocation::of_path(state)?;
            let client = Box::new(Client::new(&location)?);
            return Ok(RunPlace::Remote { location, client });
        }
        let mut folder = crate::real_location(state).into_os_string();
        folder.push(".run");
        Ok(RunPlace::Local {
            folder: PathBuf::from(folder),
            state: state.to_path_buf(),
        })
    }

    /// The state as given.
    pub fn state_text(&self) -> String {
        match self {
            RunPlace::Local { state, .. } => state.display().to_string(),
            RunPlace::Remote { location, .. } => location.to_string(),
        }
    }

    /// Where a record named `name` is kept (for messages and local I/O).
    fn place(&self, name: &str) -> String {
        match self {
            RunPlace::Local { folder, .. } => folder.join(name).display().to_string(),
            RunPlace::Remote { location, .. } => at_key(location, self.key(name)),
        }
    }

    fn key(&self, name: &str) -> String {
        match self {
            RunPlace::Local { .. } => name.to_string(),
            RunPlace::Remote { location, .. } => format!("{}.run/{name}", location.key),
        }
    }

    fn get(&self, name: &str) -> Result<Option<Vec<u8>>, RunError> {
        match self {
            RunPlace::Local { folder, .. } => {
                let path = folder.join(name);
                let io = |source| RunError::Io {
                    path: path.clone(),
                    action: "read",
                    source,
                };
                match crate::beside::check_file(&path).map_err(io)? {
                    None => Ok(None),
                    Some(_) => std::fs::read(&path).map(Some).map_err(io),
                }
            }
            RunPlace::Remote { client, .. } => {
                Ok(client.get(&self.key(name))?.map(|object| object.bytes))
            }
        }
    }

    /// Writes `bytes` as `name`: only when absent (`create`), else
    /// replacing it whole. `Ok(false)`: `create` and it was there.
    fn put(&self, name: &str, bytes: Vec<u8>, create: bool) -> Result<bool, RunError> {
        match self {
            RunPlace::Local { folder, .. } => {
                let io = |action, source| RunError::Io {
                    path: folder.join(name),
                    action,
                    source,
                };
                crate::beside::create_folder(folder).map_err(|e| io("create", e))?;
                let temp = folder.join(format!(".{name}.{}.tmp", crate::random_uuid()));
                let written = write_new(&temp, &bytes);
                let placed = written.and_then(|()| match create {
                    true => std::fs::hard_link(&temp, folder.join(name)).map(|()| true),
                    false => std::fs::rename(&temp, folder.join(name)).map(|()| true),
                });
                let _ = std::fs::remove_file(&temp);
                match placed {
                    Ok(done) => Ok(done),
                    Err(e) if create && e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                    Err(e) => Err(io("write", e)),
                }
            }
            RunPlace::Remote { client, .. } => {
                let mode = if create {
                    Write::Create
                } else {
                    Write::Overwrite
                };
                Ok(matches!(
                    client.put(&self.key(name), bytes, mode)?,
                    Put::Written(_)
                ))
            }
        }
    }

    fn remove(&self, name: &str) -> Result<(), RunError> {
        match self {
            RunPlace::Local { folder, .. } => match std::fs::remove_file(folder.join(name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::Io {
                    path: folder.join(name),
                    action: "remove",
                    source: e,
                }),
                _ => Ok(()),
            },
            RunPlace::Remote { client, .. } => Ok(client.delete(&self.key(name))?),
        }
    }

    /// The names of the records in the run's place.
    pub(super) fn names(&self) -> Result<Vec<String>, RunError> {
        match self {
            RunPlace::Local { folder, .. } => {
                let found = crate::beside::check_folder(folder).map_err(|source| RunError::Io {
                    path: folder.clone(),
                    action: "read",
                    source,
                })?;
                if !found {
                    return Ok(Vec::new());
                }
                let entries = std::fs::read_dir(folder).map_err(|source| RunError::Io {
                    path: folder.clone(),
                    action: "read",
                    source,
                })?;
                let mut names: Vec<String> = entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .filter(|n| !n.starts_with('.'))
                    .collect();
                names.sort();
                Ok(names)
            }
            RunPlace::Remote { location, client } => {
                let prefix = format!("{}.run/", location.key);
                Ok(client
                    .list(&format!("{}.run", location.key))?
                    .into_iter()
                    .filter_map(|l| l.key.strip_prefix(&prefix).map(str::to_string))
                    .collect())
            }
        }
    }

    /// The open run, if any.
    pub fn read_run(&self) -> Result<Option<RunRecord>, RunError> {
        let Some(bytes) = self.get(RUN_FILE)? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RunError::Damaged {
                place: self.place(RUN_FILE),
                reason: e.to_string(),
            })
    }

    /// Refuses while a run is open (for the plans and deploys that are
    /// not its jobs), naming the command that closes it.
    pub fn refuse_open(&self) -> Result<(), RunError> {
        // A store that cannot be reached (or refuses the credentials) is
        // said as a run would say it, by the listing of the state's folder.
        if let RunPlace::Remote { client, .. } = self {
            client.check()?;
        }
        match self.read_run()? {
            None => Ok(()),
            Some(run) => Err(RunError::Open {
                state: self.state_text(),
                run: Box::new(run),
            }),
        }
    }

    /// Opens the run of `record.plan`, or joins it when it is open
    /// already; refuses the run of another plan.
    pub fn open(&self, record: &RunRecord) -> Result<Opened, RunError> {
        for _ in 0..3 {
            let bytes = serde_json::to_vec_pretty(record).unwrap_or_default();
            if self.put(RUN_FILE, bytes, true)? {
                return Ok(Opened::Created);
            }
            match self.read_run()? {
                // Closed just then: try again.
                None => continue,
                Some(open) if open.closing => {
                    return Err(RunError::Closing {
                        run: Box::new(open),
                    })
                }
                Some(open) if open.plan == record.plan => return Ok(Opened::Joined(open)),
                Some(open) => {
                    return Err(RunError::OtherRun {
                        state: self.state_text(),
                        run: Box::new(open),
                    })
                }
            }
        }
        Err(RunError::Damaged {
            place: self.place(RUN_FILE),
            reason: "it keeps appearing and disappearing".into(),
        })
    }

    /// The run is still open for `plan` (a job proves it before writing).
    pub fn still_open(&self, plan: &str) -> Result<(), RunError> {
        match self.read_run()? {
            Some(open) if open.closing => Err(RunError::Closing {
                run: Box::new(open),
            }),
            Some(open) if open.plan == plan => Ok(()),
            Some(open) => Err(RunError::OtherRun {
                state: self.state_text(),
                run: Box::new(open),
            }),
            None => Err(RunError::NotOpen {
                state: self.state_text(),
                plan: plan.to_string(),
            }),
        }
    }

    /// Marks the open run `run` as closing (`hub run finish`), or open
    /// again (`closing` false: finishing was refused).
    pub fn set_closing(&self, run: &RunRecord, closing: bool) -> Result<(), RunError> {
        let marked = RunRecord {
            closing,
            ..run.clone()
        };
        let bytes = serde_json::to_vec_pretty(&marked).unwrap_or_default();
        self.put(RUN_FILE, bytes, false).map(|_| ())
    }

    /// What the job of `component` recorded in this run, if anything.
    pub fn read_job(&self, component: &str) -> Result<Option<JobRecord>, RunError> {
        let name = format!("{component}{JOB_SUFFIX}");
        let Some(bytes) = self.get(&name)? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RunError::Damaged {
                place: self.place(&name),
                reason: e.to_string(),
            })
    }

    /// Records what a job did; the caller proved its lease just before.
    pub fn write_job(&self, record: &JobRecord) -> Result<(), RunError> {
        let name = format!("{}{JOB_SUFFIX}", record.component);
        let bytes = serde_json::to_vec(record).map_err(|e| RunError::Damaged {
            place: self.place(&name),
            reason: e.to_string(),
        })?;
        self.put(&name, bytes, false).map(|_| ())
    }

    /// Every job record of the run.
    pub fn jobs(&self) -> Result<Vec<JobRecord>, RunError> {
        let mut found = Vec::new();
        for name in self.names()? {
            if let Some(component) = name.strip_suffix(JOB_SUFFIX) {
                found.extend(self.read_job(component)?);
            }
        }
        Ok(found)
    }

    /// Removes the run's records (the run record last) and its folder.
    pub fn close(&self) -> Result<(), RunError> {
        for name in self.names()? {
            if name != RUN_FILE {
                self.remove(&name)?;
            }
        }
        self.remove(RUN_FILE)?;
        if let RunPlace::Local { folder, .. } = self {
            let _ = std::fs::remove_dir(folder);
        }
        Ok(())
    }
}

/// The location of the object `key` in the bucket of `location`.
pub(super) fn at_key(location: &RemoteLocation, key: String) -> String {
    RemoteLocation {
        key,
        ..location.clone()
    }
    .to_string()
}

/// Creates `path` (failing when it exists) holding `bytes`, flushed.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = crate::beside::create_new(path, crate::private::FILE_MODE)?;
    file.write_all(bytes)?;
    file.sync_all()
}
