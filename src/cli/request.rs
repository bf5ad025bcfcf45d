//! The parsed flags turned into the workflows' requests
//! ([`hub_workflow::request`]), field for field.

use hub_workflow::request as rq;

impl From<super::ChangeArgs> for rq::ChangeArgs {
    fn from(args: super::ChangeArgs) -> Self {
        Self {
            change: args.change,
            sha: args.sha,
            author: args.author,
        }
    }
}

impl From<super::ChangeLockArgs> for rq::ChangeLockArgs {
    fn from(args: super::ChangeLockArgs) -> Self {
        Self {
            ignore_change_lock: args.ignore_change_lock,
        }
    }
}

impl From<super::ChangeCommandArgs> for rq::ChangeCommandArgs {
    fn from(args: super::ChangeCommandArgs) -> Self {
        Self {
            command: args.command.into(),
        }
    }
}

impl From<super::ChangeCommand> for rq::ChangeCommand {
    fn from(command: super::ChangeCommand) -> Self {
        match command {
            super::ChangeCommand::List(args) => Self::List(args.into()),
            super::ChangeCommand::Show(args) => Self::Show(args.into()),
            super::ChangeCommand::Merged(args) => Self::Merged(args.into()),
            super::ChangeCommand::Closed(args) => Self::Closed(args.into()),
            super::ChangeCommand::Unlock(args) => Self::Unlock(args.into()),
        }
    }
}

impl From<super::ChangeStateArgs> for rq::ChangeStateArgs {
    fn from(args: super::ChangeStateArgs) -> Self {
        Self {
            state: args.state,
        }
    }
}

impl From<super::ChangeListArgs> for rq::ChangeListArgs {
    fn from(args: super::ChangeListArgs) -> Self {
        Self {
            state: args.state.into(),
        }
    }
}

impl From<super::ChangeIdArgs> for rq::ChangeIdArgs {
    fn from(args: super::ChangeIdArgs) -> Self {
        Self {
            id: args.id,
            state: args.state.into(),
            author: args.author,
        }
    }
}

impl From<super::ChangeShowArgs> for rq::ChangeShowArgs {
    fn from(args: super::ChangeShowArgs) -> Self {
        Self {
            id: args.id,
            state: args.state.into(),
        }
    }
}

impl From<super::ChangeUnlockArgs> for rq::ChangeUnlockArgs {
    fn from(args: super::ChangeUnlockArgs) -> Self {
        Self {
            change: args.change.into(),
            yes: args.yes,
        }
    }
}

impl From<super::CheckArgs> for rq::CheckArgs {
    fn from(args: super::CheckArgs) -> Self {
        Self {
            stack: args.stack.into(),
            state: args.state,
            lock: args.lock.into(),
            selection: args.selection.into(),
            jobs: args.jobs,
            os_environment: args.os_environment,
            timeout: args.timeout,
            reveal: args.reveal,
            format: args.format,
            detailed_exitcode: args.detailed_exitcode,
        }
    }
}

impl From<super::CiArgs> for rq::CiArgs {
    fn from(args: super::CiArgs) -> Self {
        Self {
            stack: args.stack.into(),
            state: args.state,
            lock: args.lock.into(),
            policy: args.policy.into(),
            comment: args.comment,
            allow_association: args.allow_association,
            allow_user: args.allow_user,
            plan_from: args.plan_from,
            plan_forks: args.plan_forks,
            relay_max_age: args.relay_max_age,
            jobs: args.jobs,
            timeout: args.timeout,
        }
    }
}

impl From<super::DeployArgs> for rq::DeployArgs {
    fn from(args: super::DeployArgs) -> Self {
        Self {
            common: args.common.into(),
            execute: args.execute.into(),
            changed: args.changed,
            replace: args.replace.into(),
            prune: args.prune,
            plan: args.plan,
            job: args.job,
            change: args.change.into(),
            change_lock: args.change_lock.into(),
            compatibility: args.compatibility.into(),
        }
    }
}

impl From<super::ReplaceArgs> for rq::ReplaceArgs {
    fn from(args: super::ReplaceArgs) -> Self {
        Self {
            replace: args.replace,
        }
    }
}

