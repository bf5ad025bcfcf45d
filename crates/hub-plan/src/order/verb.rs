//! Deploy or undeploy: the verb of a run, which the ordering and the
//! scheduler both read.

/// The two lifecycle verbs a run performs; deploy unless a run says
/// otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verb {
    #[default]
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
