//! Stack parameters whose value in this run differs from the one the state
//! recorded: found while merging the state in ([`super::state::StateView::merge_into`]),
//! reported by the command, which knows whether the state keeps the old
//! value (undeploy) or is about to record the new one (deploy).

use super::format::substitution_text;
use super::Origin;
use hub_manifest::diag::{Location, Warnings};
use yaml_serde::Value;

/// One change of a stack parameter, seen under its plain name, under
/// `name|component` qualified names, or under both (elaborate copies a
/// stack value into the qualified `kind: user` parameters of components).
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    pub name: String,
    /// The qualifiers it shows under; `""` for the plain name.
    pub components: Vec<String>,
    pub recorded: Option<Value>,
    pub current: Option<Value>,
    /// Where the current value came from.
    pub origin: Origin,
    pub declared: Option<Location>,
    pub secret: bool,
}

/// What the run does with the state's stack parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftUse {
    /// Reads them only (`hub params`, `hub invoke`).
    Read,
    /// Replaces them with this run's (deploy).
    Record,
    /// Keeps them as deployed (undeploy).
    Keep,
    /// `hub plan` of a deploy: would replace them; nothing is recorded.
    WouldRecord,
    /// `hub plan` of an undeploy: would keep them.
    WouldKeep,
}

impl DriftUse {
    /// What a run of `verb_deploys` (else an undeploy) does with them; a
    /// plan only says what the run would do.
    pub fn of_run(verb_deploys: bool, planning: bool) -> Self {
        match (verb_deploys, planning) {
            (true, false) => DriftUse::Record,
            (false, false) => DriftUse::Keep,
            (true, true) => DriftUse::WouldRecord,
            (false, true) => DriftUse::WouldKeep,
        }
    }
}

impl Drift {
    /// Adds the change of `component`'s qualified parameter to this one
    /// when it is the same change of the same name.
    pub fn absorb(&mut self, other: &Drift) -> bool {
        let same = self.name == other.name
            && self.recorded == other.recorded
            && self.current == other.current;
        if same {
            for component in &other.components {
                if !self.components.contains(component) {
                    self.components.push(component.clone());
                }
            }
            self.secret |= other.secret;
            if self.declared.is_none() {
                self.declared.clone_from(&other.declared);
            }
        }
        same
    }

    /// Seen under the plain name.
    pub fn is_plain(&self) -> bool {
        self.components.iter().any(String::is_empty)
    }

    /// `` `dns.domain` ``, `` `db.size|db` `` or
    /// `` `db.size` (also for component `db`) ``.
    fn subject(&self) -> String {
        let qualifiers: Vec<String> = self
            .components
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| format!("`{c}`"))
            .collect();
        match (self.is_plain(), qualifiers.len()) {
            (_, 0) => format!("`{}`", self.name),
            (false, 1) => format!("`{}|{}`", self.name, self.components[0]),
            (plain, _) => format!(
                "`{}` ({}for component{} {})",
                self.name,
                if plain { "also " } else { "" },
                if qualifiers.len() == 1 { "" } else { "s" },
                qualifiers.join(", ")
            ),
        }
    }

    fn shown(&self, value: &Option<Value>) -> String {
        if self.secret {
            "(masked)".to_string()
        } else {
            substitution_text(value.as_ref())
        }
    }

    /// The warning: the parameter, the recorded and the current value,
    /// where the current one came from, and what the run does with them.
    pub fn message(&self, usage: DriftUse) -> String {
        let (recorded, current) = (self.shown(&self.recorded), self.shown(&self.current));
        let head = format!(
            "stack parameter {} is `{current}` {} but the state holds `{recorded}`",
            self.subject(),
            origin_text(&self.origin, self.declared.as_ref())
        );
        match usage {
            DriftUse::Read => format!("{head}; using `{current}`"),
            DriftUse::Record => {
                format!("{head}; deploying with `{current}`, which the state records from now on")
            }
            DriftUse::Keep => format!(
                "{head}, the value it was deployed with; undeploying with `{current}` and keeping `{recorded}` in the state"
            ),
            DriftUse::WouldRecord => format!(
                "{head}; would deploy with `{current}`, which the state would record from then on"
            ),
            DriftUse::WouldKeep => format!(
                "{head}, the value it was deployed with; would undeploy with `{current}` and keep `{recorded}` in the state"
            ),
        }
    }
}

/// "(from `X` in the environment)", "(set at params.yaml:3)", …
pub fn origin_text(origin: &Origin, declared: Option<&Location>) -> String {
    let at = declared.map(|l| format!(" at {l}")).unwrap_or_default();
    match origin {
        Origin::FromEnv {
            variable,
            overridden: true,
        } => format!("(from `-e {variable}`)"),
        Origin::FromEnv { variable, .. } => format!("(from `{variable}` in the environment)"),
        Origin::FromFile { path } => format!("(from the file `{path}`)"),
        Origin::Prompt => "(typed at the prompt)".to_string(),
        Origin::Default => format!("(its `default`{at})"),
        Origin::Value => format!("(its `value`{at})"),
        other => format!("({other}{at})"),
    }
}

/// Adds `drift` to `list`, merged with the same change under another
/// qualifier.
pub fn push(list: &mut Vec<Drift>, drift: Drift) {
    if !list.iter_mut().any(|known| known.absorb(&drift)) {
        list.push(drift);
    }
}

/// One warning per changed parameter, except those `skip` leaves to
/// another message.
pub fn warn(
    list: &[Drift],
    usage: DriftUse,
    at: Option<Location>,
    skip: &dyn Fn(&Drift) -> bool,
    warnings: &mut Warnings,
) {
    for drift in list.iter().filter(|d| !skip(d)) {
        warnings.warn(at.clone(), drift.message(usage));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drift(component: &str, recorded: &str, current: &str) -> Drift {
        Drift {
            name: "x.value".into(),
            components: vec![component.into()],
            recorded: Some(Value::String(recorded.into())),
            current: Some(Value::String(current.into())),
            origin: Origin::FromEnv {
                variable: "X".into(),
                overridden: false,
            },
            declared: None,
            secret: false,
        }
    }

    #[test]
    fn the_same_change_under_both_names_is_one() {
        let mut list = Vec::new();
        push(&mut list, drift("", "a", "b"));
        push(&mut list, drift("c", "a", "b"));
        push(&mut list, drift("d", "a", "other"));
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0].message(DriftUse::Read),
            "stack parameter `x.value` (also for component `c`) is `b` (from `X` in the environment) but the state holds `a`; using `b`"
        );
        assert_eq!(
            list[1].message(DriftUse::Record),
            "stack parameter `x.value|d` is `other` (from `X` in the environment) but the state holds `a`; deploying with `other`, which the state records from now on"
        );
    }

    #[test]
    fn secrets_are_masked() {
        let mut secret = drift("", "old", "new");
        secret.secret = true;
        let text = secret.message(DriftUse::Keep);
        assert!(!text.contains("`old`") && !text.contains("`new`"), "{text}");
        assert!(text.contains("undeploying with `(masked)`"), "{text}");
    }
}
