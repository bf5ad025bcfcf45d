//! `hub cel` and `hub params`: one expression evaluated, the locked
//! parameters printed.

use super::common::parse_overrides;
use super::output::write_stdout;
use crate::error::Error;
use crate::request::{CelArgs, ParamsArgs};
use hub_manifest::diag::Warnings;

/// `hub cel`: evaluates and prints one expression (or, with -y, a value).
pub fn cel(args: CelArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_params::{evaluate_cel, evaluate_template, parse_bindings, ParamsError};
    let bindings = parse_bindings(&args.bindings)?;
    if args.yaml_short {
        warnings.warn(
            None,
            "`hub cel -y` is deprecated: write `hub cel --yaml` (`-y` means `--yes` everywhere else)",
        );
    }
    let text = if args.yaml || args.yaml_short {
        let (text, read_as_cel) =
            evaluate_template(&args.expression, &bindings).map_err(ParamsError::from)?;
        for source in read_as_cel {
            warnings.warn(
                None,
                format!("`${{{source}}}` is not a CEL substitution; evaluated as CEL"),
            );
        }
        text
    } else {
        evaluate_cel(&args.expression, &bindings).map_err(ParamsError::from)?
    };
    write_stdout(format!("{text}\n").as_bytes())
}

/// `hub params`: prints locked stack parameters or one component's.
pub fn params(args: ParamsArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use super::params_report::{params_report, ReportOptions};
    use hub_params::{interactive, Prompter, TerminalPrompter};
    let overrides = parse_overrides(&args.environment)?;
    let environment = |name: &str| std::env::var(name).ok();
    let mut terminal = TerminalPrompter;
    let prompter: Option<&mut dyn Prompter> = if interactive() {
        Some(&mut terminal)
    } else {
        None
    };
    let options = ReportOptions {
        elaborated: &args.elaborated,
        state: args.state.as_deref(),
        overrides: &overrides,
        environment: &environment,
        prompter,
        component: args.component.as_deref(),
        json: args.format == crate::request::ParamsFormat::Json,
        redactor: hub_manifest::redact::Redactor::new(args.reveal),
    };
    let text = params_report(options, warnings)?;
    write_stdout(text.as_bytes())
}
