//! One plan, many writers: the jobs of a pipeline deploy the components
//! of one saved plan side by side on one state (`hub deploy --plan PLAN
//! -c NAME --job`), each under a lease on its component alone, and
//! `hub run finish` closes the run. On a local state and on the test
//! suite's S3 server.

use crate::common::{Output, Test, PINNED};
use crate::remote::server::{server, Server, Store};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const STACK: &str = "
version: 1
kind: stack
meta: {name: writers}
components:
  - {name: a, source: {dir: components/a}}
  - {name: b, source: {dir: components/b}}
  - {name: c, source: {dir: components/c}, depends: [a, b]}
";

/// `a` and `b` are independent: each writes when it starts and ends
/// (seconds since the epoch) around a one-second sleep, appends its name
/// to `runs.log` and gives the output `host`. `c` depends on both and
/// writes the host of `a` it was given to `c.saw`. A component named in
/// `$FAIL` fails; one named in `$STEAL` has its lease removed (with
/// `hub unlock --force`, as a second job or an operator would) while it
/// runs.
fn stack() -> Test {
    let mut test = Test::new().file("hub.yaml", STACK);
    for name in ["a", "b"] {
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!(
                    "version: 1\nkind: component\nmeta: {{name: {name}}}\noutputs:\n  - {{name: component.{name}.host, fromTfVar: host}}\n"
                ),
            )
            .script(
                &format!("components/{name}/deploy.sh"),
                &format!(
                    "#!/bin/sh\n\
                     date +%s.%N > ../../{name}.start\n\
                     echo {name} >> ../../runs.log\n\
                     if [ \"$STEAL\" = {name} ]; then \"$HUB_BIN\" unlock --force --yes \"$STEAL_AT\"; fi\n\
                     sleep 1\n\
                     date +%s.%N > ../../{name}.end\n\
                     if [ \"$FAIL\" = {name} ]; then echo broken; exit 3; fi\n\
                     echo; echo Outputs:; echo \"host = {name}-host\"; echo\n"
                ),
            );
    }
    test.file(
        "components/c/hub-component.yaml",
        "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n  - {name: component.a.host, env: HOST}\n",
    )
    .script(
        "components/c/deploy.sh",
        "#!/bin/sh\necho c >> ../../runs.log\necho \"$HOST\" > ../../c.saw\n",
    )
}

/// Where the jobs write: a local file, or an object on the S3 server.
struct Target<'a> {
    state: String,
    server: Option<&'a Server>,
    env: Vec<(String, String)>,
}

