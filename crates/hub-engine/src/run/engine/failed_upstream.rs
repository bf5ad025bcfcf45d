//! Issue 26, item 4: the outputs of a failed run are never used. A
//! component that reads an output of one that failed in this run, without
//! listing it in `depends`, sees the outputs of its last successful deploy
//! when the run has them (a selection with `-c` loads them from the state),
//! and the log says so; otherwise its parameters cannot be expanded, and its
//! failure names the failed upstream and the output it reads.

use super::Run;
use hub_params::Problem;
use hub_params::{self as params, ExpandedParam};
use hub_plan::Verb;

impl<'a> Run<'a> {
    /// `parameter `endpoint` reads `db`'s output `endpoint`, and `db` failed
    /// in this run (…)`, when `error` comes of such a read.
    pub(super) fn failed_upstream(&self, error: &params::ParamsError) -> Option<String> {
        let params::ParamsError::Component { problems, .. } = error else {
            return None;
        };
        problems.iter().find_map(|problem| {
            let (param, names): (&str, Vec<&str>) = match problem {
                Problem::Underivable { param, .. } => (param, vec![param.as_str()]),
                Problem::Unknown { param, names, .. } => {
                    (param, names.iter().map(String::as_str).collect())
                }
                _ => return None,
            };
            names.into_iter().find_map(|read| {
                let (producer, output) = self.failed_producer(read)?;
                let param = param.split_once('|').map_or(param, |(name, _)| name);
                Some(format!(
                    "parameter `{param}` reads `{producer}`'s output `{output}`, and `{producer}` failed in this run (the outputs of a failed run are not used, and this run has none of an earlier deploy)"
                ))
            })
        })
    }

    /// The component that failed in this run and declares `read` (`host`
    /// or `db:host`) among its outputs, and the output's name.
    fn failed_producer(&self, read: &str) -> Option<(String, String)> {
        // `endpoint|app`: the parameter `endpoint` of `app`.
        let read = read.split_once('|').map_or(read, |(name, _)| name);
        let (wanted, output) = match read.split_once(':') {
            Some((component, output)) => (Some(component), output),
            None => (None, read),
        };
        self.tally
            .failed
            .iter()
            .filter(|f| wanted.is_none_or(|w| w == f.as_str()))
            .find(|f| {
                self.stack
                    .elaborated
                    .component(f)
                    .is_some_and(|m| m.outputs.iter().any(|o| o.name == output))
            })
            .map(|f| (f.clone(), output.to_string()))
    }

    /// Logs each output of a component that failed in this run which
    /// `name`'s parameters found: its value is that of the component's
    /// last successful deploy (the state read at the start recorded the
    /// component `deployed`).
    pub(super) fn note_last_successful_reads(&self, name: &str, params: &[ExpandedParam]) {
        if self.verb != Verb::Deploy || self.tally.failed.is_empty() {
            return;
        }
        for param in params {
            let params::Origin::Found { key } = &param.origin else {
                continue;
            };
            // `db:endpoint`, or `endpoint` (outputs are found by either).
            let Some((producer, output)) = self.failed_producer(key) else {
                continue;
            };
            let succeeded_before = self.setup.deployed_before.contains(&producer);
            if succeeded_before {
                (self.host.log)(&format!(
                    "hub: {name} reads {producer}'s {output} from {producer}'s last successful deploy ({producer} failed in this run)"
                ));
            }
        }
    }
}
