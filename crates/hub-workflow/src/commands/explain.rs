//! `hub explain`: what a state records, in the format asked for.

use super::common::{deprecated, split_list};
use super::output::write_stdout;
use crate::error::Error;
use hub_manifest::diag::Warnings;
use std::io::IsTerminal;
use std::path::PathBuf;

/// `hub explain [-m ELABORATED] -s STATE`: what the state records, in the
/// format asked for.
pub fn explain(args: crate::request::ExplainArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::explain::render::{self, Style};
    let (elaborated, states) = match args.files.as_slice() {
        [] => (args.elaborate, &args.state),
        [states] => {
            let new = format!("hub explain -s {states}");
            deprecated(warnings, &format!("hub explain {states}"), &new);
            (None, states)
        }
        [elaborated, states] => {
            let old = format!("hub explain {elaborated} {states}");
            let new = format!("hub explain -m {elaborated} -s {states}");
            deprecated(warnings, &old, &new);
            (Some(PathBuf::from(elaborated)), states)
        }
        _ => unreachable!("clap takes at most two files"),
    };
    let request = crate::explain::Request {
        elaborated,
        states: split_list(std::slice::from_ref(states))
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        component: args.component,
        global: args.global,
        raw_outputs: args.raw_outputs,
        reveal: args.reveal,
    };
    let explained = crate::explain::explain(&request, warnings)?;
    let style = Style::detect(
        std::io::stdout().is_terminal(),
        std::env::var("NO_COLOR").ok().as_deref(),
    );
    let text = if args.op_log {
        render::operations(&explained, style)
    } else if args.json {
        render::json(&explained)
    } else if args.yaml {
        render::yaml(&explained)?
    } else if args.kv {
        render::kv(&explained)
    } else if args.sh {
        let (text, clashes) = render::sh(&explained);
        for name in clashes {
            warnings.warn(
                None,
                format!("two keys both make the shell variable `{name}`: the first is printed"),
            );
        }
        text
    } else {
        render::text(&explained, style)
    };
    write_stdout(text.as_bytes())
}
