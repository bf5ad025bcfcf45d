//! Component hooks (deploy.md §12.1, T71): scripts run before and after a
//! component's implementation, in its folder, with its environment.

use crate::common::{hub_isolated, Output, Test};

/// A stack of `a` then `b`, `a` carrying `hooks` (a YAML flow list), with
/// `lifecycle` extras; `a` records its environment, `b` that it ran.
fn stack(hooks: &str, lifecycle: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!(
                "
                kind: stack
                meta: {{name: hooked}}
                components:
                - name: a
                  source: {{dir: a}}
                  hooks: {hooks}
                - name: b
                  source: {{dir: b}}
                lifecycle: {{order: [a, b]{lifecycle}}}
                parameters:
                - {{name: dns.domain, value: example.com}}
                - {{name: db.password, value: s3cret-value}}
                "
            ),
        )
        .file(
            "a/hub-component.yaml",
            "
            kind: component
            meta: {name: a}
            parameters:
            - {name: dns.domain, env: DOMAIN}
            - {name: db.password, env: DB_PASSWORD}
            ",
        )
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho deploy >> hook.log\nenv | sort > env.out\n",
        )
        .script("a/undeploy.sh", "#!/bin/sh\necho undeploy >> hook.log\n")
        .file("b/hub-component.yaml", "kind: component\nmeta: {name: b}\n")
        .script("b/deploy.sh", "#!/bin/sh\ntouch ran\n")
        .script("b/undeploy.sh", "#!/bin/sh\nrm -f ran\n")
        .script(
            "pre.sh",
            "#!/bin/sh\necho pre >> hook.log\necho \"pre sees $DOMAIN and $DB_PASSWORD, random=${HUB_RANDOM:-none}\"\n",
        )
        .script("post.sh", "#!/bin/sh\necho post >> hook.log\n")
        .script("bad.sh", "#!/bin/sh\necho bad >> hook.log\nexit 1\n")
}

fn deploy(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec!["deploy", "hub.yaml", "-s", "hub.yaml.state"];
    args.extend(extra);
    hub_isolated(test, &args, &[])
}

fn log(test: &Test) -> String {
    std::fs::read_to_string(test.root().join("a/hook.log")).unwrap_or_default()
}

#[test]
fn t71_a_failing_hook_with_error_ignore_does_not_fail_the_component() {
    let test = stack(
        "[{file: pre.sh, triggers: [pre-deploy]}, {file: bad.sh, triggers: [\"post-*\"], error: ignore}]",
        "",
    );
    let out = deploy(&test, &[]);
    out.success()
        .stderr_has("hook `bad.sh` (post-deploy) exited with code 1 (ignored: `error: ignore`)");
    assert_eq!(log(&test), "pre\ndeploy\nbad\n");
    assert!(test.root().join("b/ran").exists());
    // In the component's folder, with its environment and masked like it.
    assert!(
        out.stdout
            .contains("a | pre sees example.com and (masked), random=none"),
        "{}",
        out.stdout
    );
    let logged = std::fs::read_to_string(test.root().join("hub.yaml.state.logs/a.log"))
        .expect("the component's log");
    assert!(
        logged.contains("pre sees example.com and (masked)"),
        "{logged}"
    );
    assert!(!logged.contains("s3cret-value"), "{logged}");
}

#[test]
fn t71_a_failing_hook_fails_even_an_optional_component() {
    let test = stack(
        "[{file: bad.sh, triggers: [pre-deploy]}]",
        ", optional: [a]",
    );
    deploy(&test, &[])
        .failure()
        .stderr_has("hook `bad.sh` (pre-deploy) exited with code 1");
    // The implementation never ran, nor did what comes after.
    assert_eq!(log(&test), "bad\n");
    assert!(!test.root().join("b/ran").exists());
    let state = crate::common::read_documents(&test.root().join("hub.yaml.state")).remove(0);
    assert_eq!(state["components"]["a"]["status"], "error");
}

#[test]
fn a_failing_post_hook_fails_the_component_after_it_ran() {
    let test = stack("[{file: bad.sh, triggers: [post-deploy]}]", "");
    deploy(&test, &[]).failure().stderr_has("post-deploy");
    assert_eq!(log(&test), "deploy\nbad\n");
    // `--force` goes on.
    deploy(&test, &["-f"]).success();
    assert!(test.root().join("b/ran").exists());
}

#[test]
fn hooks_run_in_declaration_order_for_the_verb_they_match() {
    let test = stack(
        "[{file: post.sh, triggers: [\"post-*\"]}, {file: pre.sh, triggers: [\"pre-un*\", pre-deploy]}, {file: bad.sh, triggers: [post-deploy-test]}]",
        "",
    );
    deploy(&test, &[]).success();
    assert_eq!(log(&test), "pre\ndeploy\npost\n");
    let out = hub_isolated(
        &test,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state"],
        &[],
    );
    out.success();
    assert_eq!(log(&test), "pre\ndeploy\npost\npre\nundeploy\npost\n");
}

#[test]
fn an_optional_hook_that_cannot_be_found_is_skipped_with_a_warning() {
    let test = stack(
        "[{file: missing-hook, triggers: [pre-deploy], error: ignore}]",
        "",
    );
    deploy(&test, &[])
        .success()
        .stderr_has("hook `missing-hook` (pre-deploy) not found");
    assert_eq!(log(&test), "deploy\n");
}

#[test]
fn a_hook_that_cannot_be_found_stops_the_run_before_it_starts() {
    let test = stack("[{file: missing-hook, triggers: [pre-deploy]}]", "");
    deploy(&test, &[])
        .failure()
        .stderr_has("error: component `a`: hook `missing-hook` (pre-deploy) not found in ");
    assert_eq!(log(&test), "");
    assert!(!test.root().join("b/ran").exists());
}

#[test]
fn elaborate_keeps_hooks_and_plan_no_longer_warns_about_them() {
    let test = stack(
        "[{file: pre.sh, brief: check, triggers: [pre-deploy], error: ignore}]",
        "",
    );
    let out = hub_isolated(&test, &["elaborate", "hub.yaml", "-o", "-"], &[]);
    out.success();
    let stack = &out.stdout_documents()[0];
    let hooks = &stack["components"][0]["hooks"];
    assert_eq!(hooks[0]["file"], "pre.sh");
    assert_eq!(hooks[0]["brief"], "check");
    assert_eq!(hooks[0]["triggers"][0], "pre-deploy");
    assert_eq!(hooks[0]["error"], "ignore");
    let plan = hub_isolated(&test, &["plan", "hub.yaml", "-n"], &[]);
    plan.success();
    assert!(!plan.stderr.contains("hooks"), "{}", plan.stderr);
}
