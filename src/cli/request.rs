//! The parsed flags turned into the workflows' requests
//! ([`hub_workflow::request`]), field for field and variant for variant:
//! each type here has its twin there, without clap.

// A field of the same type on both sides converts to itself.
#![allow(clippy::useless_conversion)]

/// `From<cli::NAME> for request::NAME`, each field converted.
macro_rules! fields {
    ($name:ident { $($field:ident),* $(,)? }) => {
        impl From<super::$name> for hub_workflow::request::$name {
            fn from(args: super::$name) -> Self {
                Self { $($field: args.$field.into()),* }
            }
        }
    };
}

/// `From<cli::NAME> for request::NAME` of a subcommand enum, each
/// variant holding one value.
macro_rules! variants {
    ($name:ident { $($variant:ident),* $(,)? }) => {
        impl From<super::$name> for hub_workflow::request::$name {
            fn from(command: super::$name) -> Self {
                match command {
                    $(super::$name::$variant(args) => Self::$variant(args.into())),*
                }
            }
        }
    };
}

impl From<super::ChangeArgs> for hub_workflow::request::ChangeArgs {
    fn from(args: super::ChangeArgs) -> Self {
        Self {
            change: args.change,
            sha: args.sha,
            author: args.author,
            base_sha: args.base_sha,
            mergeable: args.mergeable,
            // Said by the CI event only (`hub ci`).
            association: None,
            trusted: None,
            merged_head: None,
            queue: None,
        }
    }
}
fields!(ChangeLockArgs { ignore_change_lock });
fields!(ChangeCommandArgs { command });
variants!(ChangeCommand {
    List,
    Show,
    Merged,
    Closed,
    Unlock
});
fields!(ChangeStateArgs { state });
fields!(ChangeListArgs { state });
fields!(ChangeIdArgs { id, state, author });
fields!(ChangeShowArgs { id, state });
fields!(ChangeUnlockArgs { change, yes });
fields!(CheckArgs {
    stack,
    state,
    lock,
    selection,
    jobs,
    os_environment,
    timeout,
    reveal,
    format,
    detailed_exitcode
});
fields!(CiArgs {
    stack,
    state,
    lock,
    policy,
    comment,
    allow_association,
    allow_user,
    plan_from,
    plan_forks,
    plan_steps,
    relay_max_age,
    jobs,
    timeout
});
fields!(DeployArgs {
    common,
    execute,
    changed,
    replace,
    prune,
    plan,
    job,
    replan,
    change,
    change_lock,
    compatibility
});
fields!(ReplaceArgs { replace });
fields!(UndeployArgs {
    common,
    execute,
    guess,
    change,
    change_lock,
    compatibility
});
fields!(PlanArgs {
    common,
    guess,
    replace,
    changed,
    prune,
    undeploy,
    out,
    format,
    detailed_exitcode,
    verbose,
    plan_steps,
    change
});
fields!(ElaborateArgs {
    stack,
    params,
    output,
    environment,
    base_dir,
    platform_provides,
    state,
    lenient,
    strict,
    state_stack_parameters,
    compressed
});
fields!(ExplainArgs {
    state,
    elaborate,
    files,
    component,
    global,
    raw_outputs,
    op_log,
    json,
    yaml,
    kv,
    sh,
    reveal
});
fields!(GraphArgs {
    manifest,
    state,
    environment,
    base_dir,
    format,
    affected,
    plan_steps
});
fields!(InvokeArgs {
    component,
    verb,
    elaborate,
    state,
    base_dir,
    os_environment,
    environment,
    force,
    reveal,
    timeout
});
fields!(RenderArgs {
    globs,
    kind,
    additional,
    elaborate,
    state,
    component,
    base_dir
});
fields!(CelArgs {
    expression,
    bindings,
    yaml,
    yaml_short
});
fields!(ParamsArgs {
    elaborated,
    state,
    environment,
    component,
    format,
    reveal
});
fields!(PipelineArgs {
    target,
    stack,
    state,
    allow_local_state,
    selection,
    changed,
    undeploy,
    plan,
    output,
    image,
    tags,
    group,
    hub,
    plan_file,
    policy
});
fields!(PolicyArgs { policies });
fields!(PolicyCommandArgs { command });
variants!(PolicyCommand { Test });
fields!(PolicyTestArgs {
    plan,
    policies,
    format
});
fields!(ReportArgs {
    input,
    from,
    output,
    state
});
fields!(CommonRunArgs {
    stack,
    state,
    selection,
    run,
    policy
});
fields!(StackArgs {
    manifest,
    environment,
    base_dir,
    lenient,
    strict,
    clouds
});
fields!(StateArgs {
    state,
    no_state,
    lock
});
fields!(LockTimeoutArgs { lock_timeout });
impl From<super::SelectionArgs> for hub_workflow::request::SelectionArgs {
    fn from(args: super::SelectionArgs) -> Self {
        Self {
            components: args.components,
            affected: args.affected,
            with_deps: args.with_deps,
            with_dependents: args.with_dependents,
            offset: args.offset,
            limit: args.limit,
            // clap admits only the words of the vocabulary.
            status: args
                .status
                .iter()
                .filter_map(|word| hub_state::HealthStatus::parse(word))
                .collect(),
        }
    }
}
fields!(RunArgs {
    force,
    reveal,
    jobs,
    report
});
fields!(ExecuteArgs {
    os_environment,
    compressed,
    encrypted,
    state_format,
    dry,
    timeout,
    why,
    fail_fast
});
fields!(CompatibilityArgs {
    git_outputs,
    git_outputs_status,
    load_global_state,
    write_oplog_to_state_on_error,
    switch_kube_context
});
fields!(GuessArgs { guess });
fields!(RunCommandArgs { command });
variants!(RunCommand { Finish });
fields!(RunFinishArgs {
    plan,
    state,
    report
});
fields!(UnlockArgs {
    state,
    legacy_state,
    force,
    yes,
    id
});
fields!(StateCommandArgs { command });
variants!(StateCommand {
    Pull,
    List,
    Show,
    Rm,
    Mv,
    Push
});
fields!(StateLocationArgs { state });
fields!(StateChangeArgs {
    location,
    lock,
    state_format
});
fields!(StateListArgs {
    location,
    legacy_state,
    json
});
fields!(StateShowArgs {
    component,
    location,
    json,
    reveal
});
fields!(StateRmArgs {
    components,
    change,
    yes,
    elaborate
});
fields!(StateMvArgs { old, new, change });
fields!(StatePushArgs {
    file,
    location,
    force
});
fields!(StatePullArgs {
    state,
    output,
    legacy,
    state_format
});
fields!(UtilArgs { command });
variants!(UtilCommand { Run, Otp });
fields!(UtilOtpArgs { mode });
fields!(UtilRunArgs {
    label,
    grace,
    timeout,
    log,
    mask_env,
    mask_stdin,
    mask,
    clear_env,
    env,
    cwd,
    command
});
fields!(ValidateArgs {
    files,
    lenient,
    strict
});
