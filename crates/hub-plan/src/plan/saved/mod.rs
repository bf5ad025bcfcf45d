//! Saved plans: `hub plan … --out PLAN` writes what the plan decided,
//! and `hub deploy --plan PLAN` applies exactly that, after checking that
//! nothing it relied on moved ([`stale`]).
//!
//! A plan file is JSON ([`SavedPlan`]): the stack it was made for (the
//! files as given and a digest of the elaborated stack), the state (its
//! locations, lineage and serial as read), the arguments that decide what
//! runs, and each component in order with its action, the reasons, the
//! digest of its folder and its expanded parameters; with `--prune`, then
//! each removed component it deletes, with the folder the state records,
//! its digest and the parameters its undeploy gets. A value that is
//! masked in hub's output (a secret) is kept only as `sha256:…` of its
//! text, never in clear.
//!
//! The format's JSON Schema is committed as `schemas/plan.schema.json`; a
//! unit test fails when it is out of date (regenerate with
//! `UPDATE_SCHEMAS=1 cargo test --lib schema`).

mod entry;
pub mod format;
mod inputs;
pub mod stale;

pub use entry::{entry_digest, entry_digests};
pub use format::{
    PlanAction, PlannedArguments, PlannedComponent, PlannedFile, PlannedParameter, PlannedStack,
    PlannedState, SavedPlan,
};
pub use inputs::{bytes_digest, ABSENT};

use super::{
    Action, ComponentPlan as ComponentPreview, ParameterPlan as ParameterPreview, Plan as Preview,
    RemovedPlan as RemovedPreview,
};
use crate::decide::fingerprint;
use crate::options::RunOptions;
use crate::source::stack::Stack;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The version of the plan format written by this hub: 2 records the
/// commit and the files the plan read, and the policy files; 3 tells a
/// `rerun` (deployed again, nothing undeployed) from a `replace`
/// (undeployed, then deployed).
pub(crate) const PLAN_VERSION: u32 = 3;

/// The oldest version this hub still applies: a version 2 plan reads as
/// version 3 unless one of its components is `replace`, which in version 2
/// also meant a rerun ([`SavedPlanError::Ambiguous`]).
pub(crate) const OLDEST_APPLIED: u32 = 2;

/// The file name of the format's schema in `schemas/`.
pub const SCHEMA_FILE: &str = "plan.schema.json";

/// The one place where a preview's decision becomes a saved plan's action:
/// the same names; `None` for a component that would fail, which no plan
/// can promise.
pub(crate) fn planned_action(component: &ComponentPreview) -> Option<PlanAction> {
    Some(match component.action {
        Action::Fail => return None,
        Action::Create => PlanAction::Create,
        Action::Update => PlanAction::Update,
        Action::NoOp => PlanAction::NoOp,
        Action::Replace => PlanAction::Replace,
        Action::Rerun => PlanAction::Rerun,
        Action::Delete => PlanAction::Delete,
        Action::Skip => PlanAction::Skip,
    })
}

/// What a plan is made of besides the preview.
pub struct Made<'a> {
    /// MANIFEST as given.
    pub files: &'a [PathBuf],
    /// `--clouds` as given.
    pub clouds: &'a [String],
    /// Now (`HUB_NOW` pins it).
    pub created: String,
    /// The commit the stack is at (see [`PlannedStack::commit`]).
    pub commit: Option<String>,
    /// `--policy` as given.
    pub policies: &'a [PathBuf],
    /// `--change`.
    pub change: Option<String>,
}

impl SavedPlan {
    /// The plan of `preview`, made of `stack` with `options`.
    pub fn new(
        preview: &Preview,
        stack: &Stack,
        options: &RunOptions,
        made: &Made<'_>,
    ) -> Result<SavedPlan, SavedPlanError> {
        let failing: Vec<&ComponentPreview> = preview
            .components
            .iter()
            .filter(|c| c.action == Action::Fail)
            .collect();
        if !failing.is_empty() {
            return Err(SavedPlanError::WouldFail {
                components: failing.iter().map(|c| c.name.clone()).collect(),
                reasons: failing.iter().map(|c| c.reasons.join("; ")).collect(),
            });
        }
        let entries = preview.state.as_ref().and_then(|s| s.entries.as_ref());
        let entry = |name: &str| {
            entries.map(|e| e.get(name).cloned().unwrap_or_else(|| ABSENT.to_string()))
        };
        let components: Vec<PlannedComponent> = preview
            .components
            .iter()
            .filter_map(|c| planned_component(c, stack, options))
            .chain(preview.pruned().map(|r| planned_delete(r, options)))
            .map(|c| PlannedComponent {
                entry: entry(&c.name),
                ..c
            })
            .collect();
        let read: Vec<(String, PathBuf)> = components
            .iter()
            .filter(|c| c.action != PlanAction::Skip && c.action != PlanAction::Delete)
            .filter_map(|c| Some((c.name.clone(), component_dir(stack, &c.name, options)?)))
            .collect();
        Ok(SavedPlan {
            version: PLAN_VERSION,
            created: made.created.clone(),
            stack: PlannedStack {
                name: preview.stack.clone(),
                files: made.files.iter().map(|f| f.display().to_string()).collect(),
                digest: stack_digest(stack),
                commit: made.commit.clone(),
                inputs: inputs::inputs(stack, &read, options.digest_cache.as_deref())
                    .into_iter()
                    .map(|(path, digest)| PlannedFile { path, digest })
                    .collect(),
            },
            state: PlannedState {
                locations: options
                    .state
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                read: preview.state.as_ref().map(|s| s.path.clone()),
                lineage: preview.state.as_ref().and_then(|s| s.lineage.clone()),
                serial: preview.state.as_ref().and_then(|s| s.serial),
            },
            arguments: arguments(preview, options, made.clouds),
            components,
            policies: made.policies.iter().map(|p| policy_file(p)).collect(),
            change: made.change.clone(),
        })
    }

