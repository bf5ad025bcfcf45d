//! Selecting what git says changed (`--affected[=BASE]`), components by
//! folder (`-c .`, `-c components/`), and what a selected component wants
//! (`lifecycle.wants`), on a git repository each test builds.

use crate::common::{hub_pinned, pinned_command, skipped, Output};
use std::path::Path;
use std::process::Command;

/// `shop`: `db` depends on `net`, `app` on `db`; `app` wants `metrics`;
/// `web` also watches `shared/*.conf`. `db` reads `db.size`, `app`
/// reads `app.replicas`, both set in `params.yaml`. Each deploy script
/// appends `deploy NAME` to `ran`.
const STACK: &str = "\
version: 1
kind: stack
meta: {name: shop}
components:
- {name: net, source: {dir: components/net}}
- {name: db, source: {dir: components/db}, depends: [net]}
- {name: app, source: {dir: components/app}, depends: [db]}
- {name: web, source: {dir: components/web}}
- {name: metrics, source: {dir: components/metrics}}
lifecycle:
  watch:
    web: [shared/*.conf]
  wants:
    app: [metrics]
";

const PARAMS: &str = "\
parameters:
- name: db.size
  value: small
- name: app.replicas
  value: 1
";

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(root)
        .args(["-c", "user.name=hub", "-c", "user.email=hub@example.com"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

fn write(root: &Path, path: &str, text: &str) {
    let target = root.join(path);
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    std::fs::write(&target, text).expect("write");
}

/// The stack committed on `main` and deployed (state `shop.state`,
/// ignored by git with the other files runs leave); `None` without git.
fn repository() -> Option<tempfile::TempDir> {
    if Command::new("git").arg("--version").output().is_err() {
        skipped("git is not installed");
        return None;
    }
    let dir = tempfile::tempdir().expect("temporary folder");
    let root = dir.path();
    write(root, "hub.yaml", STACK);
    write(root, "params.yaml", PARAMS);
    write(root, ".gitignore", "shop.state*\nran\n*.log\n");
    for (name, parameter) in [
        ("net", ""),
        ("db", "parameters:\n- name: db.size\n"),
        ("app", "parameters:\n- name: app.replicas\n"),
        ("web", ""),
        ("metrics", ""),
    ] {
        write(
            root,
            &format!("components/{name}/hub-component.yaml"),
            &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{parameter}"),
        );
        let script = format!("components/{name}/deploy.sh");
        write(
            root,
            &script,
            &format!("#!/bin/sh\necho deploy {name} >> ../../ran\n"),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join(&script), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "shop"]);
    hub(
        root,
        &["deploy", "hub.yaml", "params.yaml", "-s", "shop.state"],
    )
    .success();
    let _ = std::fs::remove_file(root.join("ran"));
    Some(dir)
}

/// On a branch `feature`: `net`'s script changed (committed), `app.replicas`
/// changed in `params.yaml` (not committed), an untracked
/// `shared/site.conf` (which `web` watches), and an ignored log in `db`.
fn feature_branch(root: &Path) {
    git(root, &["checkout", "-q", "-b", "feature"]);
    let script = root.join("components/net/deploy.sh");
    let text = std::fs::read_to_string(&script).expect("read") + "# faster\n";
    std::fs::write(&script, text).expect("write");
    git(root, &["commit", "-q", "-a", "-m", "net"]);
    write(root, "params.yaml", &PARAMS.replace("value: 1", "value: 2"));
    write(root, "shared/site.conf", "listen 80\n");
    write(root, "components/db/debug.log", "ignored\n");
}

fn hub(root: &Path, args: &[&str]) -> Output {
    hub_pinned(root, args)
}

/// `hub plan hub.yaml params.yaml -s shop.state ARGS --format json`.
fn plan_json(root: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "shop.state",
        "--format",
        "json",
    ];
    all.extend(args);
    let out = hub(root, &all);
    out.success();
    serde_json::from_str(&out.stdout).expect("plan JSON")
}

fn names(plan: &serde_json::Value) -> Vec<String> {
    plan["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect()
}

fn ran(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("ran")).unwrap_or_default();
    let _ = std::fs::remove_file(root.join("ran"));
    text.lines().map(String::from).collect()
}

#[test]
fn affected_selects_a_changed_folder_a_changed_parameter_and_an_untracked_watched_file() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    let plan = plan_json(root, &["--affected=main"]);
    // `db` reads `db.size`, unchanged; its new log is ignored by git.
    assert_eq!(names(&plan), ["net", "app", "web", "metrics"]);
    assert_eq!(
        plan["selection"]["affected"],
        serde_json::json!([
            {"name": "net", "why": "`components/net/deploy.sh` changed"},
            {"name": "app", "why": "parameter `app.replicas` changed in `params.yaml`"},
            {"name": "web", "why": "`shared/site.conf` added (untracked)"},
        ])
    );
    assert_eq!(
        plan["selection"]["added"],
        serde_json::json!([{"name": "metrics", "from": "app", "relation": "wanted"}])
    );
    let text = hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=main",
        ],
    );
    text.success();
    for line in [
        "selection: --affected → net, app, web, metrics (affected net (`components/net/deploy.sh` changed); affected app (parameter `app.replicas` changed in `params.yaml`); affected web (`shared/site.conf` added (untracked)); added metrics (wanted by `app`))",
        "  selected: affected: `components/net/deploy.sh` changed",
        "  selected: affected: parameter `app.replicas` changed in `params.yaml`",
        "  selected: wanted by app",
    ] {
        assert!(text.stdout.lines().any(|l| l == line), "{line}\n{}", text.stdout);
    }
}

#[test]
fn a_deploy_of_the_affected_components_says_why_each_was_selected() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    let mut command = pinned_command(
        root,
        &[
            "deploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected",
            "--why",
        ],
    );
    command.env("HUB_GIT_BASE", "main");
    let out = Output::of(command.output().expect("run hub"), root);
    out.success();
    for line in [
        "hub: net: selected: affected: `components/net/deploy.sh` changed",
        "hub: app: selected: affected: parameter `app.replicas` changed in `params.yaml`",
        "hub: web: selected: affected: `shared/site.conf` added (untracked)",
        "hub: metrics: selected: wanted by app",
    ] {
        assert!(
            out.stderr.lines().any(|l| l == line),
            "{line}\n{}",
            out.stderr
        );
    }
    assert_eq!(
        ran(root),
        ["deploy net", "deploy app", "deploy web", "deploy metrics"]
    );
}

#[test]
fn affected_with_dependents_adds_what_depends_on_the_changed_components() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    let plan = plan_json(root, &["--affected=main", "--with-dependents"]);
    assert_eq!(names(&plan), ["net", "db", "app", "web", "metrics"]);
    assert_eq!(
        plan["selection"]["requested"],
        serde_json::json!(["--affected --with-dependents"])
    );
    // Combined with `-c`: the named component joins the affected ones.
    let plan = plan_json(root, &["--affected=main", "-c", "db"]);
    assert_eq!(names(&plan), ["net", "db", "app", "web", "metrics"]);
    // Nothing changed since `feature`'s last commit but the work tree.
    git(root, &["checkout", "-q", "--", "params.yaml"]);
    std::fs::remove_file(root.join("shared/site.conf")).expect("remove");
    let plan = plan_json(root, &["--affected=feature"]);
    assert_eq!(names(&plan), Vec::<String>::new());
}

#[test]
fn a_missing_base_is_a_clear_error_and_a_shallow_clone_works_once_the_base_is_fetched() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    git(root, &["commit", "-q", "-a", "-m", "replicas"]);
    let out = hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=nope",
        ],
    );
    out.failure()
        .stderr_has("error: the base `nope` of `--affected` is not in this clone")
        .stderr_has("fetch the base too (`git fetch --depth=1 origin nope`)");
    let clone = tempfile::tempdir().expect("temporary folder");
    let shallow = clone.path().join("shallow");
    let url = format!("file://{}", root.display());
    let target = shallow.to_string_lossy().into_owned();
    git(
        clone.path(),
        &[
            "clone",
            "-q",
            "--depth=1",
            "--branch=feature",
            &url,
            &target,
        ],
    );
    std::fs::copy(root.join("shop.state"), shallow.join("shop.state")).expect("copy the state");
    let out = hub(
        &shallow,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=origin/main",
        ],
    );
    out.failure()
        .stderr_has("the base `origin/main` of `--affected` is not in this clone");
    git(
        &shallow,
        &[
            "fetch",
            "-q",
            "--depth=1",
            "origin",
            "main:refs/remotes/origin/main",
        ],
    );
    let plan = plan_json(&shallow, &["--affected=origin/main"]);
    assert_eq!(names(&plan), ["net", "app", "metrics"]);
}

#[test]
fn a_folder_entry_selects_the_components_at_or_under_it() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    let app = root.join("components/app");
    let out = hub(
        &app,
        &[
            "plan",
            "../../hub.yaml",
            "../../params.yaml",
            "-s",
            "../../shop.state",
            "-c",
            ".",
            "--format",
            "json",
        ],
    );
    out.success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("plan JSON");
    assert_eq!(names(&plan), ["app", "metrics"]);
    let plan = plan_json(root, &["-c", "components/"]);
    assert_eq!(names(&plan), ["net", "db", "app", "web", "metrics"]);
    let plan = plan_json(root, &["-c", "./components/db+"]);
    assert_eq!(names(&plan), ["net", "db"]);
    let out = hub(
        &app,
        &[
            "plan",
            "../../hub.yaml",
            "../../params.yaml",
            "-s",
            "../../shop.state",
            "-c",
            "../nowhere",
        ],
    );
    let nowhere = root
        .canonicalize()
        .expect("real path")
        .join("components/nowhere");
    out.failure().stderr_has(&format!(
        "error: `-c ../nowhere`: no component of the stack has its folder at or under `{}`",
        nowhere.display()
    ));
}

#[test]
fn a_wanted_component_is_selected_without_waiting_for_the_one_that_wants_it() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    let out = hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "-c",
            "app",
        ],
    );
    out.success();
    let text = &out.stdout;
    assert!(
        text.contains("selection: app → app, metrics (added metrics (wanted by `app`))"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nmetrics: update (runs again: no --changed)\n  selected: wanted by app\n\n"
        ),
        "{text}"
    );
    // No ordering edge: both run in the first wave.
    assert!(text.contains("waves:\n  1. app, metrics\n"), "{text}");
    let out = hub(
        root,
        &[
            "deploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "-c",
            "app",
        ],
    );
    out.success();
    assert_eq!(ran(root), ["deploy app", "deploy metrics"]);
}

#[test]
fn under_changed_a_running_component_runs_what_it_wants() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    // Only `app`'s folder changed since the deploy.
    let script = root.join("components/app/deploy.sh");
    let text = std::fs::read_to_string(&script).expect("read") + "# faster\n";
    std::fs::write(&script, text).expect("write");
    let args = ["hub.yaml", "params.yaml", "-s", "shop.state", "--changed"];
    let out = hub(root, &[&["plan"][..], &args[..]].concat());
    out.success();
    for line in [
        "net: no-op",
        "app: update (folder content changed)",
        "web: no-op",
        "metrics: update (wanted by `app`)",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line}\n{}",
            out.stdout
        );
    }
    let out = hub(root, &[&["deploy"][..], &args[..]].concat());
    out.success();
    assert_eq!(ran(root), ["deploy app", "deploy metrics"]);
    // Nothing changed now: `metrics` is not pulled in by an `app` that
    // does not run.
    let out = hub(root, &[&["plan"][..], &args[..]].concat());
    out.success();
    assert!(
        out.stdout.lines().any(|l| l == "metrics: no-op"),
        "{}",
        out.stdout
    );
    // Recursively, and for a wanted component ordered before the one
    // that wants it: `metrics` wants `net`, first in the order.
    let stack = STACK.replace(
        "    app: [metrics]\n",
        "    app: [metrics]\n    metrics: [net]\n",
    );
    write(root, "hub.yaml", &stack);
    let text = std::fs::read_to_string(&script).expect("read") + "# again\n";
    std::fs::write(&script, text).expect("write");
    let out = hub(root, &[&["plan"][..], &args[..]].concat());
    out.success();
    for line in [
        "net: update (wanted by `metrics`)",
        "db: no-op",
        "app: update (folder content changed)",
        "metrics: update (wanted by `app`)",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line}\n{}",
            out.stdout
        );
    }
    let out = hub(root, &[&["deploy"][..], &args[..]].concat());
    out.success();
    assert_eq!(ran(root), ["deploy net", "deploy app", "deploy metrics"]);
}

#[test]
fn a_typo_in_wants_or_watch_names_the_closest_component() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    write(
        root,
        "hub.yaml",
        &STACK.replace("app: [metrics]", "app: [metric]"),
    );
    let out = hub(
        root,
        &["plan", "hub.yaml", "params.yaml", "-s", "shop.state"],
    );
    out.failure()
        .stderr_has("`lifecycle.wants` names `metric`, which is not a component of the stack")
        .stderr_has("did you mean `metrics`?");
    write(
        root,
        "hub.yaml",
        &STACK.replace("web: [shared", "webb: [shared"),
    );
    let out = hub(
        root,
        &["plan", "hub.yaml", "params.yaml", "-s", "shop.state"],
    );
    out.failure()
        .stderr_has("`lifecycle.watch` names `webb`, which is not a component of the stack");
    write(root, "hub.yaml", &STACK.replace("  wants:", "  wnats:"));
    let out = hub(
        root,
        &["plan", "hub.yaml", "params.yaml", "-s", "shop.state"],
    );
    out.failure()
        .stderr_has("unknown key `lifecycle.wnats` looks like a typo (did you mean `wants`?)")
        .stderr_has("hub.yaml:13:3");
}

#[test]
fn the_graph_of_the_affected_components() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    let out = hub(
        root,
        &[
            "graph",
            "hub.yaml",
            "params.yaml",
            "--affected=main",
            "--format",
            "mermaid",
        ],
    );
    out.success();
    let nodes: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('n') && l.contains("[\""))
        .collect();
    assert_eq!(
        nodes,
        [
            "  n0[\"net\"]",
            "  n1[\"app\"]",
            "  n2[\"web\"]",
            "  n3[\"metrics\"]"
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn a_saved_plan_of_the_affected_components_applies_them_and_undeploy_guards_them() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    feature_branch(root);
    let out = hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=main",
            "--out",
            "shop.state.plan.json",
        ],
    );
    out.success();
    // The plan records the commit it was made at: once the changes are
    // committed, it is not the commit reviewed, and the plan is refused.
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "all"]);
    let stale = hub(root, &["deploy", "--plan", "shop.state.plan.json"]);
    stale.failure();
    assert!(
        stale.stderr.contains("it was made at commit `"),
        "{}",
        stale.stderr
    );
    assert!(ran(root).is_empty(), "nothing ran");
    // Made again at the new commit, it selects the same components.
    hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=main",
            "--out",
            "shop.state.plan.json",
        ],
    )
    .success();
    hub(root, &["deploy", "--plan", "shop.state.plan.json"]).success();
    assert_eq!(
        ran(root),
        ["deploy net", "deploy app", "deploy web", "deploy metrics"]
    );
    // `net` is affected and `db`, outside the selection, depends on it.
    let out = hub(
        root,
        &[
            "undeploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "shop.state",
            "--affected=main",
        ],
    );
    out.failure()
        .stderr_has("the undeploy would take down components that deployed ones depend on: `db` depends on `net` (`depends`)");
    // Like `-c`, `--affected` needs the state.
    let out = hub(
        root,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "none.state",
            "--affected=main",
        ],
    );
    out.failure()
        .stderr_has("error: `--affected` needs a state file, and `none.state` does not exist");
}

#[test]
fn wants_and_watch_merge_across_from_stack_and_stay_in_the_elaborated_file() {
    let Some(dir) = repository() else { return };
    let root = dir.path();
    write(
        root,
        "child/hub.yaml",
        "version: 1\nkind: stack\nmeta: {name: child, fromStack: ..}\nlifecycle:\n  wants:\n    app: [web]\n    net: [metrics]\n  watch:\n    db: [migrations/*.sql]\n",
    );
    let out = hub(
        root,
        &[
            "elaborate",
            "child/hub.yaml",
            "params.yaml",
            "-o",
            "child.elaborate",
        ],
    );
    out.success();
    let stack = &crate::common::read_documents(&root.join("child.elaborate"))[0];
    assert_eq!(
        stack["lifecycle"]["wants"],
        crate::common::yaml("{app: [web], net: [metrics]}")
    );
    assert_eq!(
        stack["lifecycle"]["watch"],
        crate::common::yaml("{web: [shared/*.conf], db: [migrations/*.sql]}")
    );
    // Another stack: `-f` plans with the shop's state all the same.
    let plan = plan_json_of(root, "child.elaborate", &["-c", "app", "-f"]);
    assert_eq!(names(&plan), ["app", "web"]);
}

/// `hub plan FILE -s shop.state ARGS --format json`.
fn plan_json_of(root: &Path, file: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["plan", file, "-s", "shop.state", "--format", "json"];
    all.extend(args);
    let out = hub(root, &all);
    out.success();
    serde_json::from_str(&out.stdout).expect("plan JSON")
}

/// `net` prints the output `cidr` (from its file `cidr`); `db` reads it,
/// `web` only depends on `net`. Committed on `main` and deployed.
fn outputs_repository() -> Option<tempfile::TempDir> {
    if Command::new("git").arg("--version").output().is_err() {
        skipped("git is not installed");
        return None;
    }
    let dir = tempfile::tempdir().expect("temporary folder");
    let root = dir.path();
    write(
        root,
        "hub.yaml",
        "version: 1
kind: stack
meta: {name: nets}
components:
- {name: net, source: {dir: components/net}}
- {name: db, source: {dir: components/db}, depends: [net]}
- {name: web, source: {dir: components/web}, depends: [net]}
",
    );
    write(root, ".gitignore", "nets.state*\nran\n*.log\n");
    write(
        root,
        "components/net/hub-component.yaml",
        "version: 1\nkind: component\nmeta: {name: net}\noutputs:\n- {name: component.net.cidr, fromTfVar: cidr}\n",
    );
    write(root, "components/net/cidr", "10.0.0.0/16\n");
    write(
        root,
        "components/db/hub-component.yaml",
        "version: 1\nkind: component\nmeta: {name: db}\nparameters:\n- {name: component.net.cidr, env: CIDR}\n",
    );
    write(
        root,
        "components/web/hub-component.yaml",
        "version: 1\nkind: component\nmeta: {name: web}\n",
    );
    for (name, extra) in [
        ("net", "echo; echo Outputs:; echo \"cidr = $(cat cidr)\"\n"),
        ("db", ""),
        ("web", ""),
    ] {
        let script = format!("components/{name}/deploy.sh");
        write(
            root,
            &script,
            &format!("#!/bin/sh\necho deploy {name} >> ../../ran\n{extra}"),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join(&script), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "nets"]);
    hub(root, &["deploy", "hub.yaml", "-s", "nets.state"]).success();
    let _ = std::fs::remove_file(root.join("ran"));
    Some(dir)
}

#[test]
fn dependents_an_affected_selection_adds_run_only_if_an_output_they_read_changes() {
    let Some(dir) = outputs_repository() else {
        return;
    };
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "feature"]);
    // `net`'s script changes, not its output.
    let script = root.join("components/net/deploy.sh");
    let text = std::fs::read_to_string(&script).expect("read") + "# faster\n";
    std::fs::write(&script, text).expect("write");
    let args = [
        "hub.yaml",
        "-s",
        "nets.state",
        "--affected=main",
        "--with-dependents",
    ];
    let plan = hub(root, &[&["plan"], &args[..]].concat());
    plan.success();
    for line in [
        "net: update (folder content changed)\n",
        "db: update (if net's component.net.cidr changes)\n",
        "web: no-op\n",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let deploy = hub(root, &[&["deploy"], &args[..]].concat());
    deploy.success();
    assert_eq!(ran(root), ["deploy net"], "{}", deploy.stderr);
    assert!(
        deploy.stderr.contains(
            "hub: db skipped: no output it reads changed (compared: net's component.net.cidr)"
        ),
        "{}",
        deploy.stderr
    );
    // Now the output changes too: `db` runs, `web` still does not.
    write(root, "components/net/cidr", "10.1.0.0/16\n");
    let deploy = hub(root, &[&["deploy"], &args[..]].concat());
    deploy.success();
    assert_eq!(ran(root), ["deploy net", "deploy db"], "{}", deploy.stderr);
}