impl From<super::UndeployArgs> for rq::UndeployArgs {
    fn from(args: super::UndeployArgs) -> Self {
        Self {
            common: args.common.into(),
            execute: args.execute.into(),
            guess: args.guess.into(),
            change: args.change.into(),
            change_lock: args.change_lock.into(),
            compatibility: args.compatibility.into(),
        }
    }
}

impl From<super::PlanArgs> for rq::PlanArgs {
    fn from(args: super::PlanArgs) -> Self {
        Self {
            common: args.common.into(),
            guess: args.guess.into(),
            replace: args.replace.into(),
            changed: args.changed,
            prune: args.prune,
            undeploy: args.undeploy,
            out: args.out,
            format: args.format,
            detailed_exitcode: args.detailed_exitcode,
            verbose: args.verbose,
            change: args.change.into(),
        }
    }
}

impl From<super::ElaborateArgs> for rq::ElaborateArgs {
    fn from(args: super::ElaborateArgs) -> Self {
        Self {
            stack: args.stack,
            params: args.params,
            output: args.output,
            environment: args.environment,
            base_dir: args.base_dir,
            platform_provides: args.platform_provides,
            state: args.state,
            lenient: args.lenient,
            strict: args.strict,
            state_stack_parameters: args.state_stack_parameters,
            compressed: args.compressed,
        }
    }
}

impl From<super::ExplainArgs> for rq::ExplainArgs {
    fn from(args: super::ExplainArgs) -> Self {
        Self {
            state: args.state,
            elaborate: args.elaborate,
            files: args.files,
            component: args.component,
            global: args.global,
            raw_outputs: args.raw_outputs,
            op_log: args.op_log,
            json: args.json,
            yaml: args.yaml,
            kv: args.kv,
            sh: args.sh,
            reveal: args.reveal,
        }
    }
}

impl From<super::GraphArgs> for rq::GraphArgs {
    fn from(args: super::GraphArgs) -> Self {
        Self {
            manifest: args.manifest,
            state: args.state,
            environment: args.environment,
            base_dir: args.base_dir,
            format: args.format,
            affected: args.affected,
        }
    }
}

impl From<super::InvokeArgs> for rq::InvokeArgs {
    fn from(args: super::InvokeArgs) -> Self {
        Self {
            component: args.component,
            verb: args.verb,
            elaborate: args.elaborate,
            state: args.state,
            base_dir: args.base_dir,
            os_environment: args.os_environment,
            environment: args.environment,
            force: args.force,
            reveal: args.reveal,
            timeout: args.timeout,
        }
    }
}

impl From<super::RenderArgs> for rq::RenderArgs {
    fn from(args: super::RenderArgs) -> Self {
        Self {
            globs: args.globs,
            kind: args.kind,
            additional: args.additional,
            elaborate: args.elaborate,
            state: args.state,
            component: args.component,
            base_dir: args.base_dir,
        }
    }
}

impl From<super::CelArgs> for rq::CelArgs {
    fn from(args: super::CelArgs) -> Self {
        Self {
            expression: args.expression,
            bindings: args.bindings,
            yaml: args.yaml,
            yaml_short: args.yaml_short,
        }
    }
}

impl From<super::ParamsArgs> for rq::ParamsArgs {
    fn from(args: super::ParamsArgs) -> Self {
        Self {
            elaborated: args.elaborated,
            state: args.state,
            environment: args.environment,
            component: args.component,
            format: args.format,
            reveal: args.reveal,
        }
    }
}

impl From<super::PipelineArgs> for rq::PipelineArgs {
    fn from(args: super::PipelineArgs) -> Self {
        Self {
            target: args.target,
            stack: args.stack.into(),
            state: args.state.into(),
            allow_local_state: args.allow_local_state,
            selection: args.selection.into(),
            changed: args.changed,
            undeploy: args.undeploy,
            plan: args.plan,
            output: args.output,
            image: args.image,
            tags: args.tags,
            group: args.group,
            hub: args.hub,
            plan_file: args.plan_file,
            policy: args.policy.into(),
        }
    }
}

impl From<super::PolicyArgs> for rq::PolicyArgs {
    fn from(args: super::PolicyArgs) -> Self {
        Self {
            policies: args.policies,
        }
    }
}

impl From<super::PolicyCommandArgs> for rq::PolicyCommandArgs {
    fn from(args: super::PolicyCommandArgs) -> Self {
        Self {
            command: args.command.into(),
        }
    }
}

