//! What a run gets from the process it runs in ([`Host`]). What a run is
//! asked to do is the planning crate's `hub_plan::options::RunOptions`.

use crate::child::interrupt::Interrupts;
use hub_params::Prompter;
use hub_plan::outcome::lines::LineSink;
use hub_plan::outcome::Progress;
use std::path::PathBuf;

/// What the run gets from the process it runs in.
pub struct Host<'a> {
    /// Hub's environment.
    pub environment: Vec<(String, String)>,
    /// The hub executable (`$HUB` for components).
    pub hub: PathBuf,
    pub sink: &'a dyn LineSink,
    pub interrupts: &'a Interrupts,
    /// Hub's own progress lines.
    pub log: &'a dyn Fn(&str),
    /// Asks for missing `kind: user` parameters; `None` without a terminal.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// Hears when components start and end; `None`: plain lines through
    /// `log` (in a parallel run).
    pub progress: Option<&'a dyn Progress>,
    /// `deploy --plan`/`--change`: the policies a component planned again
    /// during the run is checked by; `None` checks none, and refuses
    /// what `--replan` would accept.
    pub replan_policies: Option<&'a dyn hub_plan::plan::replan::ReplanPolicies>,
}

impl Host<'_> {
    /// A variable of hub's environment.
    pub fn var(&self, name: &str) -> Option<String> {
        self.environment
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}
