//! Secrets in clear where they should not be: a component printing a
//! secret output or a credential hub gave it, `-e` values and `--mask`
//! values on command lines, an elaborated file holding an `-e` value.
//! Every row asserts the exit code, the message, that the secret is in
//! nothing hub printed and in no file it wrote but those meant to hold
//! values (the state, its journal, an elaborated file), which must be
//! private (0600), and that the value was not lost (the state still holds
//! the secret output, the elaborated file the `-e` value).

use super::{everything_written, tree};
use crate::common::{pinned_command, Output, Test};
use std::path::Path;

const SECRET: &str = "pg://admin:Tr0ub4dor-3@db.internal/app";

const STACK: &str = "
    version: 1
    kind: stack
    meta:
      name: secrets
    components:
      - name: db
        source:
          dir: db
    parameters:
      - name: db.password
        fromEnv: DB_PASS
        value: default-pass
";

const COMPONENT: &str = "
    version: 1
    kind: component
    meta:
      name: db
    lifecycle:
      verbs: [deploy, undeploy, backup]
    parameters:
      - name: db.password
        env: DB_PASSWORD
    outputs:
      - name: dsn
        fromTfVar: db_dsn
        kind: secret
      - name: host
        fromTfVar: db_host
";

/// Prints the component's outputs, the secret `dsn` among them.
fn outputs_block() -> String {
    format!("echo; echo Outputs:; echo 'db_host = db.internal'; echo 'db_dsn = {SECRET}'; echo\n")
}

/// Stack `secrets`: component `db` running `deploy` (a shell script body).
fn stack(deploy: &str) -> Test {
    stack_with(STACK, deploy)
}

/// [`stack`] with another stack manifest.
fn stack_with(manifest: &str, deploy: &str) -> Test {
    Test::new()
        .file("hub.yaml", manifest)
        .file("db/hub-component.yaml", COMPONENT)
        .script("db/deploy.sh", &format!("#!/bin/sh\n{deploy}"))
        .script("db/undeploy.sh", "#!/bin/sh\necho undeploy\n")
}

const DEPLOY: &[&str] = &["deploy", "hub.yaml", "-s", "hub.state"];
/// The files meant to hold values; they must be private.
const STATE_FILES: &[&str] = &["hub.state", "hub.state.journal", "hub.state.backup"];
/// What the tests write: the stack's sources, not looked at.
const INPUTS: &[&str] = &[
    "hub.yaml",
    "db/hub-component.yaml",
    "db/deploy.sh",
    "db/undeploy.sh",
    "db/backup.sh",
    "app/hub-component.yaml",
    "app/deploy.sh",
];

struct Row {
    name: &'static str,
    /// The test folder, as the scenario starts.
    setup: fn() -> Test,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    stdin: &'static str,
    code: i32,
    /// In what hub printed (stdout and stderr).
    message: &'static str,
    /// The value that must not leak.
    secret: &'static str,
    /// Files (below the test folder) that may hold it, privately.
    holders: &'static [&'static str],
    /// Files that must still hold the value (nothing was lost): the state
    /// its secret output, the elaborated file its `-e` value.
    kept_in: &'static [&'static str],
}

const CREDENTIAL: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const PASSWORD: &str = "correct-horse-battery";