impl From<super::PolicyCommand> for rq::PolicyCommand {
    fn from(command: super::PolicyCommand) -> Self {
        match command {
            super::PolicyCommand::Test(args) => Self::Test(args.into()),
        }
    }
}

impl From<super::PolicyTestArgs> for rq::PolicyTestArgs {
    fn from(args: super::PolicyTestArgs) -> Self {
        Self {
            plan: args.plan,
            policies: args.policies,
            format: args.format,
        }
    }
}

impl From<super::ReportArgs> for rq::ReportArgs {
    fn from(args: super::ReportArgs) -> Self {
        Self {
            input: args.input,
            from: args.from,
            output: args.output,
            state: args.state,
        }
    }
}

impl From<super::CommonRunArgs> for rq::CommonRunArgs {
    fn from(args: super::CommonRunArgs) -> Self {
        Self {
            stack: args.stack.into(),
            state: args.state.into(),
            selection: args.selection.into(),
            run: args.run.into(),
            policy: args.policy.into(),
        }
    }
}

impl From<super::StackArgs> for rq::StackArgs {
    fn from(args: super::StackArgs) -> Self {
        Self {
            manifest: args.manifest,
            environment: args.environment,
            base_dir: args.base_dir,
            lenient: args.lenient,
            strict: args.strict,
            clouds: args.clouds,
        }
    }
}

impl From<super::StateArgs> for rq::StateArgs {
    fn from(args: super::StateArgs) -> Self {
        Self {
            state: args.state,
            no_state: args.no_state,
            lock: args.lock.into(),
        }
    }
}

impl From<super::LockTimeoutArgs> for rq::LockTimeoutArgs {
    fn from(args: super::LockTimeoutArgs) -> Self {
        Self {
            lock_timeout: args.lock_timeout,
        }
    }
}

impl From<super::SelectionArgs> for rq::SelectionArgs {
    fn from(args: super::SelectionArgs) -> Self {
        Self {
            components: args.components,
            affected: args.affected,
            with_deps: args.with_deps,
            with_dependents: args.with_dependents,
            offset: args.offset,
            limit: args.limit,
            status: args.status,
        }
    }
}

impl From<super::RunArgs> for rq::RunArgs {
    fn from(args: super::RunArgs) -> Self {
        Self {
            force: args.force,
            reveal: args.reveal,
            jobs: args.jobs,
            report: args.report,
        }
    }
}

impl From<super::ExecuteArgs> for rq::ExecuteArgs {
    fn from(args: super::ExecuteArgs) -> Self {
        Self {
            os_environment: args.os_environment,
            compressed: args.compressed,
            encrypted: args.encrypted,
            state_format: args.state_format.into(),
            dry: args.dry,
            timeout: args.timeout,
            why: args.why,
            fail_fast: args.fail_fast,
        }
    }
}

impl From<super::CompatibilityArgs> for rq::CompatibilityArgs {
    fn from(args: super::CompatibilityArgs) -> Self {
        Self {
            git_outputs: args.git_outputs,
            git_outputs_status: args.git_outputs_status,
            load_global_state: args.load_global_state,
            write_oplog_to_state_on_error: args.write_oplog_to_state_on_error,
            switch_kube_context: args.switch_kube_context,
        }
    }
}

impl From<super::GuessArgs> for rq::GuessArgs {
    fn from(args: super::GuessArgs) -> Self {
        Self {
            guess: args.guess,
        }
    }
}

impl From<super::RunCommandArgs> for rq::RunCommandArgs {
    fn from(args: super::RunCommandArgs) -> Self {
        Self {
            command: args.command.into(),
        }
    }
}

impl From<super::RunCommand> for rq::RunCommand {
    fn from(command: super::RunCommand) -> Self {
        match command {
            super::RunCommand::Finish(args) => Self::Finish(args.into()),
        }
    }
}

impl From<super::RunFinishArgs> for rq::RunFinishArgs {
    fn from(args: super::RunFinishArgs) -> Self {
        Self {
            plan: args.plan,
            state: args.state,
            report: args.report,
        }
    }
}

