//! Components the state holds and the stack no longer lists ("removed"):
//! `hub plan` shows them, `hub deploy` warns about them, and `hub deploy
//! --prune` undeploys them after the rest of the deploy and forgets them.
//!
//! A removed component is undeployed from the folder its entry records
//! (`dir`), with the parameters its entry records (the values its last run
//! had, outputs of other components included), dependents before what
//! they depend on as the entries' `depends` record them. An entry left
//! `undeployed` has nothing to take down: it is only forgotten.

use crate::child::interrupt::Interrupts;
use crate::child::otp;
use crate::child::process::{self, Exit, Invocation};
use hub_manifest::redact::SecretMasker;
use hub_params::format::substitution_text;
use hub_plan::decide::prune::{recorded_parameters, Removed};
use hub_plan::env::{self, ComponentVariables};
use hub_plan::outcome::lines::LineSink;
use hub_plan::source::discover;
use hub_plan::timeout::Limit;
use hub_state::{ComponentState, State};
use std::path::{Path, PathBuf};

/// What running a removed component's undeploy needs from the run.
pub struct Undeploy<'r> {
    /// The implementation verb: `undeploy`, or `undeploy-test` for `--dry`.
    pub verb: &'r str,
    pub base_env: &'r [(String, String)],
    pub base_dir: &'r Path,
    pub sink: &'r dyn LineSink,
    pub interrupts: &'r Interrupts,
    pub reveal: bool,
    pub log_file: Option<PathBuf>,
    /// `--timeout`, or the removed component's own limit when the stack
    /// still gives it one.
    pub limit: Option<Limit>,
}

/// How a removed component's undeploy ended.
pub enum Ended {
    Undeployed,
    Failed(String),
    Interrupted(i32),
}

/// Runs the undeploy of `removed` from its recorded folder with its
/// recorded parameters; what its environment warns about goes to
/// `warnings`.
pub fn undeploy(
    removed: &Removed,
    entry: &ComponentState,
    run: &Undeploy<'_>,
    warnings: &mut hub_manifest::diag::Warnings,
) -> Ended {
    let Some(dir) = removed.dir.as_deref() else {
        return Ended::Failed("the state does not record its folder".into());
    };
    let implementation = match discover::discover(dir, run.verb, true) {
        Ok(found) => found,
        Err(error) => return Ended::Failed(error.to_string()),
    };
    let Some((program, args)) = implementation.command() else {
        return Ended::Undeployed;
    };
    let params = recorded_parameters(entry);
    let mut masker = SecretMasker::new(run.reveal);
    for param in params.iter().filter(|p| p.secret) {
        masker.add(&substitution_text(param.value.as_ref()));
    }
    let random = otp::pad_to_env(&otp::random_pad(otp::DEFAULT_PAD_BYTES));
    let vars = ComponentVariables {
        component: &removed.name,
        params: &params,
        random: &random,
        component_dir: dir,
        base_dir: run.base_dir,
    };
    let child_env = env::component(run.base_env, &vars, warnings);
    let child_env = match implementation {
        discover::Implementation::Terraform { .. } => {
            hub_plan::terraform::environment(child_env, &params)
        }
        _ => child_env,
    };
    masker.add_credentials_in(&child_env);
    hub_plan::decide::records::mask_entry_secrets(&mut masker, &removed.name, entry);
    let invocation = Invocation {
        label: removed.name.clone(),
        program,
        args,
        cwd: dir.to_path_buf(),
        env: child_env,
        log_file: run.log_file.clone(),
        timeout: run.limit.map(|limit| limit.duration),
    };
    match process::run(&invocation, &masker, run.sink, run.interrupts) {
        Err(error) => Ended::Failed(error.to_string()),
        Ok(finished) => match finished.exit {
            Exit::Code(0) => Ended::Undeployed,
            Exit::Interrupted { signal } => Ended::Interrupted(signal),
            Exit::TimedOut => match run.limit {
                Some(limit) => Ended::Failed(format!("undeploy {limit}")),
                None => Ended::Failed("undeploy timed out".into()),
            },
            exit => Ended::Failed(format!("undeploy failed: {exit}")),
        },
    }
}

