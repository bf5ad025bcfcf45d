//! The requirements of a component as its turn comes: each with the
//! components (or the environment, the platform, the state) providing it.

use super::{Action, Walk};
use crate::order::requirements::PLATFORM_PROVIDER;
use crate::plan::Requirement;
use hub_state::ENVIRONMENT_PROVIDER;
use indexmap::IndexMap;

impl Walk<'_> {
    /// Each requirement with its providers as the component's turn comes.
    pub(super) fn requirements(
        &self,
        requires: &[String],
        provides: &IndexMap<String, Vec<String>>,
    ) -> Vec<Requirement> {
        requires
            .iter()
            .map(|name| Requirement {
                name: name.clone(),
                providers: provides
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|provider| self.provider_label(provider))
                    .collect(),
            })
            .collect()
    }

    fn provider_label(&self, provider: &str) -> String {
        match provider {
            ENVIRONMENT_PROVIDER => "environment".to_string(),
            PLATFORM_PROVIDER => "platform".to_string(),
            name if self
                .taken
                .actions
                .get(name)
                .is_some_and(|a| a.runs() || *a == Action::NoOp) =>
            {
                name.to_string()
            }
            name => format!("{name} (state)"),
        }
    }
}
