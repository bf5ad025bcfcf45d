//! The system's limits on a child's environment (Linux, `execve(2)`):
//! one string `NAME=value` may hold at most `MAX_ARG_STRLEN` bytes (32
//! pages: 128 KiB) with its terminating NUL, and the arguments and the
//! environment together at most `ARG_MAX` (`sysconf(_SC_ARG_MAX)`), each
//! string counted with its NUL and its pointer. Beyond either, the process
//! does not start ("Argument list too long"), whatever the variable.

use super::EnvEntry;
use crate::plan::NulByte;
use hub_manifest::diag::Location;
use hub_params::{Locked, Origin};
use std::path::Path;

/// Longest string `execve` takes, its NUL included (`MAX_ARG_STRLEN`).
pub(crate) const MAX_ARG_STRLEN: usize = 32 * 4096;

/// The variables `params` set (`env:`), with the size of each value as
/// the component gets it; `locked` tells where a value found among the
/// stack parameters was set.
pub fn env_entries(params: &[hub_params::ExpandedParam], locked: &Locked) -> Vec<EnvEntry> {
    let mut entries = Vec::with_capacity(params.iter().filter(|p| !p.env.is_empty()).count());
    entries.extend(params.iter().filter(|p| !p.env.is_empty()).map(|p| {
        let text = crate::env::env_text(p.value.as_ref());
        let nul_byte = text.contains('\0').then(|| {
            Box::new(NulByte {
                set_at: set_at(p, locked),
            })
        });
        EnvEntry::new(&p.env, &p.name, text.len(), nul_byte)
    }));
    entries
}

/// Where `param`'s value was set: the stack parameter it found, else its
/// own declaration.
fn set_at(param: &hub_params::ExpandedParam, locked: &Locked) -> Option<Location> {
    let found = match &param.origin {
        Origin::Found { key } => locked.get(key).and_then(|p| p.declared()),
        _ => None,
    };
    found.or_else(|| param.declared.clone())
}

/// A variable whose value holds a NUL byte: `execve` takes C strings, so
/// the value would end there and the process could not be started as
/// planned.
pub(super) fn nul_problem(entry: &EnvEntry, nul: &NulByte) -> (String, String) {
    let at = nul
        .set_at
        .as_ref()
        .map(|at| format!(", set at {at}"))
        .unwrap_or_default();
    let message = format!(
        "environment variable `{}` (parameter `{}`{at}) holds a NUL byte, which no process environment can carry: the process would not start",
        entry.variable(),
        entry.parameter()
    );
    let hint = "remove the NUL byte (`\\0` in YAML) from the value; pass binary data through a file the component reads (a template, or the path of a file), or encoded (base64)".to_string();
    (message, hint)
}

