//! The command line as a newcomer meets it (issue 41, items 2 and 3): `-h`
//! fits a screen, the state is `-s` everywhere (old spellings warn, with
//! the exact words), the Hub CLI's letters still work, `hub ci` defaults
//! its state, a usage line after a typo names what is required, and `hub
//! --help` lists the commands in the order of a day's work.

use crate::common::{demo_copy, hub_pinned, pinned_command, Output};
use std::path::Path;

/// `hub ARGS` in `dir`, with the variables `--help` would show cleared.
fn hub(dir: &Path, args: &[&str]) -> Output {
    hub_pinned(dir, args)
}

/// The demo deployed into `hub.yaml.state`, the state every command
/// defaults to.
fn deployed_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = demo_copy();
    hub(&dir, &["elaborate", "hub.yaml", "params.yaml"]).success();
    hub(&dir, &["deploy", "hub.yaml.elaborate"]).success();
    (tmp, dir)
}

#[test]
fn short_help_of_the_run_commands_fits_a_screen() {
    let dir = Path::new(".");
    for (command, lines) in [("deploy", 33), ("plan", 29), ("undeploy", 30)] {
        let out = hub(dir, &[command, "-h"]);
        out.success();
        assert_eq!(
            out.stdout.lines().count(),
            lines,
            "hub {command} -h:\n{}",
            out.stdout
        );
        for hidden in [
            "--git-outputs",
            "--load-global-state",
            "--plan ",
            "--sha",
            "--clouds",
        ] {
            assert!(
                !out.stdout.contains(hidden),
                "hub {command} -h lists {hidden}"
            );
        }
        for shown in ["-s, --state", "-c, --components", "-e, --environment"] {
            assert!(out.stdout.contains(shown), "hub {command} -h hides {shown}");
        }
    }
    // `--help` has them all, the Hub CLI's under their own heading.
    let long = hub(dir, &["deploy", "--help"]).stdout;
    let heading = long
        .find("Hub CLI compatibility (not in -h):")
        .expect("the compatibility heading");
    let git_outputs = long.find("--git-outputs").expect("--git-outputs");
    assert!(git_outputs > heading, "{long}");
    assert!(long.contains("The Hub CLI's short flags are accepted and not listed: -o (--offset), -l (--limit), -y (--dry), -g (--load-global-state)."));
}

#[test]
fn a_typo_of_a_flag_shows_the_commands_own_usage_line() {
    let out = hub(Path::new("."), &["plan", "--bogus"]);
    assert_eq!(out.status, 2);
    assert_eq!(
        out.stderr,
        "error: unexpected argument '--bogus' found\n\n  tip: a similar argument exists: '--clouds'\n\nUsage: hub plan [OPTIONS] <MANIFEST>...\n\nFor more information, try '--help'.\n"
    );
}

#[test]
fn the_commands_are_listed_in_the_order_of_a_day() {
    let out = hub(Path::new("."), &["--help"]);
    let listed: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        listed[..6],
        [
            "elaborate",
            "plan",
            "deploy",
            "undeploy",
            "explain",
            "state"
        ]
    );
    let at = |name| listed.iter().position(|c| *c == name).expect(name);
    assert!(at("check") < at("change") && at("unlock") < at("invoke") && at("cel") < at("version"));
    assert!(out
        .stdout
        .contains("Which view of a state: `hub explain` everything it records"));
}

