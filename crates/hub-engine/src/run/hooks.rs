//! Component hooks (hubctl, deploy.md §12.1): scripts a stack attaches to
//! a component reference, run before (`pre-VERB`) and after (`post-VERB`)
//! the component's implementation, in the component's folder and with its
//! environment, in the order they are listed.
//!
//! A hook whose `triggers` match is looked up ([`find_script`]). One that
//! is not found stops the run before any component starts (the preflight,
//! [`missing`]), unless it says `error: ignore`: such a hook is optional,
//! and a missing one is skipped with a warning. A hook that fails fails the
//! component — even an optional one — unless it says `error: ignore`, in
//! which case the failure is only reported. Hook output goes through the
//! same process runner as the implementation: prefixed with the
//! component's name, masked, and appended to the component's log.

use crate::child::interrupt::Interrupts;
use crate::child::otp::PAD_VARIABLE;
use crate::child::process::{self, Exit, Invocation};
use hub_manifest::redact::SecretMasker;
use hub_manifest::Hook;
use hub_plan::decide::hooks::{find_script, triggered, Missing};
use hub_plan::outcome::lines::LineSink;
use hub_plan::timeout::Limit;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One hook ready to run.
#[derive(Debug)]
pub struct Ready {
    /// The hook's `file`, for messages.
    pub file: String,
    /// The trigger it runs for (`pre-deploy`, …).
    pub trigger: String,
    pub ignore_errors: bool,
    pub invocation: Invocation,
}

/// The hooks of one component's run: those before and those after its
/// implementation.
#[derive(Debug, Default)]
pub struct Planned {
    pub pre: Vec<Ready>,
    pub post: Vec<Ready>,
}

/// Where hooks are run and with what.
pub struct Context<'c> {
    pub component: &'c str,
    /// The implementation verb: `deploy`, `undeploy`, `deploy-test`, …
    pub verb: &'c str,
    pub component_dir: &'c Path,
    pub stack_dir: &'c Path,
    /// The component's environment (the one-time pad is left out).
    pub env: &'c [(String, String)],
    pub log_file: Option<PathBuf>,
}

/// The hooks among `hooks` that `pre-VERB` and `post-VERB` trigger, with
/// their scripts found; the warnings say which were not found or have a
/// trigger that is not a valid pattern.
pub fn plan(hooks: &[Hook], context: &Context<'_>) -> (Planned, Vec<String>) {
    let mut planned = Planned::default();
    let mut warnings = Vec::new();
    let env: Vec<(String, String)> = context
        .env
        .iter()
        .filter(|(name, _)| name != PAD_VARIABLE)
        .cloned()
        .collect();
    for (when, list) in [("pre", &mut planned.pre), ("post", &mut planned.post)] {
        let trigger = format!("{when}-{}", context.verb);
        for hook in hooks {
            match triggered(hook, &trigger) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(pattern) => {
                    warnings.push(format!(
                        "component `{}`: hook `{}` has a trigger that is not a pattern: `{pattern}`",
                        context.component, hook.file
                    ));
                    continue;
                }
            }
            let Some(program) = find_script(&hook.file, context.component_dir, context.stack_dir)
            else {
                let missing = Missing::of(hook, &trigger, context.component_dir, context.stack_dir);
                warnings.push(missing.message(context.component));
                continue;
            };
            list.push(Ready {
                file: hook.file.clone(),
                trigger: trigger.clone(),
                ignore_errors: hook.ignores_errors(),
                invocation: Invocation {
                    label: context.component.to_string(),
                    program,
                    args: Vec::new(),
                    cwd: context.component_dir.to_path_buf(),
                    env: env.clone(),
                    log_file: context.log_file.clone(),
                    timeout: None,
                },
            });
        }
    }
    (planned, warnings)
}

/// Why the hooks of one phase stopped the component.
#[derive(Debug, Clone, PartialEq)]
pub enum Stopped {
    /// A hook without `error: ignore` failed: the reason.
    Failed(String),
    /// hub was interrupted while a hook ran.
    Interrupted(i32),
    /// The component's time limit ran out during (or before) a hook, which
    /// `error: ignore` does not excuse: the reason and the limit.
    TimedOut(String, Limit),
}