/// An environment the system would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TooLarge {
    /// One variable over [`MAX_ARG_STRLEN`].
    Variable {
        variable: String,
        parameter: Option<String>,
        /// `NAME=value` with its NUL.
        bytes: usize,
    },
    /// Everything over `ARG_MAX`.
    Total {
        bytes: usize,
        limit: usize,
        /// The largest variable, and its size.
        largest: Option<(String, usize)>,
    },
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooLarge::Variable {
                variable,
                parameter,
                bytes,
            } => {
                write!(f, "environment variable `{variable}`")?;
                if let Some(parameter) = parameter {
                    write!(f, " (parameter `{parameter}`)")?;
                }
                write!(
                    f,
                    " is {} ({bytes} bytes as `{variable}=…`), over the system's limit of {} for one variable: the process would not start (\"Argument list too long\")",
                    size_text(*bytes),
                    size_text(MAX_ARG_STRLEN)
                )
            }
            TooLarge::Total {
                bytes,
                limit,
                largest,
            } => {
                write!(
                    f,
                    "the environment and arguments are {} ({bytes} bytes), over the system's limit of {} (ARG_MAX): the process would not start (\"Argument list too long\")",
                    size_text(*bytes),
                    size_text(*limit)
                )?;
                if let Some((name, size)) = largest {
                    write!(
                        f,
                        "; the largest variable is `{name}` ({})",
                        size_text(*size)
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl TooLarge {
    pub fn hint(&self) -> String {
        "pass a large value through a file, not the environment: drop the parameter's `env:` and use it in one of the component's templates (rendered into files), or give the component the path of a file that holds it (its path, not its content through `fromFile:`)".into()
    }
}

/// `128 KiB`, `200 KiB`, `1.5 MiB`, `70 bytes`.
pub fn size_text(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{} KiB", (bytes + 512) / 1024),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// `sysconf(_SC_ARG_MAX)`, or 2 MiB when the system does not say.
fn arg_max() -> usize {
    // SAFETY: sysconf reads a system constant and has no preconditions.
    let limit = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    usize::try_from(limit)
        .ok()
        .filter(|n| *n > 0)
        .unwrap_or(2 * 1_048_576)
}

/// What `execve` counts for one string: its bytes, its NUL, its pointer.
fn counted(bytes: usize) -> usize {
    bytes + 1 + std::mem::size_of::<usize>()
}

/// The environment `env` (complete, as the child gets it) and the program
/// with its arguments fit the system's limits.
pub fn environment_fits(
    env: &[(String, String)],
    program: &Path,
    args: &[String],
) -> Result<(), TooLarge> {
    let sizes: Vec<(&str, Option<&str>, usize)> = env
        .iter()
        .map(|(name, value)| (name.as_str(), None, value.len()))
        .collect();
    fits(&sizes, Some((program, args)))
}

/// The planned environment: hub's base environment with the component's
/// variables over it.
pub(super) fn planned_fits(
    base: &[(String, String)],
    planned: &[EnvEntry],
    program: Option<(&Path, &[String])>,
) -> Result<(), TooLarge> {
    let mut sizes: indexmap::IndexMap<&str, (Option<&str>, usize)> = base
        .iter()
        .map(|(name, value)| (name.as_str(), (None, value.len())))
        .collect();
    for entry in planned {
        sizes.insert(entry.variable(), (Some(entry.parameter()), entry.bytes));
    }
    let sizes: Vec<(&str, Option<&str>, usize)> = sizes
        .into_iter()
        .map(|(name, (parameter, bytes))| (name, parameter, bytes))
        .collect();
    fits(&sizes, program)
}

fn fits(
    sizes: &[(&str, Option<&str>, usize)],
    program: Option<(&Path, &[String])>,
) -> Result<(), TooLarge> {
    let mut total = 0;
    let mut largest: Option<(&str, usize)> = None;
    for (name, parameter, value) in sizes {
        let string = name.len() + 1 + value;
        if string + 1 > MAX_ARG_STRLEN {
            return Err(TooLarge::Variable {
                variable: name.to_string(),
                parameter: parameter.map(str::to_string),
                bytes: string + 1,
            });
        }
        total += counted(string);
        if largest.is_none_or(|(_, size)| *value > size) {
            largest = Some((name, *value));
        }
    }
    if let Some((program, args)) = program {
        total += counted(program.as_os_str().len());
        total += args.iter().map(|a| counted(a.len())).sum::<usize>();
    }
    let limit = arg_max();
    match total > limit {
        false => Ok(()),
        true => Err(TooLarge::Total {
            bytes: total,
            limit,
            largest: largest.map(|(name, size)| (name.to_string(), size)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_variable_over_128_kib_is_named_with_its_size() {
        let env = vec![
            ("PATH".to_string(), "/bin".to_string()),
            ("BIG".to_string(), "a".repeat(200 * 1024)),
        ];
        let error = environment_fits(&env, Path::new("/bin/true"), &[]).expect_err("too large");
        assert_eq!(
            error.to_string(),
            "environment variable `BIG` is 200 KiB (204805 bytes as `BIG=…`), over the system's limit of 128 KiB for one variable: the process would not start (\"Argument list too long\")"
        );
    }

    #[test]
    fn the_limit_counts_the_name_the_equals_sign_and_the_nul() {
        let at_limit = "a".repeat(MAX_ARG_STRLEN - "X=".len() - 1);
        let env = vec![("X".to_string(), at_limit.clone())];
        assert_eq!(environment_fits(&env, Path::new("/bin/true"), &[]), Ok(()));
        let env = vec![("X".to_string(), format!("{at_limit}a"))];
        assert!(environment_fits(&env, Path::new("/bin/true"), &[]).is_err());
    }

    #[test]
    fn many_variables_over_arg_max_are_refused_as_a_whole() {
        let limit = arg_max();
        let count = limit / (100 * 1024) + 2;
        let env: Vec<(String, String)> = (0..count)
            .map(|i| (format!("V{i}"), "b".repeat(100 * 1024)))
            .collect();
        let error = environment_fits(&env, Path::new("/bin/true"), &[]).expect_err("too large");
        assert!(matches!(error, TooLarge::Total { .. }), "{error}");
        assert!(error.to_string().contains("(ARG_MAX)"), "{error}");
    }

    #[test]
    fn an_entry_keeps_both_names_in_one_small_text() {
        let entry = EnvEntry::new("DB_HOST", "db.host", 9, None);
        assert_eq!(
            (entry.variable(), entry.parameter()),
            ("DB_HOST", "db.host")
        );
        let planned = [entry, EnvEntry::new("É", "", 1, None)];
        assert_eq!((planned[1].variable(), planned[1].parameter()), ("É", ""));
        assert!(std::mem::size_of::<EnvEntry>() <= 40);
        // The names reach the preflight's message as they were.
        let base = [("PATH".to_string(), "/bin".to_string())];
        let big = [EnvEntry::new("BIG", "big.value", 200 * 1024, None)];
        let error = planned_fits(&base, &big, None).expect_err("too large");
        assert!(
            matches!(&error, TooLarge::Variable { variable, parameter: Some(p), .. } if variable == "BIG" && p == "big.value"),
            "{error:?}"
        );
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(size_text(70), "70 bytes");
        assert_eq!(size_text(131072), "128 KiB");
        assert_eq!(size_text(3 * 1_048_576 / 2), "1.5 MiB");
    }
}