    /// The components whose deploy runs.
    pub fn runs(&self) -> impl Iterator<Item = &PlannedComponent> {
        self.components.iter().filter(|c| c.action.runs())
    }
}

fn arguments(preview: &Preview, options: &RunOptions, clouds: &[String]) -> PlannedArguments {
    let selection = &options.selection;
    PlannedArguments {
        components: selection.replayed(),
        selected: preview.components.iter().map(|c| c.name.clone()).collect(),
        with_deps: selection.with_deps,
        with_dependents: selection.with_dependents,
        offset: selection.offset.clone(),
        limit: selection.limit.clone(),
        changed: options.scope.changed,
        replace: options.scope.replace.clone(),
        force: options.force,
        prune: options.scope.prune,
        base_dir: options
            .components_base_dir
            .as_ref()
            .map(|d| d.display().to_string()),
        clouds: clouds.to_vec(),
        jobs: options.concurrency,
        plan_steps: options.plan_steps,
    }
}

fn planned_component(
    component: &ComponentPreview,
    stack: &Stack,
    options: &RunOptions,
) -> Option<PlannedComponent> {
    let action = planned_action(component)?;
    let reasons = component.reasons.clone();
    let skipped = action == PlanAction::Skip;
    Some(PlannedComponent {
        name: component.name.clone(),
        action,
        reasons,
        folder: (!skipped)
            .then(|| folder_digest(stack, &component.name, options))
            .flatten(),
        parameters: planned_parameters(&component.parameters),
        dir: None,
        reads: component.through.reads.clone(),
        entry: None,
    })
}

/// A removed component that `--prune` undeploys.
fn planned_delete(removed: &RemovedPreview, options: &RunOptions) -> PlannedComponent {
    PlannedComponent {
        name: removed.name.clone(),
        action: PlanAction::Delete,
        reasons: removed.reasons.clone(),
        folder: removed
            .dir
            .as_deref()
            .map(Path::new)
            .filter(|dir| dir.is_dir())
            .and_then(|dir| {
                fingerprint::folder_digest_with(dir, options.digest_cache.as_deref()).ok()
            }),
        parameters: planned_parameters(&removed.parameters),
        dir: removed.dir.clone(),
        reads: Vec::new(),
        entry: None,
    }
}

/// The parameters as a plan keeps them: a masked value as its digest.
fn planned_parameters(parameters: &[ParameterPreview]) -> Vec<PlannedParameter> {
    parameters
        .iter()
        .filter_map(|p| {
            let value = p.digest.clone().or_else(|| p.value.clone())?;
            Some(PlannedParameter {
                name: p.name.clone(),
                value,
                secret: p.digest.is_some(),
            })
        })
        .collect()
}

/// The digest `--changed` compares, of the component's folder; `None`
/// when it cannot be read (the deploy says why).
fn folder_digest(stack: &Stack, name: &str, options: &RunOptions) -> Option<String> {
    let dir = component_dir(stack, name, options)?;
    fingerprint::folder_digest_with(&dir, options.digest_cache.as_deref()).ok()
}

fn component_dir(stack: &Stack, name: &str, options: &RunOptions) -> Option<PathBuf> {
    let reference = stack.reference(name)?;
    stack
        .component_dir(reference, options.components_base_dir.as_deref())
        .ok()
}

/// A `--policy` file as given, and the digest of its bytes.
fn policy_file(path: &Path) -> PlannedFile {
    PlannedFile {
        path: path.display().to_string(),
        digest: std::fs::read(path).map_or_else(|_| ABSENT.to_string(), |b| bytes_digest(&b)),
    }
}