const ROWS: &[Row] = &[
    Row {
        name: "a secret output printed in an Outputs: block",
        setup: || stack(&outputs_block()),
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 0,
        message: "db_dsn = (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "a secret output echoed again after its Outputs: block, on stderr",
        setup: || {
            stack(&format!(
                "{}echo \"connected to {SECRET}\" >&2\n",
                outputs_block()
            ))
        },
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 0,
        message: "connected to (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "a secret sent through `hub util otp`, echoed after its Outputs: block",
        setup: || {
            stack(&format!(
                "echo; echo Outputs:; echo 'db_host = db.internal'; printf 'db_dsn = {SECRET}\\n' | \"$HUB\" util otp; echo\necho \"connected to {SECRET}\"\necho \"again {SECRET}\" >&2\n"
            ))
        },
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 0,
        message: "connected to (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "a rerun printing a secret output the state knows before its block",
        setup: rerun_echoing_the_secret_first,
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 0,
        message: "reusing (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "hub invoke running a verb that prints a secret output the state knows",
        setup: deployed_with_a_backup_verb,
        args: &[
            "invoke",
            "db",
            "backup",
            "-m",
            "hub.yaml",
            "-s",
            "hub.state",
        ],
        env: &[],
        stdin: "",
        code: 0,
        message: "backing up (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "a later component echoing a secret-looking raw output no output declares",
        setup: a_later_component_echoing_an_undeclared_password,
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 0,
        message: "app uses (masked)",
        secret: SECRET,
        holders: STATE_FILES,
        kept_in: &["hub.state"],
    },
    Row {
        name: "a component failing after printing a secret output (the state's log keeps its last lines)",
        setup: || stack(&format!("{}exit 3\n", outputs_block())),
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 1,
        message: "db_dsn = (masked)",
        secret: SECRET,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "a component echoing the AWS secret key hub hands it",
        setup: || {
            stack(&format!(
                "{}{}",
                "echo \"key: $AWS_SECRET_ACCESS_KEY\"\n",
                outputs_block()
            ))
        },
        args: DEPLOY,
        env: &[("AWS_SECRET_ACCESS_KEY", CREDENTIAL)],
        stdin: "",
        code: 0,
        message: "key: (masked)",
        secret: CREDENTIAL,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "a component echoing the state encryption password",
        setup: || {
            stack(&format!(
                "{}{}",
                "echo \"pw: $HUB_CRYPTO_PASSWORD\" >&2\n",
                outputs_block()
            ))
        },
        args: DEPLOY,
        env: &[("HUB_CRYPTO_PASSWORD", PASSWORD)],
        stdin: "",
        code: 0,
        message: "pw: (masked)",
        secret: PASSWORD,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "a component echoing the Azure storage key",
        setup: || {
            stack(&format!(
                "{}{}",
                "echo \"az: $AZURE_STORAGE_ACCOUNT_KEY\"\n",
                outputs_block()
            ))
        },
        args: DEPLOY,
        env: &[("AZURE_STORAGE_ACCOUNT_KEY", CREDENTIAL)],
        stdin: "",
        code: 0,
        message: "az: (masked)",
        secret: CREDENTIAL,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "hub elaborate -e writes the value into the elaborated file",
        setup: || stack("true\n"),
        args: &[
            "elaborate",
            "hub.yaml",
            "-e",
            "DB_PASS=Zebra-Staple-42",
            "-o",
            "hub.yaml.elaborate",
        ],
        env: &[],
        stdin: "",
        code: 0,
        message: "",
        secret: "Zebra-Staple-42",
        holders: &["hub.yaml.elaborate"],
        kept_in: &["hub.yaml.elaborate"],
    },
    Row {
        name: "hub elaborate of a stack giving db.password a value",
        setup: || stack("true\n"),
        args: &["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"],
        env: &[],
        stdin: "",
        code: 0,
        message: "",
        secret: "default-pass",
        holders: &["hub.yaml.elaborate"],
        kept_in: &["hub.yaml.elaborate"],
    },
    Row {
        name: "util run --mask-env keeps the value out of hub's command line",
        setup: || Test::new(),
        args: &[
            "util",
            "run",
            "--mask-env",
            "DB_PASSWORD",
            "--",
            "sh",
            "-c",
            "echo \"pw $DB_PASSWORD\"; tr '\\0' ' ' < /proc/$PPID/cmdline; echo",
        ],
        env: &[("DB_PASSWORD", PASSWORD)],
        stdin: "",
        code: 0,
        message: "pw (masked)",
        secret: PASSWORD,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "util run --mask-env naming a variable hub does not have",
        setup: || Test::new(),
        args: &[
            "util",
            "run",
            "--mask-env",
            "DB_PASSWRD",
            "--",
            "sh",
            "-c",
            "echo \"pw $DB_PASSWORD\"",
        ],
        env: &[("DB_PASSWORD", PASSWORD)],
        stdin: "",
        code: 2,
        message: "`DB_PASSWRD` is not set (or not UTF-8) in hub's environment; export it first",
        secret: PASSWORD,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "util run --mask-stdin reads the values from stdin",
        setup: || Test::new(),
        args: &[
            "util",
            "run",
            "--mask-stdin",
            "--",
            "sh",
            "-c",
            "echo \"pw $DB_PASSWORD\"",
        ],
        env: &[("DB_PASSWORD", PASSWORD)],
        stdin: "correct-horse-battery\n",
        code: 0,
        message: "pw (masked)",
        secret: PASSWORD,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "util run --mask warns that its value is in the command line",
        setup: || Test::new(),
        args: &[
            "util",
            "run",
            "--mask",
            "correct-horse-battery",
            "--",
            "sh",
            "-c",
            "echo \"pw $DB_PASSWORD\"",
        ],
        env: &[("DB_PASSWORD", PASSWORD)],
        stdin: "",
        code: 0,
        message: "pass it with --mask-env NAME or --mask-stdin",
        secret: PASSWORD,
        holders: &[],
        kept_in: &[],
    },
    Row {
        name: "a secret parameter with a NUL byte, which no process environment can take",
        setup: a_password_with_a_nul_byte,
        args: DEPLOY,
        env: &[],
        stdin: "",
        code: 1,
        message: "environment variable `DB_PASSWORD` (parameter `db.password`, set at ",
        secret: NUL_PREFIX,
        holders: STATE_FILES,
        kept_in: &[],
    },
];

