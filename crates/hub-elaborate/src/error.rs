use super::order::OrderError;
use hub_manifest::diag::Location;
use hub_manifest::ManifestError;
use hub_state::StateError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ElaborateError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("cannot read the manifest of component `{component}`: {source}")]
    Component {
        component: String,
        referenced_from: PathBuf,
        /// The component's `source.dir` in the stack (or its entry).
        entry: Box<Location>,
        /// A folder beside the missing one holding a component manifest,
        /// written as `source.dir` would be, when one has a close name.
        closest: Option<String>,
        source: Box<ManifestError>,
    },
    #[error("cannot read the parameters file: {0}")]
    Params(ManifestError),
    #[error("component `{component}` has no source directory")]
    NoSource {
        component: String,
        location: Location,
    },
    #[error("a component of the stack has no `name`")]
    UnnamedComponent { location: Location },
    #[error("{error}")]
    BadComponentName {
        error: hub_manifest::names::BadComponentName,
        location: Location,
    },
    #[error("`{}` cannot be {what}: {problem}", name.escape_debug())]
    BadName {
        what: &'static str,
        name: String,
        problem: hub_manifest::names::NameProblem,
        location: Location,
    },
    #[error("duplicate component name `{component}`")]
    DuplicateComponent {
        component: String,
        location: Location,
    },
    #[error(
        "`lifecycle.order` does not match `components:`\n  components: {}\n  order:      {}",
        list(components),
        list_or(order, "(not specified)")
    )]
    OrderMismatch {
        components: Vec<String>,
        order: Vec<String>,
        location: Location,
    },
    #[error("components depend on components that are not defined: {}", names.join(", "))]
    UndefinedDependencies {
        names: Vec<String>,
        /// A defined component the first undefined name may stand for.
        suggestion: Option<String>,
        location: Location,
    },
    #[error("dependency cycle between components: {}", cycle.join(" → "))]
    DependencyCycle {
        cycle: Vec<String>,
        location: Location,
    },
    #[error("component `{before}` must come after `{after}` in the child stack's `lifecycle.order`, as the parent stack (fromStack) deploys it first")]
    ParentOrder {
        before: String,
        after: String,
        location: Location,
    },
    #[error("`fromStack` cycle: {}", chain.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" → "))]
    FromStackCycle { chain: Vec<PathBuf> },
    #[error("an application manifest cannot use `fromStack`")]
    ApplicationFromStack { location: Location },
    #[error("application name `{name}` clashes with a component of the same name")]
    ApplicationNameClash { name: String, location: Location },
    #[error(transparent)]
    State(StateError),
    #[error("the file given with `-s` has kind `{kind}`, not `state`")]
    StateKind { kind: String, location: Location },
}

/// The first stray entry of an order and the component it may stand for.
fn stray_suggestion<'a>(
    order: &'a [String],
    components: &'a [String],
) -> Option<(&'a str, &'a str)> {
    let stray = &order[super::order::first_stray_entry(order, components)?];
    let known = hub_manifest::keys::suggest(stray, components)?;
    Some((stray, known.key))
}

fn list(names: &[String]) -> String {
    names.join(", ")
}

fn list_or(names: &[String], empty: &str) -> String {
    if names.is_empty() {
        empty.to_string()
    } else {
        names.join(", ")
    }
}