/// Each old spelling works, and says what to write instead.
#[test]
fn positional_states_and_cel_y_still_work_with_a_warning() {
    let (_tmp, dir) = deployed_demo();
    let cases: [(&[&str], &str); 7] = [
        (
            &["explain", "hub.yaml.state", "-g", "--json"],
            "warning: `hub explain hub.yaml.state` is deprecated: write `hub explain -s hub.yaml.state`",
        ),
        (
            &["explain", "hub.yaml.elaborate", "hub.yaml.state", "-g"],
            "warning: `hub explain hub.yaml.elaborate hub.yaml.state` is deprecated: write `hub explain -m hub.yaml.elaborate -s hub.yaml.state`",
        ),
        (
            &["state", "list", "hub.yaml.state"],
            "warning: `hub state list hub.yaml.state` is deprecated: write `hub state list -s hub.yaml.state`",
        ),
        (
            &["state", "pull", "hub.yaml.state", "pulled.state"],
            "warning: `hub state pull hub.yaml.state pulled.state` is deprecated: write `hub state pull -s hub.yaml.state -o pulled.state`",
        ),
        (
            &["report", "hub.yaml.state", "-o", "run.html"],
            "warning: `hub report hub.yaml.state` is deprecated: write `hub report -s hub.yaml.state`",
        ),
        (
            &["unlock", "hub.yaml.state"],
            "warning: `hub unlock hub.yaml.state` is deprecated: write `hub unlock -s hub.yaml.state`",
        ),
        (
            &["cel", "-y", "${a}-#{b}", "a=x,b=y"],
            "warning: `hub cel -y` is deprecated: write `hub cel --yaml` (`-y` means `--yes` everywhere else)",
        ),
    ];
    for (args, warning) in cases {
        let out = hub(&dir, args);
        assert_eq!(
            out.status,
            if args[0] == "unlock" { 1 } else { 0 },
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.lines().any(|l| l == warning),
            "{args:?}: expected the line\n{warning}\nin\n{}",
            out.stderr
        );
    }
    assert!(dir.join("pulled.state").is_file());
    assert!(dir.join("run.html").is_file());
    // The new spellings say nothing more, and read the same.
    let old = hub(&dir, &["explain", "hub.yaml.state", "-g", "--json"]).stdout;
    let new = hub(&dir, &["explain", "-s", "hub.yaml.state", "-g", "--json"]);
    new.success();
    assert_eq!(new.stdout, old);
    assert!(!new.stderr.contains("deprecated"), "{}", new.stderr);
    let defaulted = hub(&dir, &["explain", "-g", "--json"]);
    assert_eq!(defaulted.stdout, old);
    // Both at once is refused: which one is meant?
    let both = hub(&dir, &["explain", "hub.yaml.state", "-s", "other.state"]);
    assert_eq!(both.status, 2, "{}", both.stderr);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}

/// The Hub CLI's letters of deploy and explain still mean what they meant
/// there, silently.
#[test]
fn the_hub_clis_short_flags_still_work_unlisted() {
    let (_tmp, dir) = deployed_demo();
    let out = hub(
        &dir,
        &["plan", "hub.yaml.elaborate", "-o", "app", "-l", "app"],
    );
    out.success();
    assert!(!out.stderr.contains("deprecated"), "{}", out.stderr);
    let offset = hub(
        &dir,
        &[
            "plan",
            "hub.yaml.elaborate",
            "--offset",
            "app",
            "--limit",
            "app",
        ],
    );
    assert_eq!(out.stdout, offset.stdout);
    let oplog = hub(&dir, &["explain", "-l"]);
    oplog.success();
    assert_eq!(oplog.stdout, hub(&dir, &["explain", "--op-log"]).stdout);
    // `-y` is a dry run there: the demo has no `deploy-test` to run.
    let dry = hub(
        &dir,
        &["deploy", "hub.yaml.elaborate", "-y", "-g", "-c", "app"],
    );
    dry.failure()
        .stderr_has("error: component `app`: no implementation of `deploy-test`");
}

#[test]
fn hub_ci_defaults_its_state_as_the_other_commands_do() {
    let (_tmp, dir) = deployed_demo();
    let event = crate::ci::github(
        "issue_comment",
        &crate::ci::fixture("github/issue_comment.plan.member.json"),
    );
    let mut command = pinned_command(&dir, &["ci", "hub.yaml", "params.yaml"]);
    for name in crate::ci::CI_VARIABLES {
        command.env_remove(name);
    }
    command.envs(event.iter().map(|(k, v)| (k, v)));
    let out = Output::of(command.output().expect("run hub"), &dir);
    out.success();
    assert!(
        out.stdout
            .contains("hub ci: plan of pull request #42 succeeded"),
        "{}",
        out.stdout
    );
    assert!(dir.join("hub.yaml.state.changes").is_dir());
}