/// Runs `hooks` one after the other, within `budget`; the first failure
/// that is not ignored stops them. Ignored failures are returned as
/// messages.
pub(crate) fn run_phase(
    hooks: &[Ready],
    budget: &Budget,
    masker: &SecretMasker,
    sink: &dyn LineSink,
    interrupts: &Interrupts,
) -> (Result<(), Stopped>, Vec<String>) {
    let mut ignored = Vec::new();
    for hook in hooks {
        let timed_out = |limit: Limit| {
            let reason = format!("hook `{}` ({}) {limit}", hook.file, hook.trigger);
            Err(Stopped::TimedOut(reason, limit))
        };
        let span = crate::trace::hook(&hook.invocation.label, &hook.file, &hook.trigger);
        let Some(invocation) = budget.bound(&hook.invocation) else {
            return (budget.limit().map_or(Ok(()), timed_out), ignored);
        };
        let failure = match process::run(&invocation, masker, sink, interrupts) {
            Ok(finished) => match finished.exit {
                Exit::Code(0) => continue,
                Exit::Interrupted { signal } => {
                    return (Err(Stopped::Interrupted(signal)), ignored)
                }
                Exit::TimedOut => {
                    if let Some(limit) = budget.limit() {
                        return (timed_out(limit), ignored);
                    }
                    format!("hook `{}` ({}) timed out", hook.file, hook.trigger)
                }
                exit => format!("hook `{}` ({}) {exit}", hook.file, hook.trigger),
            },
            Err(error) => format!("hook `{}` ({}): {error}", hook.file, hook.trigger),
        };
        span.fail(&failure);
        if hook.ignore_errors {
            ignored.push(format!("{failure} (ignored: `error: ignore`)"));
        } else {
            return (Err(Stopped::Failed(failure)), ignored);
        }
    }
    (Ok(()), ignored)
}

/// What happened around (and in) one component's implementation.
#[derive(Debug)]
pub struct Around {
    pub pre: Result<(), Stopped>,
    /// The implementation's run; `None` when a pre hook stopped it or the
    /// component has no implementation (`lifecycle.bare`).
    pub main: Option<Result<process::Finished, process::ProcessError>>,
    pub post: Result<(), Stopped>,
    /// Failures of hooks with `error: ignore`.
    pub ignored: Vec<String>,
}

impl Around {
    /// The hooks and the implementation all ended well (exit 0).
    pub fn succeeded(&self) -> bool {
        self.pre.is_ok()
            && self.post.is_ok()
            && matches!(&self.main, Some(Ok(finished)) if finished.exit == Exit::Code(0))
    }
}

/// Pre hooks, the implementation (when there is one), then post hooks —
/// also after an implementation that failed, not after an interruption or
/// a timeout. All of them share the component's time `limit`.
pub(crate) fn run_around(
    planned: &Planned,
    main: Option<&Invocation>,
    limit: Option<Limit>,
    masker: &SecretMasker,
    sink: &dyn LineSink,
    interrupts: &Interrupts,
) -> Around {
    let budget = Budget::start(limit);
    let (pre, mut ignored) = run_phase(&planned.pre, &budget, masker, sink, interrupts);
    if pre.is_err() {
        return Around {
            pre,
            main: None,
            post: Ok(()),
            ignored,
        };
    }
    let main = main.map(|invocation| match budget.bound(invocation) {
        Some(bound) => process::run(&bound, masker, sink, interrupts),
        None => Ok(not_started_in_time()),
    });
    let stopped = matches!(
        &main,
        Some(Ok(process::Finished {
            exit: Exit::Interrupted { .. } | Exit::TimedOut,
            ..
        }))
    );
    let post = match stopped {
        true => Ok(()),
        false => {
            let (post, more) = run_phase(&planned.post, &budget, masker, sink, interrupts);
            ignored.extend(more);
            post
        }
    };
    Around {
        pre,
        main,
        post,
        ignored,
    }
}

/// The implementation's result when the pre hooks used up the
/// component's time.
fn not_started_in_time() -> process::Finished {
    process::Finished {
        exit: Exit::TimedOut,
        stdout: String::new(),
        tail: String::new(),
        duration: std::time::Duration::ZERO,
    }
}

/// One component's limit, counting from its start: the processes it runs
/// share it.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    limit: Option<Limit>,
    started: Instant,
}

impl Budget {
    pub fn start(limit: Option<Limit>) -> Budget {
        Budget {
            limit,
            started: Instant::now(),
        }
    }

    pub fn limit(&self) -> Option<Limit> {
        self.limit
    }

