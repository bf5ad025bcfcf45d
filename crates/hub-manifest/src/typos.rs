//! Whether an unknown key that looks like a typo stops a command.
//!
//! One decision for every command (`validate`, `elaborate`, `plan`,
//! `deploy`, `undeploy`): a near typo in a file of the user's own stack
//! (the stack file, its parameters files, `fromStack` parents in the same
//! repository) is an error, because the user can correct it; one in a
//! component manifest, which usually comes from elsewhere, is a warning
//! with its "did you mean". `--strict` makes both errors, `--lenient` both
//! warnings.

pub use crate::diag::Origin;
use crate::diag::{Warning, Warnings};
pub use crate::keys::{refused_hint, refused_hint_about, refused_message};
use crate::ManifestError;
use std::path::{Path, PathBuf};

/// What the command line asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TypoPolicy {
    /// Errors in the user's own files, warnings elsewhere.
    #[default]
    Default,
    /// `--strict`: errors everywhere.
    Strict,
    /// `--lenient`: warnings everywhere.
    Lenient,
}

impl TypoPolicy {
    /// The policy of `--strict` and `--lenient` (the command line lets
    /// only one of them be given).
    pub fn from_flags(strict: bool, lenient: bool) -> Self {
        match (strict, lenient) {
            (true, _) => TypoPolicy::Strict,
            (false, true) => TypoPolicy::Lenient,
            (false, false) => TypoPolicy::Default,
        }
    }
}

/// The one decision: whether a near typo read from a file of `origin`
/// is an error under `policy`.
pub fn is_refused(origin: Origin, policy: TypoPolicy) -> bool {
    match policy {
        TypoPolicy::Strict => true,
        TypoPolicy::Lenient => false,
        TypoPolicy::Default => origin == Origin::Own,
    }
}

/// Takes out of `warnings` the near typos that [`is_refused`] makes
/// errors and returns them as one error; the others stay warnings.
pub fn refuse(warnings: &mut Warnings, policy: TypoPolicy) -> Result<(), ManifestError> {
    let typos = warnings.take_near_typos_where(|w| is_refused(w.origin, policy));
    if typos.is_empty() {
        Ok(())
    } else {
        Err(ManifestError::NearTypos { typos })
    }
}

/// The repository holding `path`: the nearest folder above it with a
/// `.git` entry (a folder, or the file of a worktree or submodule).
pub fn repository_of(path: &Path) -> Option<PathBuf> {
    let path = std::fs::canonicalize(path).ok()?;
    path.ancestors()
        .skip(1)
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The origin of a `fromStack` parent: the user's own when it is in the
/// repository of the top stack (or when neither is in a repository).
pub fn parent_origin(top_repository: Option<&Path>, parent_manifest: &Path) -> Origin {
    if repository_of(parent_manifest).as_deref() == top_repository {
        Origin::Own
    } else {
        Origin::Foreign
    }
}

/// Marks the near typos of `warnings` as read from a file of `origin`.
pub fn mark(warnings: Warnings, origin: Origin) -> Warnings {
    let mut marked = Warnings::new();
    for warning in warnings.into_warnings() {
        marked.push(Warning {
            origin: if warning.near_typo {
                origin
            } else {
                warning.origin
            },
            ..warning
        });
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_decision_for_each_origin_and_flag() {
        use Origin::*;
        use TypoPolicy::*;
        assert!(is_refused(Own, Default));
        assert!(!is_refused(Foreign, Default));
        assert!(is_refused(Own, Strict));
        assert!(is_refused(Foreign, Strict));
        assert!(!is_refused(Own, Lenient));
        assert!(!is_refused(Foreign, Lenient));
        assert_eq!(TypoPolicy::from_flags(true, false), Strict);
        assert_eq!(TypoPolicy::from_flags(false, true), Lenient);
        assert_eq!(TypoPolicy::from_flags(false, false), Default);
    }

    #[test]
    fn refuse_takes_out_only_the_refused_typos() {
        let mut warnings = Warnings::default();
        warnings.warn(None, "plain");
        warnings.warn_near_typo(None, "own typo");
        let mut foreign = Warnings::default();
        foreign.warn_near_typo(None, "foreign typo");
        warnings.append(mark(foreign, Origin::Foreign));
        let Err(ManifestError::NearTypos { typos }) = refuse(&mut warnings, TypoPolicy::Default)
        else {
            panic!("the own typo is refused");
        };
        assert_eq!(typos.len(), 1);
        assert_eq!(typos[0].message, "own typo");
        let rest: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(rest, ["plain", "foreign typo"]);
        assert!(refuse(&mut warnings, TypoPolicy::Lenient).is_ok());
        assert!(refuse(&mut warnings, TypoPolicy::Strict).is_err());
    }
}