/// What comes before the NUL byte of [`a_password_with_a_nul_byte`]'s
/// password.
const NUL_PREFIX: &str = "nul-Tr0ub4dor-prefix";

/// The stack's password, from `hub.yaml`, holds a NUL byte (YAML's `\0`).
fn a_password_with_a_nul_byte() -> Test {
    let stack = STACK.replace(
        "value: default-pass",
        &format!("value: \"{NUL_PREFIX}\\0after\""),
    );
    stack_with(&stack, "echo deployed\n")
}

/// A first deploy recorded `dsn`; the component now prints it before its
/// `Outputs:` block.
fn rerun_echoing_the_secret_first() -> Test {
    let test = stack(&outputs_block());
    run(&test, DEPLOY, &[], "").success();
    stack_script(
        &test,
        &format!("echo \"reusing {SECRET}\"\n{}", outputs_block()),
    );
    test
}

/// `db` prints `admin_password`, a raw output no output declares;
/// `app`, deployed after it, echoes it.
fn a_later_component_echoing_an_undeclared_password() -> Test {
    let stack = STACK.replace(
        "          dir: db\n",
        "          dir: db\n      - name: app\n        source:\n          dir: app\n        depends: [db]\n",
    );
    let block = format!("echo; echo Outputs:; echo 'admin_password = {SECRET}'; echo\n");
    Test::new()
        .file("hub.yaml", &stack)
        .file(
            "db/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: db}\n",
        )
        .script("db/deploy.sh", &format!("#!/bin/sh\n{block}"))
        .file(
            "app/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: app}\n",
        )
        .script(
            "app/deploy.sh",
            &format!("#!/bin/sh\necho \"app uses {SECRET}\"\n"),
        )
}