    /// `invocation` bound by what is left of the limit; `None` when
    /// nothing is left (the process must not start).
    pub fn bound<'i>(&self, invocation: &'i Invocation) -> Option<Cow<'i, Invocation>> {
        let Some(limit) = self.limit else {
            return Some(Cow::Borrowed(invocation));
        };
        let left = limit.duration.checked_sub(self.started.elapsed())?;
        if left.is_zero() {
            return None;
        }
        let mut bound = invocation.clone();
        bound.timeout = Some(left);
        Some(Cow::Owned(bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(file: &str, triggers: &[&str]) -> Hook {
        Hook {
            file: file.into(),
            triggers: triggers.iter().map(|t| t.to_string()).collect(),
            ..Hook::default()
        }
    }

    #[test]
    fn triggers_are_shell_patterns() {
        assert_eq!(
            triggered(&hook("a", &["pre-deploy"]), "pre-deploy"),
            Ok(true)
        );
        assert_eq!(
            triggered(&hook("a", &["post-*"]), "post-undeploy-test"),
            Ok(true)
        );
        assert_eq!(triggered(&hook("a", &["post-*"]), "pre-deploy"), Ok(false));
        assert_eq!(triggered(&hook("a", &[]), "pre-deploy"), Ok(false));
        assert_eq!(
            triggered(&hook("a", &["pre-[", "pre-deploy"]), "pre-deploy"),
            Err("pre-[".into())
        );
    }

    #[test]
    fn scripts_are_found_in_the_component_then_the_stack_folder() {
        let root = tempfile::tempdir().expect("tmp");
        let component = root.path().join("c");
        std::fs::create_dir_all(component.join("bin")).expect("mkdir");
        std::fs::create_dir_all(root.path().join(".hub")).expect("mkdir");
        std::fs::write(component.join("bin/check.sh"), "").expect("write");
        std::fs::write(root.path().join(".hub/notify"), "").expect("write");
        let found = |file| find_script(file, &component, root.path());
        assert_eq!(found("check"), Some(component.join("bin/check.sh")));
        assert_eq!(found("notify"), Some(root.path().join(".hub/notify")));
        assert_eq!(found("no-such-hook-anywhere"), None);
    }

    fn shell(script: &str, dir: &Path) -> Invocation {
        Invocation {
            label: "app".into(),
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: dir.to_path_buf(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            log_file: None,
            timeout: None,
        }
    }

    fn ready(file: &str, trigger: &str, ignore_errors: bool, invocation: Invocation) -> Ready {
        Ready {
            file: file.into(),
            trigger: trigger.into(),
            ignore_errors,
            invocation,
        }
    }

    #[test]
    fn the_hooks_and_the_implementation_share_the_time_limit() {
        use hub_plan::timeout::Source;
        use std::time::Duration;
        let dir = tempfile::tempdir().expect("tmp");
        let limit = Limit {
            duration: Duration::from_millis(300),
            source: Source::Flag,
        };
        // `error: ignore` does not excuse a timeout; the implementation and
        // the post hook never start.
        let planned = Planned {
            pre: vec![ready(
                "wait",
                "pre-deploy",
                true,
                shell("sleep 30", dir.path()),
            )],
            post: vec![ready(
                "after",
                "post-deploy",
                false,
                shell("touch post", dir.path()),
            )],
        };
        let main = shell("touch main", dir.path());
        let started = Instant::now();
        let around = run_around(
            &planned,
            Some(&main),
            Some(limit),
            &SecretMasker::new(false),
            &hub_plan::outcome::lines::MemorySink::default(),
            &Interrupts::unwatched(),
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            around.pre,
            Err(Stopped::TimedOut(
                "hook `wait` (pre-deploy) timed out after 300ms (--timeout)".into(),
                limit
            ))
        );
        assert!(around.main.is_none());
        assert!(!dir.path().join("main").exists() && !dir.path().join("post").exists());
    }

    #[test]
    fn an_implementation_that_takes_the_time_left_times_out() {
        use hub_plan::timeout::Source;
        use std::time::Duration;
        let dir = tempfile::tempdir().expect("tmp");
        let limit = Limit {
            duration: Duration::from_millis(300),
            source: Source::Stack,
        };
        let planned = Planned {
            pre: vec![ready(
                "quick",
                "pre-deploy",
                false,
                shell("true", dir.path()),
            )],
            post: vec![ready(
                "after",
                "post-deploy",
                false,
                shell("touch post", dir.path()),
            )],
        };
        let around = run_around(
            &planned,
            Some(&shell("sleep 30", dir.path())),
            Some(limit),
            &SecretMasker::new(false),
            &hub_plan::outcome::lines::MemorySink::default(),
            &Interrupts::unwatched(),
        );
        assert_eq!(around.pre, Ok(()));
        let finished = around.main.expect("it ran").expect("it started");
        assert_eq!(finished.exit, Exit::TimedOut);
        assert_eq!(around.post, Ok(()));
        assert!(
            !dir.path().join("post").exists(),
            "no post hook after a timeout"
        );
    }
}
