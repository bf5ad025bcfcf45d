use clap::Parser;
use hub::cli::{Cli, Command};
use hub::diag::Warnings;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut warnings = Warnings::default();
    let result = match cli.command {
        Command::Elaborate(args) => hub::commands::elaborate(args, &mut warnings),
        Command::Validate(args) => hub::commands::validate(args, &mut warnings),
    };
    for warning in warnings.iter() {
        eprintln!("warning: {warning}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", hub::commands::render_error(&error));
            ExitCode::from(error.exit_code() as u8)
        }
    }
}
