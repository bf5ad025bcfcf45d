//! `hub plan` for review in CI: `--format markdown` (a pull-request
//! comment) and `--detailed-exitcode` (0 nothing would change, 2 something
//! would, 1 an error).

use crate::common::demo_copy;
use crate::plan::{deploy_demo, plan, without_serial};

#[test]
fn a_verbose_markdown_plan_has_a_summary_a_table_and_every_component_collapsed() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let out = plan(
        &dir,
        &[
            "--format",
            "markdown",
            "--changed",
            "-c",
            "app+",
            "--replace",
            "database",
            "--verbose",
        ],
    );
    out.success();
    insta::assert_snapshot!(without_serial(&dir, &out.stdout), @r#"
    ### Plan: deploy stack `demo`

    **0 to create, 1 to update, 0 to replace, 1 to rerun, 0 to delete, 1 unchanged, 0 skipped, 0 would fail**

    State: `demo.state` (serial N) · selection: app+ → network, database, app (added database (`app` depends on it), network (`app` depends on it)) · jobs: 1

    | Component | Action | Why |
    |---|---|---|
    | `network` | no-op |  |
    | `database` | **rerun** | `--replace`: runs even if unchanged |
    | `app` | **update** | if database's component.database.host or database's component.database.password changes |

    <details><summary><code>network</code>: no-op</summary>

    ```diff
      hub.componentName = network
      dns.domain = demo.local
      component.network.cidr = 10.0.0.0/16
      hub.provides = database network
    ```

    </details>

    <details><summary><code>database</code>: rerun</summary>

    Runs: deploy.sh

    Waits for: network (`depends`, provides `network`, parameter `component.network.subnet` is its output)

    Requires: network ← network

    ```diff
      hub.componentName = database
      component.network.subnet = 10.0.0.0/24
      component.database.size = small
      component.database.name = demo
      hub.provides = database network
    ```

    </details>

    <details><summary><code>app</code>: update</summary>

    Runs: deploy.sh

    Waits for: database (`depends`, provides `database`, parameter `component.database.password` is its output, parameter `component.database.host` is its output)

    Requires: database ← database

    ```diff
      hub.componentName = app
      dns.domain = demo.local
      app.replicas = 3
      app.tier = ha
      env.owner = (from $USER)
      component.database.host = db.10.0.0.0
      component.database.password = (masked)
      hub.provides = database network
    ```

    </details>
    "#);
}

#[test]
fn a_markdown_plan_masks_secrets_and_refuses_reveal() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    // What the demo's database script prints as its secret output.
    let password = "pw-demo-small-1234";
    assert!(std::fs::read_to_string(dir.join("demo.state"))
        .expect("state")
        .contains(password));
    let out = plan(&dir, &["--format", "markdown", "--verbose"]);
    out.success();
    assert!(
        out.stdout
            .contains("  component.database.password = (masked)\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains(password), "{}", out.stdout);
    let revealed = plan(&dir, &["--format", "markdown", "--reveal"]);
    revealed
        .failure()
        .stderr_has("a markdown plan is meant to be posted where others read it");
    assert!(revealed.stdout.is_empty());
}

#[test]
fn the_detailed_exit_code_says_whether_anything_would_change() {
    let (_tmp, dir) = demo_copy();
    let first = plan(&dir, &["--detailed-exitcode"]);
    assert_eq!(first.status, 2, "a first deploy changes everything");
    assert!(
        first.stdout.contains("Plan: 3 to create"),
        "{}",
        first.stdout
    );
    assert!(!first.stderr.contains("error"), "{}", first.stderr);
    deploy_demo(&dir);
    let rerun = plan(&dir, &["--detailed-exitcode"]);
    assert_eq!(
        rerun.status, 2,
        "a deploy without --changed runs every component again"
    );
    let again = plan(&dir, &["--detailed-exitcode", "--changed"]);
    assert_eq!(again.status, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again
            .stdout
            .contains("0 to update, 0 to replace, 0 to rerun, 0 to delete, 3 unchanged"),
        "{}",
        again.stdout
    );
    let replaced = plan(
        &dir,
        &["--detailed-exitcode", "--changed", "--replace", "app"],
    );
    assert_eq!(replaced.status, 2, "{}", replaced.stderr);
    let undeploy = plan(&dir, &["--detailed-exitcode", "--undeploy"]);
    assert_eq!(undeploy.status, 2, "{}", undeploy.stderr);
    // Errors exit 1, usage errors included (they exit 2 otherwise).
    let unknown = plan(&dir, &["--detailed-exitcode", "-c", "nope"]);
    assert_eq!(unknown.status, 1, "{}", unknown.stderr);
    unknown.stderr_has("`-c` names `nope`");
    let usage = plan(
        &dir,
        &["--detailed-exitcode", "--format", "markdown", "--reveal"],
    );
    assert_eq!(usage.status, 1, "{}", usage.stderr);
    let clap = plan(&dir, &["--detailed-exitcode", "--no-such-flag"]);
    assert_eq!(clap.status, 1, "{}", clap.stderr);
    assert_eq!(plan(&dir, &["--no-such-flag"]).status, 2);
}
