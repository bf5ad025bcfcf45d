//! `hub version` and `hub completions`: about hub itself.

use hub_workflow::write_stdout;
use hub_workflow::Error;

/// `hub version`: the same line as `hub --version`.
pub fn version() -> Result<(), Error> {
    write_stdout(format!("hub {}\n", crate::cli::VERSION).as_bytes())
}

/// `hub completions SHELL`: a completion script on stdout.
pub fn completions(args: crate::cli::CompletionsArgs) -> Result<(), Error> {
    use clap::CommandFactory;
    let mut command = crate::cli::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "hub", &mut script);
    write_stdout(&script)
}