/// A first deploy recorded `dsn`; the component has a `backup` verb that
/// prints it.
fn deployed_with_a_backup_verb() -> Test {
    let test = stack(&outputs_block());
    run(&test, DEPLOY, &[], "").success();
    let backup = test.root().join("db/backup.sh");
    std::fs::write(
        &backup,
        format!("#!/bin/sh\necho \"backing up {SECRET}\"\n"),
    )
    .expect("write backup.sh");
    std::fs::set_permissions(&backup, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    test
}

fn stack_script(test: &Test, body: &str) {
    std::fs::write(
        test.root().join("db/deploy.sh"),
        format!("#!/bin/sh\n{body}"),
    )
    .expect("rewrite deploy.sh");
}

fn run(test: &Test, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    let mut command = pinned_command(test.root(), args);
    command
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("HUB_CRYPTO_PASSWORD")
        .envs(env.iter().copied())
        .write_stdin(stdin.as_bytes().to_vec());
    Output::of(command.output().expect("run hub"), test.root())
}

#[test]
fn secrets_are_in_nothing_printed_and_no_file_but_the_private_state() {
    let failed: Vec<String> = ROWS.iter().filter_map(|row| scenario(row).err()).collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// One row: what went wrong, if anything.
fn scenario(row: &Row) -> Result<(), String> {
    let test = (row.setup)();
    let out = run(&test, row.args, row.env, row.stdin);
    let printed = format!("{}{}", out.stdout, out.stderr);
    if out.status != row.code {
        return Err(format!(
            "{}: exit code {} instead of {}\n{printed}",
            row.name, out.status, row.code
        ));
    }
    if !printed.contains(row.message) {
        return Err(format!(
            "{}: expected `{}` in\n{printed}",
            row.name, row.message
        ));
    }
    nowhere_else(
        row.name,
        test.root(),
        &[&out.stdout, &out.stderr],
        row.secret,
        row.holders,
    )?;
    for kept in row.kept_in {
        let text = std::fs::read_to_string(test.root().join(kept)).unwrap_or_default();
        if !text.contains(row.secret) {
            return Err(format!("{}: `{kept}` lost the value", row.name));
        }
    }
    Ok(())
}

/// Fails when `secret` is in what hub printed, in a file below `root`
/// other than `holders` and the test's [`INPUTS`], or in a holder that
/// others than its owner may read.
fn nowhere_else(
    scenario: &str,
    root: &Path,
    printed: &[&str],
    secret: &str,
    holders: &[&str],
) -> Result<(), String> {
    let holder = |path: &Path| holders.iter().any(|h| root.join(h) == path);
    for (path, seen) in tree(root).iter().filter(|(path, _)| holder(path)) {
        if String::from_utf8_lossy(&seen.bytes).contains(secret) && seen.mode & 0o077 != 0 {
            return Err(format!(
                "{scenario}: {} holds the secret with mode {:o}",
                path.display(),
                seen.mode
            ));
        }
    }
    let others = tempfile::tempdir().expect("temporary folder");
    let input = |path: &Path| INPUTS.iter().any(|i| root.join(i) == path);
    let written = tree(root)
        .into_iter()
        .filter(|(path, _)| !holder(path) && !input(path));
    for (path, seen) in written {
        let relative = path.strip_prefix(root).expect("below the root");
        let copy = others.path().join(relative);
        std::fs::create_dir_all(copy.parent().expect("parent")).expect("mkdir");
        std::fs::write(copy, seen.bytes).expect("copy");
    }
    let written = everything_written(others.path(), printed);
    let Some(at) = written.find(secret) else {
        return Ok(());
    };
    let start = written[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = written[at..].find('\n').map_or(written.len(), |i| at + i);
    Err(format!(
        "{scenario}: the secret is in clear: `{}`\nfiles: {:?}",
        &written[start..end],
        tree(root).keys().collect::<Vec<_>>()
    ))
}

/// `-e DB_PASS=…` and the store's secret key, in a run whose lock object
/// stays in the bucket because hub was killed (`kill -9`) mid-run: the
/// lock records the command with the value masked, and neither value is
/// in what the run printed, even with `--debug`.
#[test]
fn a_lock_object_left_by_a_killed_run_holds_no_secret() {
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let bucket = server.bucket("secrets");
    let location = format!("s3://{bucket}/hub.state");
    let test = stack("echo \"key: $AWS_SECRET_ACCESS_KEY\"\nsleep 1\nkill -9 $PPID\nsleep 5\n");
    let password = "Zebra-Staple-42";
    let mut command = pinned_command(
        test.root(),
        &[
            "deploy",
            "hub.yaml",
            "-s",
            &location,
            "-e",
            &format!("DB_PASS={password}"),
            "--debug",
        ],
    );
    command
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env("HOME", test.root());
    for (name, value) in server.env() {
        command.env(name, value);
    }
    let out = Output::of(command.output().expect("run hub"), test.root());
    assert_eq!(
        out.status, -1,
        "hub was killed\n{}\n{}",
        out.stdout, out.stderr
    );
    let lock = server
        .get(&bucket, "hub.state.lock")
        .expect("the killed run's lock stays");
    assert!(lock.contains("DB_PASS=(masked)"), "{lock}");
    assert!(out.stdout.contains("key: (masked)"), "{}", out.stdout);
    let state = server
        .get(&bucket, "hub.state")
        .expect("the state of the started run");
    assert!(
        state.contains("secrets"),
        "the state names its stack: {state}"
    );
    assert!(
        state.contains("DB_PASS=(masked)"),
        "the state's operation records the command masked: {state}"
    );
    for secret in [password, &server.secret_key] {
        let found = nowhere_else(
            "a lock left by a killed run",
            test.root(),
            &[&out.stdout, &out.stderr, &lock],
            secret,
            &[],
        );
        assert_eq!(found, Ok(()));
    }
}