impl ElaborateError {
    pub fn location(&self) -> Option<Location> {
        match self {
            ElaborateError::Manifest(e) | ElaborateError::Params(e) => e.location(),
            ElaborateError::State(e) => e.location(),
            ElaborateError::Component { entry, source, .. } => match source.as_ref() {
                ManifestError::Read { .. } => Some(entry.as_ref().clone()),
                other => other.location(),
            },
            ElaborateError::NoSource { location, .. }
            | ElaborateError::DuplicateComponent { location, .. }
            | ElaborateError::BadComponentName { location, .. }
            | ElaborateError::BadName { location, .. }
            | ElaborateError::UnnamedComponent { location }
            | ElaborateError::OrderMismatch { location, .. }
            | ElaborateError::UndefinedDependencies { location, .. }
            | ElaborateError::DependencyCycle { location, .. }
            | ElaborateError::ParentOrder { location, .. }
            | ElaborateError::ApplicationFromStack { location }
            | ElaborateError::ApplicationNameClash { location, .. }
            | ElaborateError::StateKind { location, .. } => Some(location.clone()),
            ElaborateError::FromStackCycle { chain } => chain.first().map(|p| Location::file(p)),
        }
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            ElaborateError::Manifest(e) | ElaborateError::Params(e) => return e.hint(),
            ElaborateError::State(StateError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                "check the `-s` path; relative paths are resolved from the current directory".into()
            }
            ElaborateError::State(e) => return e.hint(),
            ElaborateError::Component { referenced_from, source, closest, .. } => match (source.as_ref(), closest) {
                (ManifestError::Read { .. }, Some(closest)) => format!(
                    "did you mean `dir: {closest}`? Check `source.dir` (or `source.git`) of the component in `{}`; relative directories start at the stack's folder",
                    referenced_from.display()
                ),
                (ManifestError::Read { .. }, None) => format!(
                    "check `source.dir` (or `source.git`) of the component in `{}`; relative directories start at the stack's folder",
                    referenced_from.display()
                ),
                (other, _) => return other.hint(),
            },
            ElaborateError::NoSource { .. } => "give the component a `source: {dir: path/to/component}`".into(),
            ElaborateError::DuplicateComponent { .. } => "give each component instance its own `name`".into(),
            ElaborateError::BadComponentName { .. } => {
                "rename the component: its name becomes file names (its log is `STATE.logs/NAME.log`), job names and lines of generated pipelines".into()
            }
            ElaborateError::BadName { .. } => {
                "leave the character out: names reach generated pipelines (job names, shell lines, runner tags), where a line break would start a line of its own and `${{` is a GitHub expression".into()
            }
            ElaborateError::UnnamedComponent { .. } => {
                "give the component a `name:`, the name it has in this stack (usually its folder's)".into()
            }
            ElaborateError::OrderMismatch { components, order, .. } => {
                let fix = "list every component exactly once in `lifecycle.order`, or remove `lifecycle.order` to derive it from `depends`";
                match stray_suggestion(order, components) {
                    Some((stray, known)) => format!("did you mean `{known}` instead of `{stray}`? Otherwise {fix}"),
                    None => fix.into(),
                }
            }
            ElaborateError::UndefinedDependencies { names, suggestion: Some(known), .. } => format!(
                "did you mean `{known}` instead of `{}`? Fix the names in `depends`, or add the missing components",
                names[0]
            ),
            ElaborateError::UndefinedDependencies { .. } => "fix the names in `depends`, or add the missing components".into(),
            ElaborateError::DependencyCycle { .. } => "remove one of the `depends` entries on the cycle".into(),
            ElaborateError::ParentOrder { .. } => "list the overridden components in the parent's order".into(),
            ElaborateError::FromStackCycle { .. } => "`meta.fromStack` must not lead back to a stack already in the chain".into(),
            ElaborateError::ApplicationFromStack { .. } => "remove `meta.fromStack` or make the manifest `kind: stack`".into(),
            ElaborateError::ApplicationNameClash { .. } => "rename the application (`meta.name`) or the component".into(),
            ElaborateError::StateKind { .. } => "give `-s` a state file written by `hub deploy` (`kind: state`)".into(),
        })
    }

    pub(crate) fn from_order(error: OrderError, location: Location) -> Self {
        match error {
            OrderError::Mismatch { components, order } => ElaborateError::OrderMismatch {
                components,
                order,
                location,
            },
            OrderError::Undefined(names) => ElaborateError::UndefinedDependencies {
                names,
                suggestion: None,
                location,
            },
            OrderError::Cycle(cycle) => ElaborateError::DependencyCycle { cycle, location },
            OrderError::ParentConflict { before, after } => ElaborateError::ParentOrder {
                before,
                after,
                location,
            },
        }
    }
}
