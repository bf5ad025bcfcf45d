//! Serde types for every Hub document: stack, component, application, params
//! file and the elaborated multi-document file (which is a stack document
//! followed by component documents of the same shape).
//!
//! Field order is the order in which documents are written; empty values are
//! omitted, except the few keys the Hub format always writes.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use yaml_serde::Value;

mod ci;
mod parameter;
pub use ci::{ApplyOn, ApplyRequirement, Ci, CiApply, CiQueue, Replan};
pub use parameter::{Parameter, ParameterRare};

fn is_empty_str(s: &str) -> bool {
    s.is_empty()
}
fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A value is empty when it is absent, null or the empty string; `0`,
/// `false`, `[]` and `{}` are real values.
pub fn value_is_empty(v: &Option<Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn is_null(v: &Option<Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// Stack (`hub.yaml`), application (`hub-application.yaml`) and component
/// (`hub-component.yaml`) manifests share one structure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Manifest {
    /// Format version of the manifest; `1`.
    pub version: i64,
    /// The document kind.
    pub kind: String,
    /// Name and description.
    pub meta: Meta,
    /// The component instances of a stack, in declaration order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<ComponentRef>,
    /// Capabilities needed before deploying (for example `aws`, `kubernetes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// Capabilities made available to what is deployed afterwards.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<String>,
    /// What the underlying platform already provides.
    #[serde(skip_serializing_if = "Platform::is_empty")]
    pub platform: Platform,
    /// Deployment order, verbs and optional requirements.
    #[serde(skip_serializing_if = "Lifecycle::is_empty")]
    pub lifecycle: Lifecycle,
    /// Values exported once deployed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
    /// Parameter declarations, values and defaults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// Files rendered with parameter values before deployment.
    #[serde(skip_serializing_if = "Templates::is_empty")]
    pub templates: Templates,
    // Issue 26, item 8.
    /// In a stack, renamed components: a deploy renames the state's entry
    /// `from` to `to`, as `hub state mv` does, instead of undeploying one
    /// and deploying the other. In a component, renamed outputs: the
    /// output `from` is now `to`, and whoever reads `from` reads `to`
    /// (with a warning to update them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Moved>,
    // Issue 27, item 6.
    /// Rules on plans (stack only): each `deny` or `warn` is a CEL
    /// expression over `plan`, `change`, `stack` and `now` that is true
    /// when the rule fires, or a rule gives a Rego module (`rego`, `file`)
    /// over the same `input`. A parent's rules come first; a rule of the
    /// same name replaces the parent's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<Policy>,
    // Issue 43, items 2 and 4.
    /// What an apply of a change (pull or merge request) needs, and when
    /// `hub ci` applies it (stack only; a child's `ci` replaces its
    /// parent's).
    #[serde(skip_serializing_if = "Ci::is_empty")]
    pub ci: Ci,
}

/// One `policies` entry: a rule on the plans of the stack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(extend("required" = ["name"]))]
pub struct Policy {
    /// The rule's name, shown with its result.
    pub name: String,
    /// Refuses the plan when true (CEL); a rule has `deny` or `warn`, not both.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub deny: String,
    /// Warns when true (CEL).
    #[serde(skip_serializing_if = "is_empty_str")]
    pub warn: String,
    /// What is shown when the rule fires.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub message: String,
    /// A Rego module, inline, in place of `deny`, `warn` and `message`: its
    /// `deny`, `violation` and `warn` rules (conftest's) give the results.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub rego: String,
    /// A Rego module in a file, relative to the folder of the stack file
    /// that declares the rule (and inside it), in place of `rego`.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub file: String,
}

/// One `moved` entry: a former name and the name now (of a component in a
/// stack, of an output in a component).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(extend("required" = ["from", "to"]))]
pub struct Moved {
    /// The name the state knows (a component's), or readers still read
    /// (an output's).
    pub from: String,
    /// The name the stack lists now, or the component declares now.
    pub to: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Meta {
    /// Name of the stack or component.
    pub name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub origin: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub title: String,
    /// One-line summary.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub description: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub version: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub maturity: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub license: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub icon: String,
    /// Where an application's own sources live (`kind: application`).
    #[serde(skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    /// Parent stack directory whose manifest this one extends.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_stack: String,
    /// Free-form string annotations, merged with the parent stack's.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An entry of a stack's `components:` list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(extend("required" = ["name"]))]
pub struct ComponentRef {
    /// Instance name, unique within the stack.
    pub name: String,
    /// Where the component manifest is: `dir` relative to the stack, or `git`.
    #[serde(skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    /// Names of the components this one depends on; `depends: []` says it
    /// needs nothing (it does not wait for a written `lifecycle.order`).
    #[serde(skip_serializing_if = "Depends::is_absent")]
    #[schemars(with = "Vec<String>")]
    pub depends: Depends,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Scripts run before or after the component's implementation (hubctl).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
}

/// A stack component's `depends`: the names, and whether the list is
/// there at all. An explicit empty list (`depends: []`) means "needs
/// nothing", which is not the same as no `depends`: with a written
/// `lifecycle.order`, a component without `depends` waits for every
/// component before it, one with `depends: []` for none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Depends(Option<Vec<String>>);

impl Depends {
    /// No `depends` key (or `depends:` with no value).
    pub fn is_absent(&self) -> bool {
        self.0.is_none()
    }

    /// `depends: []`.
    pub fn is_written_empty(&self) -> bool {
        matches!(&self.0, Some(names) if names.is_empty())
    }

    pub fn as_slice(&self) -> &[String] {
        self
    }
}

impl<'a> IntoIterator for &'a Depends {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl std::ops::Deref for Depends {
    type Target = [String];

    fn deref(&self) -> &[String] {
        self.0.as_deref().unwrap_or_default()
    }
}

impl FromIterator<String> for Depends {
    fn from_iter<I: IntoIterator<Item = String>>(names: I) -> Self {
        Depends(Some(names.into_iter().collect()))
    }
}

impl From<Vec<String>> for Depends {
    fn from(names: Vec<String>) -> Self {
        Depends(Some(names))
    }
}

/// A script run around a component's implementation (hubctl's `hooks`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(extend("required" = ["file"]))]
pub struct Hook {
    /// The script: an absolute path, or a name looked up in the component's
    /// folder, the stack's folder (also `bin`, `.hub`, `.hub/bin`) and `PATH`.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub file: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    /// Shell-style patterns matched against `pre-VERB` and `post-VERB`
    /// (`pre-deploy`, `post-*`, `post-undeploy-test`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    /// `ignore`: a failure is logged and the run goes on; anything else
    /// (the default): the component fails.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub error: String,
}

impl Hook {
    pub fn ignores_errors(&self) -> bool {
        self.error == "ignore"
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Source {
    /// A directory, relative to the manifest's directory.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub dir: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub s3: String,
    // Boxed: every component reference and every component's `meta`
    // holds a `Source`, few of them a git one.
    /// A git repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<Box<GitSource>>,
}

// A component reference and a component's `meta` each hold one (144 bytes
// with the git source inline).
const _: () = assert!(std::mem::size_of::<Source>() <= 56);

impl Source {
    pub fn is_empty(&self) -> bool {
        self.dir.is_empty() && self.s3.is_empty() && self.git.is_none()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
#[schemars(extend("required" = ["remote"]))]
pub struct GitSource {
    /// Repository URL.
    pub remote: String,
    /// Branch, tag or commit.
    #[serde(rename = "ref", skip_serializing_if = "is_empty_str")]
    pub git_ref: String,
    /// Sub-directory of the checkout holding the component.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub sub_dir: String,
    /// Where the checkout lives, relative to the base directory.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub local_dir: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Platform {
    /// Capabilities of the underlying platform.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<String>,
}

impl Platform {
    pub fn is_empty(&self) -> bool {
        self.provides.is_empty()
    }
}

// `lifecycle:`, one field per key of the manifest. Over 15 fields on
// purpose: the struct mirrors the file, and grouping keys into
// `#[serde(flatten)]` sub-structs would change how serde reads it (a
// flattened struct is read through a buffered map, so the lenient
// readers and the error positions differ) and what the JSON Schema is
// generated from, which the unknown-key findings, the near-typo
// suggestions and `schemas/` read: not worth it for a plain mirror.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Lifecycle {
    /// `allow`: the component may be deployed on its own, without a stack.
    #[serde(skip_serializing_if = "is_empty_str")]
    #[schemars(extend("enum" = ["allow"]))]
    pub bare: String,
    /// Verbs the component implements (for example `deploy`, `undeploy`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verbs: Vec<String>,
    /// Deployment order of the components.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// Components that must deploy; when set, all others are optional.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mandatory: Vec<String>,
    /// Components whose failure to deploy is not fatal.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
    /// Which requirements are optional.
    #[serde(skip_serializing_if = "RequiresTuning::is_empty")]
    pub requires: RequiresTuning,
    /// Checks that must pass before the next component is deployed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ready_conditions: Vec<ReadyCondition>,
    /// How long each component may run (stack only): component name →
    /// duration (`90s`, `15m`, `1h30m`; `0`: no limit). Over `--timeout`.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub timeouts: IndexMap<String, String>,
    #[serde(skip_serializing_if = "LifecycleOptions::is_empty")]
    pub options: LifecycleOptions,
    // Issue 26, items 1 and 3: what selects a component besides `-c`.
    /// Extra inputs of a component for `--affected` (stack only):
    /// component name → file globs, relative to the stack's folder. A
    /// change to a matching file selects the component.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub watch: IndexMap<String, Vec<String>>,
    /// What a component wants (stack only): component name → components
    /// selected with it whenever it is selected, recursively, without
    /// making it wait for them.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub wants: IndexMap<String, Vec<String>>,
    // Issue 26, items 4, 6 and 7: what makes a component run, or run
    // again from scratch, under `--changed` (see `plan/triggers.rs`).
    /// Components that run whenever a component they depend on runs in
    /// the same deploy, even when no output they read changed (stack
    /// only; Spacelift's "trigger always").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trigger_always: Vec<String>,
    /// Component name → the parameters whose changes alone do not make it
    /// run again under `--changed`, or `all` (stack only; Terraform's
    /// `ignore_changes`).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub ignore_changes: IndexMap<String, IgnoreChanges>,
    /// Component name → the components (deployed again in the same run)
    /// or parameters (changed) that make it planned as `replace` (stack
    /// only; Terraform's `replace_triggered_by`).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub replace_triggered_by: IndexMap<String, Vec<String>>,
    // Issue 26, items 5 and 9: protected components and retries.
    /// Components that must never be undeployed, pruned, replaced or
    /// forgotten (stack only): `undeploy`, `deploy --prune`, `--replace`,
    /// `hub state rm` and a plan doing any of these to one of them are
    /// refused. There is no flag to get past it: remove the entry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// Runs again a deploy or undeploy that failed (stack only): component
    /// name (or `default`, for every component without its own entry) →
    /// how many attempts, how long between them, and which output makes
    /// a failure worth another attempt.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub retry: IndexMap<String, RetryPolicy>,
    // Issue 28, item 1 (branch `pipeline`): where `hub pipeline` runs
    // each component's job.
    /// Where each component's job runs in a pipeline written by `hub
    /// pipeline` (stack only): component name (or `default`, for every
    /// component without its own entry) → runner tags, container image
    /// and environment. Over `--tag` and `--image`.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub runners: IndexMap<String, Runner>,
}

/// One `lifecycle.runners` entry: what a component's pipeline job runs on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Runner {
    /// Runner tags (GitLab `tags:`, GitHub `runs-on:` labels).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The container image the job runs in.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub image: String,
    /// Environment variables of the job, over the pipeline's.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
}

/// One `lifecycle.retry` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Attempts in all, the first included (`3`: two more after a failure).
    #[serde(skip_serializing_if = "is_zero")]
    pub attempts: i64,
    /// The wait before the second attempt (`10s`, `1m`; `0`: none).
    #[serde(skip_serializing_if = "is_empty_str")]
    pub delay: String,
    /// Each later wait is the one before times this (`2`: 10s, 20s, 40s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff: Option<f64>,
    /// Regular expressions: only a failure whose output matches one of
    /// them is retried (every failure when absent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<String>,
}

/// `lifecycle.ignoreChanges` of one component: parameter names, or `all`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IgnoreChanges {
    /// `all`: no parameter change counts.
    All(AllParameters),
    /// These parameters' changes do not count.
    Parameters(Vec<String>),
}

/// The word `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AllParameters {
    #[serde(rename = "all")]
    All,
}

/// Read by hand, so that a wrong value says what is expected.
impl<'de> Deserialize<'de> for IgnoreChanges {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = IgnoreChanges;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("`all` or a list of parameter names")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<IgnoreChanges, E> {
                match text {
                    "all" => Ok(IgnoreChanges::All(AllParameters::All)),
                    other => Err(E::custom(format!(
                        "`{other}` is neither `all` nor a list of parameter names"
                    ))),
                }
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<IgnoreChanges, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(IgnoreChanges::Parameters(names))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl IgnoreChanges {
    /// Whether a change of `parameter` is ignored.
    pub fn covers(&self, parameter: &str) -> bool {
        match self {
            IgnoreChanges::All(_) => true,
            IgnoreChanges::Parameters(names) => names.iter().any(|n| n == parameter),
        }
    }
}

impl Lifecycle {
    pub fn is_empty(&self) -> bool {
        self == &Lifecycle::default()
    }
}

/// `lifecycle.requires`: which requirements are optional, for whom.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RequiresTuning {
    /// Requirements that may be missing: `req`, `component:req` or `parameter.name:req`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
}

impl RequiresTuning {
    pub fn is_empty(&self) -> bool {
        self.optional.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ReadyCondition {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub dns: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub url: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub wait_seconds: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub pause_seconds: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LifecycleOptions {
    #[serde(skip_serializing_if = "RandomOptions::is_empty")]
    pub random: RandomOptions,
}

impl LifecycleOptions {
    pub fn is_empty(&self) -> bool {
        self.random.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RandomOptions {
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes: i64,
}

impl RandomOptions {
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
#[schemars(extend("required" = ["name"]))]
pub struct Output {
    /// Output name.
    pub name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub description: String,
    /// The value; may refer to parameters and outputs with `${name}`.
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub value: Option<Value>,
    /// Terraform output variable the value is read from.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_tf_var: String,
    /// For example `secret` or `secret/token`.
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
}

impl Output {
    /// Field-wise update: the incoming non-empty fields win.
    pub fn update_from(&mut self, over: &Output) {
        if !value_is_empty(&over.value) {
            self.value = over.value.clone();
        }
        for (mine, theirs) in [
            (&mut self.from_tf_var, &over.from_tf_var),
            (&mut self.kind, &over.kind),
            (&mut self.brief, &over.brief),
            (&mut self.description, &over.description),
        ] {
            if !theirs.is_empty() {
                mine.clone_from(theirs);
            }
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Templates {
    /// Template engine: `curly` (`${name}`), `mustache` (`{{name}}`), `_mustache` (full Mustache, names with `_` for `.`) or `go`.
    #[serde(skip_serializing_if = "is_empty_str")]
    #[schemars(extend("enum" = ["curly", "mustache", "_mustache", "go"]))]
    pub kind: String,
    /// Directories whose template files are rendered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directories: Vec<String>,
    /// Template files (globs) to render.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// More template sets, each with its own engine.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<TemplateSet>,
}

impl Templates {
    pub fn is_empty(&self) -> bool {
        self == &Templates::default()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct TemplateSet {
    /// Template engine: `curly` (`${name}`), `mustache` (`{{name}}`), `_mustache` (full Mustache, names with `_` for `.`) or `go`.
    #[serde(skip_serializing_if = "is_empty_str")]
    #[schemars(extend("enum" = ["curly", "mustache", "_mustache", "go"]))]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directories: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// A parameters file (`params.yaml`): parameters and outputs only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ParamsFile {
    /// Parameter values, overriding those of the stack.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// Extra stack outputs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
}

/// The result of `hub elaborate`: the assembled stack and one document per
/// component instance, in the order they are written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Elaborated {
    pub stack: Manifest,
    pub components: Vec<Manifest>,
    /// What elaborate recorded about the stack (written as a comment header).
    pub provenance: super::Provenance,
    /// Where each component document is, for [`Elaborated::component`].
    pub index: ComponentIndex,
    /// Where each of the stack's component references is, for
    /// [`Elaborated::reference`].
    pub references: ComponentIndex,
}

impl Manifest {
    /// Gives back the room its lists grew into while decoded.
    pub fn shrink_to_fit(&mut self) {
        self.components.shrink_to_fit();
        self.outputs.shrink_to_fit();
        self.parameters.shrink_to_fit();
        self.parameters
            .iter_mut()
            .for_each(Parameter::shrink_to_fit);
    }
}

impl Elaborated {
    /// The component document of that name (the first, if several).
    pub fn component(&self, name: &str) -> Option<&Manifest> {
        self.index
            .find(&self.components, name, |c| c.meta.name.as_str())
    }

    /// The place of the component document of that name in
    /// [`Elaborated::components`] (the first, if several).
    pub fn component_position(&self, name: &str) -> Option<usize> {
        self.index
            .position(&self.components, name, |c| c.meta.name.as_str())
    }

    /// The stack's reference to the component of that name (the first, if
    /// several).
    pub fn reference(&self, name: &str) -> Option<&ComponentRef> {
        self.references
            .find(&self.stack.components, name, |c| c.name.as_str())
    }
}

/// The positions of an elaborated stack's component documents (or of its
/// component references) by name,
/// built on the first lookup. It holds no information of its own: two
/// indexes are always equal.
#[derive(Debug, Clone, Default)]
pub struct ComponentIndex(std::sync::OnceLock<HashMap<String, usize>>);

impl ComponentIndex {
    /// The first of `items` named `name`, through the index.
    fn find<'i, T>(&self, items: &'i [T], name: &str, name_of: fn(&T) -> &str) -> Option<&'i T> {
        self.position(items, name, name_of).map(|at| &items[at])
    }

    /// The place of the first of `items` named `name`, through the index.
    fn position<T>(&self, items: &[T], name: &str, name_of: fn(&T) -> &str) -> Option<usize> {
        let index = self.0.get_or_init(|| {
            let mut positions = HashMap::with_capacity(items.len());
            for (position, item) in items.iter().enumerate() {
                positions
                    .entry(name_of(item).to_string())
                    .or_insert(position);
            }
            positions
        });
        let indexed = index
            .get(name)
            .copied()
            .filter(|&at| items.get(at).is_some_and(|item| name_of(item) == name));
        // The list may have changed since the index was built: a stale
        // entry or a new name is found the slow way.
        indexed.or_else(|| items.iter().position(|item| name_of(item) == name))
    }
}

impl PartialEq for ComponentIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