impl Target<'_> {
    fn local() -> Target<'static> {
        Target {
            state: "s.state".into(),
            server: None,
            env: Vec::new(),
        }
    }

    /// `None` (the test returns) without the S3 server.
    fn s3(name: &str) -> Option<Target<'static>> {
        let server = server()?;
        let bucket = server.bucket(name);
        Some(Target {
            state: format!("s3://{bucket}/s.state"),
            server: Some(server),
            env: Vec::new(),
        })
    }

    fn with(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Where the lease of `component` is taken (for a component's
    /// script, which runs in its own folder).
    fn lease_of(&self, test: &Test, component: &str) -> String {
        match self.server {
            Some(_) => format!("{}.run/{component}", self.state),
            None => format!("{}/{}.run/{component}", test.root().display(), self.state),
        }
    }

    fn command(&self, test: &Test, args: &[&str]) -> Command {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("hub"));
        command
            .current_dir(test.root())
            .args(args)
            .envs(PINNED.iter().copied().filter(|(k, _)| *k != "HUB_NOW"))
            .env_remove("HUB_FORCE")
            .env_remove("HUB_JOBS")
            .env_remove("AWS_PROFILE")
            .env("HUB_BIN", assert_cmd::cargo::cargo_bin("hub"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(server) = self.server {
            for (k, v) in Store::env(server) {
                command.env(k, v);
            }
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command
    }

    fn hub(&self, test: &Test, args: &[&str]) -> Output {
        let out = self.command(test, args).output().expect("run hub");
        Output::of(out, test.root())
    }

    fn plan(&self, test: &Test) {
        self.hub(
            test,
            &["plan", "hub.yaml", "-s", &self.state, "--out", "plan.json"],
        )
        .success();
    }

    fn job(&self, test: &Test, component: &str, extra: &[&str]) -> Output {
        let mut args = vec!["deploy", "--plan", "plan.json", "-c", component];
        args.extend_from_slice(&["-s", &self.state, "--job"]);
        args.extend_from_slice(extra);
        self.hub(test, &args)
    }

    fn spawn_job(&self, test: &Test, component: &str) -> Child {
        let args = ["deploy", "--plan", "plan.json", "-c", component];
        let mut command = self.command(test, &args);
        command.args(["-s", &self.state, "--job"]);
        command.spawn().expect("start hub")
    }

    fn finish(&self, test: &Test, extra: &[&str]) -> Output {
        let mut args = vec!["run", "finish", "--plan", "plan.json", "-s", &self.state];
        args.extend_from_slice(extra);
        self.hub(test, &args)
    }

    /// The state as `hub state pull` reads it.
    fn state(&self, test: &Test) -> yaml_serde::Value {
        let out = self.hub(test, &["state", "pull", &self.state, "pulled.state"]);
        out.success();
        crate::common::read_documents(&test.root().join("pulled.state"))
            .into_iter()
            .next()
            .expect("a state")
    }
}

fn ended(child: Child, test: &Test) -> Output {
    Output::of(child.wait_with_output().expect("wait"), test.root())
}

fn seconds(test: &Test, file: &str) -> f64 {
    let text = std::fs::read_to_string(test.root().join(file)).expect(file);
    text.trim().parse().expect("seconds")
}

fn runs(test: &Test) -> String {
    std::fs::read_to_string(test.root().join("runs.log")).unwrap_or_default()
}

fn status_of(state: &yaml_serde::Value, component: &str) -> String {
    state["components"][component]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Two jobs deploy `a` and `b` at the same time, `c` reads the output of
/// `a` the first job recorded, and `finish` folds the three into the
/// state.
fn jobs_deploy_side_by_side(target: &Target<'_>) {
    let test = stack();
    target.plan(&test);
    let (a, b) = (target.spawn_job(&test, "a"), target.spawn_job(&test, "b"));
    let (a, b) = (ended(a, &test), ended(b, &test));
    a.success();
    b.success();
    // They overlapped: each started before the other ended.
    assert!(seconds(&test, "a.start") < seconds(&test, "b.end"));
    assert!(seconds(&test, "b.start") < seconds(&test, "a.end"));
    target.job(&test, "c", &[]).success();
    assert_eq!(
        std::fs::read_to_string(test.root().join("c.saw")).expect("c.saw"),
        "a-host\n"
    );
    let out = target.finish(&test, &["--report", "run.json"]);
    out.success()
        .stderr_has("stack: deployed (3 components")
        .stderr_has(&format!(
            "hub: closed the run of plan `plan.json` on `{}`",
            target.state
        ));
    let state = target.state(&test);
    for name in ["a", "b", "c"] {
        assert_eq!(status_of(&state, name), "deployed", "{name}");
    }
    assert_eq!(state["status"].as_str(), Some("deployed"));
    // The run in the operation log, with each component's phase.
    let operations = state["operations"].as_sequence().expect("operations");
    let last = &operations[operations.len() - 1];
    assert_eq!(last["status"].as_str(), Some("success"));
    assert_eq!(last["initiator"].as_str(), Some("tester"));
    let description = last["description"].as_str().unwrap_or_default();
    assert!(
        description.starts_with("pipeline run of plan `plan.json` (id "),
        "{description}"
    );
    let phases = yaml_serde::to_string(&last["phases"]).expect("yaml");
    assert_eq!(
        phases,
        "- phase: a\n  status: success\n- phase: b\n  status: success\n- phase: c\n  status: success\n"
    );
    let outputs = yaml_serde::to_string(&state["capturedOutputs"]).expect("yaml");
    assert!(
        outputs.contains("a-host") && outputs.contains("b-host"),
        "{outputs}"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(test.root().join("run.json")).expect("report"),
    )
    .expect("json");
    assert_eq!(report["result"], "success");
    let statuses: Vec<&str> = report["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| c["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(statuses, ["deployed", "deployed", "deployed"]);
    // The run is closed: a plain deploy may go on.
    target
        .hub(&test, &["deploy", "hub.yaml", "-s", &target.state])
        .success();
}

#[test]
fn two_jobs_of_one_plan_deploy_side_by_side_on_a_local_state() {
    jobs_deploy_side_by_side(&Target::local());
    let test = stack();
    let target = Target::local();
    target.plan(&test);
    target.job(&test, "a", &[]).success();
    // The component's log is kept beside the state, as a deploy's is.
    let log = std::fs::read_to_string(test.root().join("s.state.logs/a.log")).expect("log");
    assert!(log.contains("host = a-host"), "{log}");
}

#[test]
fn two_jobs_of_one_plan_deploy_side_by_side_on_s3() {
    let Some(target) = Target::s3("writers-side") else {
        return;
    };
    jobs_deploy_side_by_side(&target);
}

/// `c`'s job before `a` and `b` recorded theirs: refused, naming the
/// first of them, even though the state records `a` deployed by an
/// earlier run.
#[test]
fn a_job_whose_dependency_this_run_did_not_deploy_is_refused() {
    let test = stack();
    let target = Target::local();
    target
        .hub(&test, &["deploy", "hub.yaml", "-s", "s.state"])
        .success();
    target.plan(&test);
    let before = runs(&test);
    let out = target.job(&test, "c", &[]);
    out.failure();
    assert_eq!(
        out.stderr,
        "error: `c` depends on `a`, which this run of plan `plan.json` has not deployed: its job has not recorded it (not run yet, still running, or stopped)\n  \
         help: run the job of `a` first (`hub deploy --plan plan.json -c a`): in the pipeline, this job needs it\n"
    );
    assert_eq!(runs(&test), before, "nothing ran");
    // A failed dependency is named with its failure.
    let failing = Target::local().with("FAIL", "a");
    failing.job(&test, "a", &[]).failure();
    target.job(&test, "b", &[]).success();
    target
        .job(&test, "c", &[])
        .failure()
        .stderr_has("error: `c` depends on `a`, which this run of plan `plan.json` has not deployed: its job failed (");
}

/// A job whose lease is taken away while its component runs records
/// nothing, and exits 2; `finish` then says the component never ran.
fn stolen_lease(target: Target<'_>) {
    let test = stack();
    let steal_at = target.lease_of(&test, "a");
    let target = target.with("STEAL", "a").with("STEAL_AT", &steal_at);
    target.plan(&test);
    let out = target.job(&test, "a", &[]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("error: the job of `a` lost its lease: its lock `")
        .stderr_has("a.lock` was removed while this run held it");
    // Nothing recorded: `c` still waits for `a`.
    target.job(&test, "b", &[]).success();
    target
        .job(&test, "c", &[])
        .failure()
        .stderr_has("its job has not recorded it");
    let out = target.finish(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("error: the run of plan `plan.json` is closed, incomplete: never ran: a, c\n");
    let state = target.state(&test);
    assert_eq!(status_of(&state, "a"), "");
    assert_eq!(status_of(&state, "b"), "deployed");
}

#[test]
fn a_job_that_lost_its_lease_writes_nothing_on_a_local_state() {
    stolen_lease(Target::local());
}

#[test]
fn a_job_that_lost_its_lease_writes_nothing_on_s3() {
    let Some(target) = Target::s3("writers-stolen") else {
        return;
    };
    stolen_lease(target);
}

/// The CI system runs a job again: this run deployed it already, so it
/// does nothing, unless `--replace`.
#[test]
fn a_job_run_again_is_a_no_op_unless_replace() {
    let test = stack();
    let target = Target::local();
    target.plan(&test);
    target.job(&test, "a", &[]).success();
    assert_eq!(runs(&test), "a\n");
    let again = target.job(&test, "a", &[]);
    again
        .success()
        .stderr_has("hub: `a` was deployed by this run of plan `plan.json` at ")
        .stderr_has("nothing to do (`--replace a` deploys it again)\n");
    assert_eq!(runs(&test), "a\n", "not run again");
    target.job(&test, "a", &["--replace", "a"]).success();
    assert_eq!(runs(&test), "a\na\n");
}

/// `finish` with a failed component and one that never ran: both named,
/// in the summary, the report and the exit status; what did deploy is in
/// the state.
#[test]
fn finish_reports_failed_and_never_run_components_and_fails() {
    let test = stack();
    let target = Target::local();
    target.plan(&test);
    target.job(&test, "a", &[]).success();
    let failing = Target::local().with("FAIL", "b");
    failing.job(&test, "b", &[]).failure();
    let out = target.finish(&test, &["--report", "run.json"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("  b  error ")
        .stderr_has("  c  not run")
        .stderr_has("stack: incomplete")
        .stderr_has(
            "error: the run of plan `plan.json` is closed, incomplete: failed: b; never ran: c\n",
        );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(test.root().join("run.json")).expect("report"),
    )
    .expect("json");
    assert_eq!(report["result"], "failure");
    let state = target.state(&test);
    assert_eq!(status_of(&state, "a"), "deployed");
    assert_ne!(status_of(&state, "b"), "deployed");
    assert!(
        !test.root().join("s.state.run").exists(),
        "the run is closed"
    );
    // Finishing again: no run is open.
    target
        .finish(&test, &[])
        .failure()
        .stderr_has("error: no run of plan `plan.json` is open on the state `s.state`\n");
}

/// A pipeline cancelled before `finish`: the next plan and deploy say
/// which run holds the state and how to close it.
fn abandoned_run(target: Target<'_>) {
    let test = stack();
    target.plan(&test);
    target.job(&test, "a", &[]).success();
    let state = &target.state;
    for args in [
        vec!["deploy", "hub.yaml", "-s", state],
        vec!["plan", "hub.yaml", "-s", state],
        vec!["deploy", "--plan", "plan.json"],
    ] {
        let out = target.hub(&test, &args);
        out.failure()
            .stderr_has(&format!(
                "error: the state `{state}` is held by the run of plan `plan.json` (id "
            ))
            .stderr_has(", whose components are deployed by pipeline jobs\n")
            .stderr_has(&format!(
                "  help: close it with `hub run finish --plan plan.json -s {state}`"
            ));
    }
    // Another plan's job is refused too.
    std::fs::copy(
        test.root().join("plan.json"),
        test.root().join("other.json"),
    )
    .expect("copy");
    let mut other = std::fs::read_to_string(test.root().join("other.json")).expect("read");
    other.push('\n');
    std::fs::write(test.root().join("other.json"), other).expect("write");
    let args = [
        "deploy",
        "--plan",
        "other.json",
        "-c",
        "b",
        "-s",
        state,
        "--job",
    ];
    target
        .hub(&test, &args)
        .failure()
        .stderr_has("is held by the run of plan `plan.json`")
        .stderr_has(", not by this plan\n");
    let out = target.finish(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("never ran: b, c");
    target
        .hub(&test, &["deploy", "hub.yaml", "-s", state])
        .success();
}

#[test]
fn an_abandoned_run_is_reported_by_the_next_plan_and_deploy() {
    abandoned_run(Target::local());
}

#[test]
fn an_abandoned_run_on_s3_is_reported_by_the_next_plan_and_deploy() {
    let Some(target) = Target::s3("writers-abandoned") else {
        return;
    };
    abandoned_run(target);
}

/// A job names one component of the plan.
#[test]
fn a_job_names_one_component_of_the_plan() {
    let test = stack();
    let target = Target::local();
    target.plan(&test);
    let out = target.job(&test, "a,b", &[]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("a job of a plan deploys one component: give its name alone");
    target
        .job(&test, "zz", &[])
        .failure()
        .stderr_has("error: the plan `plan.json` has no component `zz` (it has `a`, `b`, `c`)\n");
    assert!(!Path::new(&test.root().join("runs.log")).exists());
}