/// `sha256:…` of the elaborated stack's documents, as read.
fn stack_digest(stack: &Stack) -> String {
    let documents = (&stack.elaborated.stack, &stack.elaborated.components);
    text_digest(&serde_json::to_string(&documents).unwrap_or_default())
}

pub use super::text_digest;

/// `` `a` would fail: why; `b` would fail: why ``.
fn would_fail(components: &[String], reasons: &[String]) -> String {
    let each: Vec<String> = components
        .iter()
        .zip(reasons)
        .map(|(name, why)| match why.is_empty() {
            true => format!("`{name}` would fail"),
            false => format!("`{name}` would fail: {why}"),
        })
        .collect();
    each.join("; ")
}

/// A saved plan that cannot be written, read or applied.
#[derive(Debug, thiserror::Error)]
pub enum SavedPlanError {
    #[error("the plan is not saved: {}", would_fail(components, reasons))]
    WouldFail {
        components: Vec<String>,
        /// Why each would fail, in the order of `components`.
        reasons: Vec<String>,
    },
    #[error("cannot write the plan `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the plan `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the plan `{}` is damaged: {message}", path.display())]
    Damaged { path: PathBuf, message: String },
    #[error(
        "the plan `{}` has format version {version}; this hub reads version {PLAN_VERSION}",
        path.display()
    )]
    Newer { path: PathBuf, version: u64 },
    #[error(
        "the plan `{}` has format version {version}, which records neither the commit nor the files it read; this hub applies version {PLAN_VERSION}",
        path.display()
    )]
    Older { path: PathBuf, version: u64 },
    #[error(
        "the plan `{}` has format version 2, in which `replace` (here for `{}`) meant either a rerun or an undeploy then a deploy; this hub tells them apart (`rerun`, `replace`) and does not guess",
        path.display(),
        components.join("`, `")
    )]
    Ambiguous {
        path: PathBuf,
        components: Vec<String>,
    },
    #[error("plan `{}` is stale: {}; run `hub plan` again", path.display(), reasons.join("; "))]
    Stale { path: PathBuf, reasons: Vec<String> },
}

impl SavedPlanError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            SavedPlanError::WouldFail { .. } => {
                "each failing component says why in the plan; fix that, then plan again".into()
            }
            SavedPlanError::Write { .. } => "check that the folder exists and is writable".into(),
            SavedPlanError::Read { .. } | SavedPlanError::Damaged { .. } => {
                "give a file written by `hub plan --out`, or make a new one".into()
            }
            SavedPlanError::Newer { .. } => {
                "apply it with the hub that made it, or plan again with this one".into()
            }
            SavedPlanError::Older { .. } | SavedPlanError::Ambiguous { .. } => {
                "make the plan again with this hub, review it, then apply it".into()
            }
            SavedPlanError::Stale { path, .. } => format!(
                "nothing was run and the state is untouched; review a new plan \
                 (`hub plan … --out {}`), then deploy it",
                path.display()
            ),
        })
    }
}

