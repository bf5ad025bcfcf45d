//! Planning through the graph at apply time (issue 42): what a deploy
//! plans again — a component the reviewed plan deferred, or (`--replan`)
//! one whose read output changed — runs with values nobody reviewed, so
//! they must meet the stack's policies, through every way a saved plan is
//! applied (`deploy --plan`, a pipeline's job, `deploy --change`); and a
//! secret among them stays masked in what the refusal and the re-plan
//! say. `hub ci`'s apply never passes `--replan`.

use super::RUNNER_SECRET;
use crate::attacks::everything_written;
use crate::common::{pinned_command, Output, Test};

/// `a` plans `a.val` and `a.token` (secret) and leaves `a.url` unknown;
/// its apply takes `$URL`, `$VAL` and `$TOKEN` from the job's
/// environment, as an upstream someone else changed. `b` reads `a.val`
/// and `a.token`, `c` reads `a.url`. The stack's rule denies `c` reading
/// an evil URL and `b` reading `bad`.
const STACK: &str = "\
version: 1
kind: stack
meta: {name: replanned}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
- {name: c, source: {dir: c}, depends: [a]}
lifecycle: {verbs: [deploy, undeploy], order: [a, b, c]}
policies:
- name: no-evil-url
  deny: plan.components.exists(c, c.parameters.exists(p, p.value.startsWith('https://evil')))
  message: a component would read an evil URL
- name: no-bad-val
  deny: plan.components.exists(c, c.parameters.exists(p, p.value == 'bad'))
  message: a component would read bad
---
version: 1
kind: component
meta: {name: a}
outputs:
- {name: a.val, fromTfVar: val}
- {name: a.token, fromTfVar: token, kind: secret}
- {name: a.url, fromTfVar: url}
---
version: 1
kind: component
meta: {name: b}
parameters:
- {name: b.in, value: '${a.val}', env: IN}
- {name: b.token, value: '${a.token}', env: TOKEN_IN}
---
version: 1
kind: component
meta: {name: c}
parameters:
- {name: c.in, value: '${a.url}', env: IN}
";

fn stack() -> Test {
    let mut test = Test::new()
        .file("hub.yaml.elaborate", STACK)
        .script(
            "a/plan.sh",
            "#!/bin/sh\necho Outputs:\necho 'val = good'\necho 'token = planned-token'\necho 'url (known after apply)'\n",
        )
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho Outputs:\necho \"val = ${VAL:-good}\"\necho \"token = ${TOKEN:-planned-token}\"\necho \"url = ${URL:-https://fine}\"\n",
        );
    for name in ["b", "c"] {
        test = test.script(
            &format!("{name}/deploy.sh"),
            &format!("#!/bin/sh\necho \"$IN\" > ../{name}-ran\n"),
        );
    }
    for name in ["a", "b", "c"] {
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

#[derive(Debug, Clone, Copy)]
enum Apply {
    Plan,
    Job,
    Change,
}

fn hub(test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = pinned_command(test.root(), args);
    for name in ["VAL", "TOKEN", "URL"] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    Output::of(command.output().expect("run hub"), test.root())
}

/// Plans the stack with plan steps and applies it as `apply` does, `a`
/// with `env`, the rest with `extra`; what the apply of `b` and `c` said.
fn applied(test: &Test, apply: Apply, env: &[(&str, &str)], extra: &[&str]) -> Output {
    let on = ["hub.yaml.elaborate", "-s", "s.state", "--plan-steps"];
    match apply {
        Apply::Plan | Apply::Job => {
            let mut args = vec!["plan"];
            args.extend(on);
            args.extend(["--out", "p.json"]);
            hub(test, &args, &[]).success();
        }
        Apply::Change => {
            let mut args = vec!["plan"];
            args.extend(on);
            args.extend(["--change", "7"]);
            hub(test, &args, &[]).success();
        }
    }
    let mut args: Vec<&str> = match apply {
        Apply::Plan => vec!["deploy", "--plan", "p.json"],
        Apply::Change => vec!["deploy", "--change", "7", "-s", "s.state"],
        Apply::Job => {
            let job = ["deploy", "--plan", "p.json", "-s", "s.state", "--job", "-c"];
            let mut first = job.to_vec();
            first.push("a");
            hub(test, &first, env).success();
            let mut second = job.to_vec();
            second.push("b");
            second.extend(extra);
            let b = hub(test, &second, &[]);
            let mut third = job.to_vec();
            third.push("c");
            third.extend(extra);
            let c = hub(test, &third, &[]);
            return Output {
                status: b.status.max(c.status),
                stdout: b.stdout + &c.stdout,
                stderr: b.stderr + &c.stderr,
                root: test.root().to_path_buf(),
            };
        }
    };
    args.extend(extra);
    hub(test, &args, env)
}

const APPLIES: [Apply; 3] = [Apply::Plan, Apply::Job, Apply::Change];

#[test]
fn a_deferred_components_value_known_only_at_apply_meets_the_policies() {
    for apply in APPLIES {
        let test = stack();
        let out = applied(&test, apply, &[("URL", "https://evil.example")], &[]);
        assert_ne!(out.status, 0, "{apply:?}: the apply went ahead");
        assert!(
            out.stderr.contains("a component would read an evil URL"),
            "{apply:?}:\n{}",
            out.stderr
        );
        assert!(
            !test.root().join("c-ran").exists(),
            "{apply:?}: c ran with a value no policy saw"
        );
        assert!(
            test.root().join("b-ran").exists(),
            "{apply:?}: b is independent of the refusal"
        );
    }
}

#[test]
fn replan_does_not_let_a_changed_upstream_past_the_policies() {
    for apply in APPLIES {
        let test = stack();
        let out = applied(&test, apply, &[("VAL", "bad")], &["--replan"]);
        assert_ne!(out.status, 0, "{apply:?}: the apply went ahead");
        assert!(
            out.stderr.contains(
                "refused: planned again with the outputs its upstreams applied, denied by policy `no-bad-val`: a component would read bad"
            ),
            "{apply:?}:\n{}",
            out.stderr
        );
        assert!(!test.root().join("b-ran").exists(), "{apply:?}: b ran");
    }
}

#[test]
fn a_re_planned_secret_stays_masked() {
    for apply in APPLIES {
        let test = stack();
        let out = applied(&test, apply, &[("TOKEN", RUNNER_SECRET)], &["--replan"]);
        assert!(
            out.stderr.contains(
                "hub: b: re-planned (`--replan`): `a`'s output `a.token` (planned `(masked)`, now `(masked)`)"
            ),
            "{apply:?}:\n{}",
            out.stderr
        );
        // The state keeps `a`'s output; what hub says and logs does not.
        let logs = everything_written(
            &test.root().join("s.state.logs"),
            &[&out.stdout, &out.stderr],
        );
        assert!(
            !logs.contains(RUNNER_SECRET),
            "{apply:?}: the re-planned secret was written"
        );
        // Without `--replan` the refusal masks it too.
        let test = stack();
        let out = applied(&test, apply, &[("TOKEN", RUNNER_SECRET)], &[]);
        assert!(
            out.stderr
                .contains("`a`'s output `a.token` (planned `(masked)`, now `(masked)`)"),
            "{apply:?}:\n{}",
            out.stderr
        );
        assert!(!out.stderr.contains(RUNNER_SECRET), "{apply:?}");
    }
}
