//! Every command's `--help`, snapshotted so that a flag that appears where
//! it means nothing shows in review; the version, completions and man
//! pages.

use crate::common::Output;

/// `hub ARGS` with the variables that `--help` would show cleared.
fn hub(args: &[&str]) -> Output {
    let out = assert_cmd::Command::cargo_bin("hub")
        .expect("hub binary")
        .args(args)
        .env_remove("HUB_FORCE")
        .env_remove("HUB_JOBS")
        .env_remove("HUB_ELABORATE")
        .env_remove("HUB_STATE")
        .env_remove("HUB_COMPONENTS_BASEDIR")
        .write_stdin(Vec::new())
        .output()
        .expect("run hub");
    Output::of(out, std::path::Path::new("."))
}

const COMMANDS: &[&[&str]] = &[
    &[],
    &["elaborate"],
    &["validate"],
    &["cel"],
    &["params"],
    &["unlock"],
    &["state"],
    &["state", "pull"],
    &["state", "list"],
    &["state", "show"],
    &["state", "rm"],
    &["state", "mv"],
    &["state", "push"],
    &["util"],
    &["util", "otp"],
    &["util", "run"],
    &["deploy"],
    &["undeploy"],
    &["check"],
    &["invoke"],
    &["render"],
    &["plan"],
    &["graph"],
    &["report"],
    &["explain"],
    &["version"],
    &["completions"],
    &["man"],
    &["change"],
    &["change", "list"],
    &["change", "show"],
    &["change", "merged"],
    &["change", "closed"],
    &["change", "unlock"],
    // policy (issue 27, item 6).
    &["policy"],
    &["policy", "test"],
    &["run"],
    &["run", "finish"],
    &["pipeline"],
    &["ci"],
];

#[test]
fn every_command_help_is_as_reviewed() {
    for command in COMMANDS {
        let mut args = command.to_vec();
        args.push("--help");
        let out = hub(&args);
        out.success();
        let name = match command.join("-") {
            name if name.is_empty() => "hub".to_string(),
            name => name,
        };
        insta::assert_snapshot!(format!("help_{name}"), out.stdout);
    }
}

/// The offenders of issue 12 stay fixed.
#[test]
fn flags_appear_only_where_they_mean_something() {
    let help = |command: &str| hub(&[command, "--help"]).stdout;
    let plan = help("plan");
    for flag in [
        "--compressed",
        "--dry",
        "--state-format",
        "--why",
        "--os-environment",
        "--git-outputs",
    ] {
        assert!(!plan.contains(flag), "plan --help lists {flag}");
    }
    assert!(plan.contains("Plan without a state"), "{plan}");
    // A plan takes the deploy's flags that change what runs.
    assert!(
        plan.contains("--changed") && plan.contains("--prune"),
        "{plan}"
    );
    assert!(!help("undeploy").contains("--changed"));
    assert!(!help("deploy").contains("--guess"));
    let invoke = help("invoke");
    let usage = invoke
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .expect("usage");
    assert_eq!(usage, "Usage: hub invoke [OPTIONS] <COMPONENT> <VERB>");
    // A flag a command does not have is refused by the parser (exit 2).
    let out = hub(&["undeploy", "hub.yaml", "--changed"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("unexpected argument '--changed'"),
        "{}",
        out.stderr
    );
}

#[test]
fn invoke_without_its_files_says_where_they_come_from() {
    let out = hub(&["invoke", "app", "status"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(out.stderr.contains("set HUB_ELABORATE"), "{}", out.stderr);
}

#[test]
fn version_names_the_commit() {
    let long = hub(&["--version"]);
    let command = hub(&["version"]);
    assert_eq!(long.success().stdout, command.success().stdout);
    let line = command.stdout.trim_end();
    let version = format!("hub {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&version) && line.ends_with(')'), "{line}");
    let commit = &line[version.len()..line.len() - 1];
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _hub"),
        ("zsh", "#compdef hub"),
        ("fish", "complete -c hub"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = hub(&["completions", shell]);
        out.success();
        assert!(out.stdout.contains(marker), "{shell}: no {marker:?}");
        assert!(out.stdout.contains("explain"), "{shell}: no subcommands");
    }
    let bash = hub(&["completions", "bash"]).stdout;
    let checked = std::process::Command::new("bash")
        .args(["-n", "-c", &bash])
        .status()
        .expect("bash");
    assert!(checked.success(), "the bash script does not parse");
    assert_eq!(hub(&["completions", "tcsh"]).status, 2);
}

#[test]
fn man_writes_one_page_per_command_from_the_same_help() {
    let folder = tempfile::tempdir().expect("temp dir");
    let target = folder.path().join("man1");
    // A link planted where a page goes is replaced, never written through.
    let outside = folder.path().join("outside");
    std::fs::write(&outside, "keep").expect("write");
    std::fs::create_dir(&target).expect("mkdir");
    std::os::unix::fs::symlink(&outside, target.join("hub-deploy.1")).expect("symlink");
    let out = hub(&["man", target.to_str().expect("utf-8 path")]);
    out.success();
    // `util run` is hidden from the help, so it has no page either.
    let documented: Vec<_> = COMMANDS.iter().filter(|c| **c != ["util", "run"]).collect();
    assert!(
        out.stderr
            .contains(&format!("wrote {} man pages", documented.len())),
        "{}",
        out.stderr
    );
    for command in documented {
        let name = std::iter::once("hub")
            .chain(command.iter().copied())
            .collect::<Vec<_>>()
            .join("-");
        let page = std::fs::read_to_string(target.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(
            page.contains(&format!(".TH {name} 1")),
            "{name}.1 has no title line"
        );
    }
    let deploy = std::fs::read_to_string(target.join("hub-deploy.1")).expect("hub-deploy.1");
    assert!(
        deploy.contains("changed"),
        "hub-deploy.1 does not describe --changed"
    );

    let file = folder.path().join("a-file");
    std::fs::write(&file, "").expect("write");
    let out = hub(&["man", file.to_str().expect("utf-8 path")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("a-file") && out.stderr.contains("folder"),
        "{}",
        out.stderr
    );
}