/// Writes the plan as pretty JSON ending in a newline, atomically,
/// readable by its owner only.
pub fn write(path: &Path, plan: &SavedPlan) -> Result<(), SavedPlanError> {
    let mut text = serde_json::to_string_pretty(plan).unwrap_or_default();
    text.push('\n');
    hub_manifest::write_private_output(path, text.as_bytes()).map_err(|source| {
        SavedPlanError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Reads a plan file: a newer format version is refused before the rest
/// is looked at.
pub fn read(path: &Path) -> Result<SavedPlan, SavedPlanError> {
    let damaged = |message: String| SavedPlanError::Damaged {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|source| SavedPlanError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| damaged(format!("not JSON ({e})")))?;
    from_value(path, value)
}

/// A plan as JSON (a file's, or the one the change registry keeps), named
/// by `path` in messages: a newer or an older format version is refused
/// before the rest is looked at.
pub fn from_value(path: &Path, value: Value) -> Result<SavedPlan, SavedPlanError> {
    let damaged = |message: String| SavedPlanError::Damaged {
        path: path.to_path_buf(),
        message,
    };
    let path = path.to_path_buf();
    match value.get("version").and_then(Value::as_u64) {
        None => return Err(damaged("it has no format `version`".into())),
        Some(version) if version > u64::from(PLAN_VERSION) => {
            return Err(SavedPlanError::Newer { path, version })
        }
        Some(version) if version < u64::from(OLDEST_APPLIED) => {
            return Err(SavedPlanError::Older { path, version })
        }
        Some(version) if version < u64::from(PLAN_VERSION) => {
            return upgraded(path, value);
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| damaged(e.to_string()))
}

/// A version 2 plan as version 3: the same but for `replace`, which it
/// used for a rerun too; one with a `replace` is refused.
fn upgraded(path: PathBuf, mut value: Value) -> Result<SavedPlan, SavedPlanError> {
    let components = value
        .get("components")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let replaced: Vec<String> = components
        .iter()
        .filter(|c| c.get("action").and_then(Value::as_str) == Some("replace"))
        .map(|c| {
            c.get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    if !replaced.is_empty() {
        return Err(SavedPlanError::Ambiguous {
            path,
            components: replaced,
        });
    }
    value["version"] = Value::from(PLAN_VERSION);
    serde_json::from_value(value).map_err(|e| SavedPlanError::Damaged {
        path,
        message: e.to_string(),
    })
}

/// The JSON Schema of [`SavedPlan`].
pub fn schema() -> Value {
    hub_manifest::schema::of_output::<SavedPlan>(
        SCHEMA_FILE,
        "Hub saved plan",
        "The plan `hub plan --out PLAN` writes and `hub deploy --plan PLAN` applies: \
         the stack and state it was made for, and each component with its action.",
    )
}

/// The schema as written to `schemas/`: pretty JSON ending in a newline.
pub fn schema_text() -> String {
    hub_manifest::schema::pretty(&schema())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ComponentPlan as ComponentPreview;

    #[test]
    fn each_decision_keeps_its_name_and_a_failure_is_not_saved() {
        for decision in Action::ALL {
            let component = ComponentPreview {
                name: "c".into(),
                action: decision,
                reasons: Vec::new(),
                requires: Vec::new(),
                waits_for: Vec::new(),
                needs_nothing: false,
                implementation: None,
                parameters: Vec::new(),
                unchanged_left_out: 0,
                timeout: None,
                retry: None,
                conditions: Vec::new(),
                certain_failure: None,
                execution: None,
                environment: Vec::new(),
                through: Default::default(),
            };
            let saved = planned_action(&component).map(PlanAction::as_str);
            let expected = (decision != Action::Fail).then(|| decision.as_str());
            assert_eq!(saved, expected, "{decision:?}");
        }
    }

    #[test]
    fn a_secret_is_kept_as_the_digest_of_its_text() {
        let digest = text_digest("hunter2");
        assert!(digest.starts_with("sha256:"));
        assert_eq!(digest.len(), "sha256:".len() + 64);
        assert!(!digest.contains("hunter2"));
        assert_ne!(digest, text_digest("hunter3"));
    }

    /// What `deploy --plan` checks again once it holds the state's lock.
    #[test]
    fn the_expected_state_is_the_one_read_under_the_lock() {
        use crate::options::ExpectedState;
        use hub_state::State;
        let state = |lineage: &str, serial| State {
            lineage: lineage.into(),
            serial,
            ..State::default()
        };
        let planned = ExpectedState {
            lineage: Some("l".into()),
            serial: Some(3),
        };
        assert!(planned.holds(Some(&state("l", 3))));
        assert!(!planned.holds(Some(&state("l", 4))));
        assert!(!planned.holds(Some(&state("m", 3))));
        assert!(!planned.holds(None));
        let first = ExpectedState::default();
        assert!(first.holds(None));
        assert!(!first.holds(Some(&state("l", 1))));
    }

    /// A file written before `prune` was recorded.
    #[test]
    fn a_plan_without_prune_in_its_arguments_was_made_without() {
        let plan = SavedPlan {
            version: PLAN_VERSION,
            created: "2026-01-01T00:00:00Z".into(),
            stack: PlannedStack {
                name: "s".into(),
                files: vec!["hub.yaml".into()],
                digest: text_digest(""),
                commit: None,
                inputs: Vec::new(),
            },
            state: PlannedState {
                locations: Vec::new(),
                read: None,
                lineage: None,
                serial: None,
            },
            arguments: PlannedArguments {
                prune: true,
                ..PlannedArguments::default()
            },
            components: Vec::new(),
            policies: Vec::new(),
            change: None,
        };
        let mut value = serde_json::to_value(&plan).expect("JSON");
        assert_eq!(value["arguments"]["prune"], true);
        value["arguments"]
            .as_object_mut()
            .expect("arguments")
            .remove("prune");
        let older: SavedPlan = serde_json::from_value(value).expect("an older plan");
        assert!(!older.arguments.prune);
        assert_eq!(
            older,
            SavedPlan {
                arguments: PlannedArguments::default(),
                ..plan
            }
        );
    }

    /// `schemas/plan.schema.json` must be what the types generate.
    #[test]
    fn plan_schema_file_is_up_to_date() {
        hub_manifest::schema::assert_committed(
            SCHEMA_FILE,
            &schema_text(),
            "crates/hub-plan/src/plan/saved/mod.rs",
        );
    }
}