/// Forgets a pruned component: its entry, the capabilities it provided and
/// the stack-level outputs it produced.
pub fn forget(state: &mut State, name: &str) {
    state.components.shift_remove(name);
    hub_state::remove_provider(&mut state.provides, name);
    state.provides.retain(|_, providers| !providers.is_empty());
    state.captured_outputs.retain(|o| o.component != name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_plan::decide::prune::{check_folders, removed};

    fn state(entries: &[(&str, &[&str], &str)], order: &[&str]) -> State {
        let mut state = State::new(
            Default::default(),
            order.iter().map(|s| s.to_string()).collect(),
        );
        for (name, depends, status) in entries {
            let entry = state.component_mut(name);
            entry.status = (*status).into();
            entry.depends = depends.iter().map(|s| s.to_string()).collect();
            entry.dir = format!("/stack/{name}");
        }
        state
    }

    fn names(removed: &[Removed]) -> Vec<&str> {
        removed.iter().map(|r| r.name.as_str()).collect()
    }

    #[test]
    fn dependents_are_pruned_before_what_they_depend_on() {
        let state = state(
            &[
                ("app", &["db"], "deployed"),
                ("db", &["net"], "deployed"),
                ("net", &[], "deployed"),
                ("web", &[], "deployed"),
            ],
            &["web"],
        );
        let removed = removed(&state, &|name| name == "web");
        assert_eq!(names(&removed), ["app", "db", "net"]);
        assert_eq!(removed[0].dir.as_deref(), Some(Path::new("/stack/app")));
    }

    #[test]
    fn an_older_entry_s_dependencies_come_from_its_fingerprint() {
        let mut state = state(&[("app", &[], "deployed"), ("db", &[], "deployed")], &[]);
        let mut fingerprint = hub_state::Fingerprint::default();
        fingerprint.upstream.insert("db".into(), "sha256:0".into());
        state.component_mut("app").fingerprint = Some(fingerprint);
        let removed = removed(&state, &|_| false);
        assert_eq!(names(&removed), ["app", "db"]);
        assert_eq!(removed[0].depends, ["db"]);
    }

    #[test]
    fn without_dependencies_later_in_the_order_goes_first() {
        let state = state(
            &[("a", &[], "deployed"), ("b", &[], "deployed")],
            &["a", "b"],
        );
        assert_eq!(names(&removed(&state, &|_| false)), ["b", "a"]);
    }

    #[test]
    fn a_gone_folder_is_an_error_naming_state_rm_unless_already_undeployed() {
        let gone = Removed {
            name: "old".into(),
            dir: Some(PathBuf::from("/nonexistent/hub/old")),
            depends: Vec::new(),
            status: "deployed".into(),
        };
        let error = check_folders(std::slice::from_ref(&gone)).unwrap_err();
        assert!(
            error.to_string().contains("`/nonexistent/hub/old` is gone"),
            "{error}"
        );
        assert!(error.hint().is_some_and(|h| h.contains("hub state rm old")));
        let undeployed = Removed {
            status: "undeployed".into(),
            ..gone
        };
        assert!(check_folders(&[undeployed]).is_ok());
    }

    #[test]
    fn forgetting_drops_the_entry_its_capabilities_and_outputs() {
        let mut state = state(&[("old", &[], "deployed"), ("new", &[], "deployed")], &[]);
        state.provides.insert("sql".into(), vec!["old".into()]);
        state
            .provides
            .insert("dns".into(), vec!["old".into(), "new".into()]);
        forget(&mut state, "old");
        assert!(!state.components.contains_key("old"));
        assert_eq!(state.provides.keys().collect::<Vec<_>>(), ["dns"]);
        assert_eq!(state.provides["dns"], ["new"]);
    }
}
