//! Deploy or undeploy: the verb of a run, which the ordering and the
//! scheduler both read.

/// The two lifecycle verbs a run performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Deploy,
    Undeploy,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Deploy => "deploy",
            Verb::Undeploy => "undeploy",
        }
    }
}