impl From<super::UnlockArgs> for rq::UnlockArgs {
    fn from(args: super::UnlockArgs) -> Self {
        Self {
            state: args.state,
            legacy_state: args.legacy_state,
            force: args.force,
            yes: args.yes,
            id: args.id,
        }
    }
}

impl From<super::StateCommandArgs> for rq::StateCommandArgs {
    fn from(args: super::StateCommandArgs) -> Self {
        Self {
            command: args.command.into(),
        }
    }
}

impl From<super::StateCommand> for rq::StateCommand {
    fn from(command: super::StateCommand) -> Self {
        match command {
            super::StateCommand::Pull(args) => Self::Pull(args.into()),
            super::StateCommand::List(args) => Self::List(args.into()),
            super::StateCommand::Show(args) => Self::Show(args.into()),
            super::StateCommand::Rm(args) => Self::Rm(args.into()),
            super::StateCommand::Mv(args) => Self::Mv(args.into()),
            super::StateCommand::Push(args) => Self::Push(args.into()),
        }
    }
}

impl From<super::StateLocationArgs> for rq::StateLocationArgs {
    fn from(args: super::StateLocationArgs) -> Self {
        Self {
            state: args.state,
        }
    }
}

impl From<super::StateChangeArgs> for rq::StateChangeArgs {
    fn from(args: super::StateChangeArgs) -> Self {
        Self {
            location: args.location.into(),
            lock: args.lock.into(),
            state_format: args.state_format.into(),
        }
    }
}

impl From<super::StateListArgs> for rq::StateListArgs {
    fn from(args: super::StateListArgs) -> Self {
        Self {
            location: args.location.into(),
            legacy_state: args.legacy_state,
            json: args.json,
        }
    }
}

impl From<super::StateShowArgs> for rq::StateShowArgs {
    fn from(args: super::StateShowArgs) -> Self {
        Self {
            component: args.component,
            location: args.location.into(),
            json: args.json,
            reveal: args.reveal,
        }
    }
}

impl From<super::StateRmArgs> for rq::StateRmArgs {
    fn from(args: super::StateRmArgs) -> Self {
        Self {
            components: args.components,
            change: args.change.into(),
            yes: args.yes,
            elaborate: args.elaborate,
        }
    }
}

impl From<super::StateMvArgs> for rq::StateMvArgs {
    fn from(args: super::StateMvArgs) -> Self {
        Self {
            old: args.old,
            new: args.new,
            change: args.change.into(),
        }
    }
}

impl From<super::StatePushArgs> for rq::StatePushArgs {
    fn from(args: super::StatePushArgs) -> Self {
        Self {
            file: args.file,
            location: args.location,
            force: args.force,
        }
    }
}

impl From<super::StatePullArgs> for rq::StatePullArgs {
    fn from(args: super::StatePullArgs) -> Self {
        Self {
            state: args.state,
            output: args.output,
            legacy: args.legacy,
            state_format: args.state_format.into(),
        }
    }
}

impl From<super::UtilArgs> for rq::UtilArgs {
    fn from(args: super::UtilArgs) -> Self {
        Self {
            command: args.command.into(),
        }
    }
}

impl From<super::UtilCommand> for rq::UtilCommand {
    fn from(command: super::UtilCommand) -> Self {
        match command {
            super::UtilCommand::Run(args) => Self::Run(args.into()),
            super::UtilCommand::Otp(args) => Self::Otp(args.into()),
        }
    }
}

impl From<super::UtilOtpArgs> for rq::UtilOtpArgs {
    fn from(args: super::UtilOtpArgs) -> Self {
        Self {
            mode: args.mode,
        }
    }
}

impl From<super::UtilRunArgs> for rq::UtilRunArgs {
    fn from(args: super::UtilRunArgs) -> Self {
        Self {
            label: args.label,
            grace: args.grace,
            timeout: args.timeout,
            log: args.log,
            mask_env: args.mask_env,
            mask_stdin: args.mask_stdin,
            mask: args.mask,
            clear_env: args.clear_env,
            env: args.env,
            cwd: args.cwd,
            command: args.command,
        }
    }
}

impl From<super::ValidateArgs> for rq::ValidateArgs {
    fn from(args: super::ValidateArgs) -> Self {
        Self {
            files: args.files,
            lenient: args.lenient,
            strict: args.strict,
        }
    }
}
