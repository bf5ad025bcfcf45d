//! The flags of `hub util ...`.

use super::run::parse_seconds;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
`util` holds one command for users, `otp`: component scripts call it as `$HUB util otp` \
(the Hub CLI's spelling), so it stays where it is.")]
pub struct UtilArgs {
    #[command(subcommand)]
    pub command: UtilCommand,
}

#[derive(Debug, Subcommand)]
pub enum UtilCommand {
    /// Run one program the way `hub deploy` runs a component
    #[command(
        hide = true,
        after_help = "\
Runs PROGRAM in its own process group with stdin on /dev/null. Each line it writes to \
stdout or stderr is shown on hub's stdout or stderr as `LABEL | line`, with every secret \
value replaced by `(masked)`; with --log the masked lines are appended to FILE too. Secret \
values are those of --mask-env variables, the lines of stdin with --mask-stdin, --mask \
values, and the credentials hub knows (AWS_SECRET_ACCESS_KEY, HUB_CRYPTO_PASSWORD, ...). \
Values shorter than 4 characters are not masked. A --mask value is in hub's command line, \
which other users of the machine can read (/proc/PID/cmdline): prefer --mask-env.

The first SIGINT or SIGTERM hub receives is passed on to the program's process group; \
the group is killed when it is still running --grace seconds later, or at once on a \
second signal.

Exit status: the program's, 128 + N when it was killed by signal N, 130 or 143 when hub was \
interrupted by SIGINT or SIGTERM, 124 after --timeout, 126/127 when it cannot be started.

Example:
  hub util run --label app --mask-env DB_PASSWORD --log app.log -- ./deploy.sh"
    )]
    Run(UtilRunArgs),
    /// Encrypt secret outputs with the one-time pad in $HUB_RANDOM
    #[command(after_help = "\
Reads `key = value` lines on stdin and prints one line `secrets = <base64>`: the input, \
zero-padded to the pad's length, XORed with the pad that `hub deploy` exports to the \
component as HUB_RANDOM. Hub decodes it after the run and stores each key as a raw output, \
so the values never appear in logs. Print it inside the `Outputs:` block, once per run.

Blank input prints nothing. Input longer than the pad is an error: raise \
`lifecycle.options.random.bytes` in the component manifest (default 128).

Example (in a component's deploy script):
  echo; echo Outputs:; printf 'password = %s\\n' \"$PW\" | \"$HUB\" util otp; echo")]
    Otp(UtilOtpArgs),
}

#[derive(Debug, Args)]
pub struct UtilOtpArgs {
    /// The only mode: encode (the default)
    #[arg(value_name = "MODE", value_parser = ["encode"])]
    pub mode: Option<String>,
}

#[derive(Debug, Args)]
pub struct UtilRunArgs {
    /// Shown before every line (default: the program's file name)
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Seconds between the passed-on signal and the kill
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_seconds)]
    pub grace: std::time::Duration,
    /// Stop the program after this many seconds (SIGTERM, then SIGKILL after --grace)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
    /// Append the masked output lines to this file
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Mask the value of this variable of hub's environment (repeatable)
    #[arg(long, value_name = "NAME")]
    pub mask_env: Vec<String>,
    /// Mask each line read from stdin (the program's stdin is /dev/null)
    #[arg(long)]
    pub mask_stdin: bool,
    /// A secret value to mask; visible to other users in the command line: prefer --mask-env
    #[arg(long, value_name = "VALUE")]
    pub mask: Vec<String>,
    /// Start the program with an empty environment instead of hub's
    #[arg(long)]
    pub clear_env: bool,
    /// Set a variable for the program (repeatable)
    #[arg(
        short = 'e',
        long = "environment",
        alias = "env",
        value_name = "NAME=VALUE"
    )]
    pub env: Vec<String>,
    /// Working directory of the program (default: the current one)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The program and its arguments
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}
