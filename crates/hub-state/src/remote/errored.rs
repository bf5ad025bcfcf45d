//! When a remote state can no longer be written, the run's state is kept
//! locally: `BASENAME.errored` (the key's last segment) in the current folder (`-2`, `-3`… when
//! taken), to be uploaded with `hub state push FILE LOCATION`. A local
//! state that a run lost to another run (see [`crate::fence`]) is
//! kept the same way, beside the state file.

use crate::model::State;
use crate::StateError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `state` (rendered) in `folder` as `BASENAME.errored`; never
/// replaces a file. Returns the file's path.
pub fn save(folder: &Path, basename: &str, state: &State) -> Result<PathBuf, StateError> {
    let text = crate::integrity::framed(&crate::render_as(state, crate::StateFormat::Reference)?);
    let mut number = 0;
    loop {
        number += 1;
        let name = match number {
            1 => format!("{basename}.errored"),
            n => format!("{basename}-{n}.errored"),
        };
        let path = folder.join(name);
        let created = hub_manifest::private::open(
            &path,
            std::fs::OpenOptions::new().write(true).create_new(true),
            hub_manifest::private::FILE_MODE,
        );
        match created {
            Ok(mut file) => {
                return file
                    .write_all(text.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map(|()| path.clone())
                    .map_err(|source| StateError::Write {
                        path,
                        action: "write the state that could not be uploaded",
                        source,
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(StateError::Write {
                    path,
                    action: "write the state that could not be uploaded",
                    source,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StackMeta;

    #[test]
    fn an_errored_file_never_replaces_another() {
        let dir = tempfile::tempdir().expect("dir");
        let location = super::super::RemoteLocation::parse("s3://b/envs/dev.state").expect("parse");
        let location = location.basename().to_string();
        let mut state = State::new(StackMeta::default(), Vec::new());
        state.serial = 4;
        let first = save(dir.path(), &location, &state).expect("first");
        let second = save(dir.path(), &location, &state).expect("second");
        assert_eq!(first, dir.path().join("dev.state.errored"));
        assert_eq!(second, dir.path().join("dev.state-2.errored"));
        let text = std::fs::read_to_string(&second).expect("read");
        assert!(text.contains("serial: 4"), "{text}");
    }
}
