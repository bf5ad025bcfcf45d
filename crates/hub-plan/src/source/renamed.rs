//! A component's `moved: [{from, to}]`: outputs it renamed. Readers of the
//! old name keep working: when the stack is read, each entry becomes an
//! output `from` whose value is `${to}` (computed as any declared output,
//! after `to`), so the ordering, the plan, the deploy's capture and the
//! state all see it; the planner warns each reader to read `to` instead
//! (`plan::make::contracts`).
//!
//! Refused when the stack is read, naming the entry: a rename to itself,
//! to an output the component does not declare, from an output it still
//! declares, and two renames of one name.

use hub_manifest::declared::Declarations;
use hub_manifest::diag::Location;
use hub_manifest::{Manifest, Moved, Output, SourceFile};
use yaml_serde::Value;

/// What is wrong with a component's `moved` entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenameProblem {
    #[error("component `{component}`: `moved` renames output `{from}` to itself")]
    ToItself { component: String, from: String },
    #[error(
        "component `{component}`: `moved` renames output `{from}` to `{to}`, which it does not declare"
    )]
    NotDeclared {
        component: String,
        from: String,
        to: String,
    },
    #[error("component `{component}`: `moved` renames output `{from}`, which it still declares")]
    StillDeclared { component: String, from: String },
    #[error("component `{component}`: `moved` renames output `{from}` twice")]
    Twice { component: String, from: String },
}

impl RenameProblem {
    pub fn hint(&self) -> String {
        match self {
            RenameProblem::ToItself { .. } => "remove the entry: an output keeps its name".into(),
            RenameProblem::NotDeclared { to, .. } => format!(
                "declare `{to}` in the component's `outputs`, or give `to` the name the output has now"
            ),
            RenameProblem::StillDeclared { from, .. } => format!(
                "remove `{from}` from `outputs` (its readers then read the new name), or remove the `moved` entry"
            ),
            RenameProblem::Twice { .. } => "keep one entry per former name".into(),
        }
    }
}

/// The output a component renamed `from` into, when `output` is a former
/// name its `moved` keeps readable.
pub fn renamed_to<'m>(manifest: &'m Manifest, output: &str) -> Option<&'m Moved> {
    manifest.moved.iter().find(|m| m.from == output)
}

/// The first wrong `moved` entry of the components: the component, the
/// entry's index and what is wrong.
pub(super) fn check_all(components: &[Manifest]) -> Result<(), (String, usize, RenameProblem)> {
    for manifest in components.iter().filter(|m| !m.moved.is_empty()) {
        check(manifest).map_err(|(index, problem)| (manifest.meta.name.clone(), index, problem))?;
    }
    Ok(())
}

/// Adds an output for each former name (see the module documentation);
/// the entries were checked ([`check_all`]).
pub(super) fn add_aliases(components: &mut [Manifest]) {
    for manifest in components.iter_mut().filter(|m| !m.moved.is_empty()) {
        let aliases: Vec<Output> = manifest
            .moved
            .iter()
            .filter_map(|moved| {
                let to = manifest.outputs.iter().find(|o| o.name == moved.to)?;
                Some(Output {
                    name: moved.from.clone(),
                    brief: format!("renamed `{}`", moved.to),
                    value: Some(Value::String(format!("${{{}}}", moved.to))),
                    kind: to.kind.clone(),
                    ..Output::default()
                })
            })
            .collect();
        manifest.outputs.extend(aliases);
    }
}

/// The first wrong entry, with its index.
fn check(manifest: &Manifest) -> Result<(), (usize, RenameProblem)> {
    let component = manifest.meta.name.clone();
    let declares = |name: &str| manifest.outputs.iter().any(|o| o.name == name);
    for (index, moved) in manifest.moved.iter().enumerate() {
        let from = moved.from.clone();
        let problem = if moved.from == moved.to {
            RenameProblem::ToItself { component, from }
        } else if declares(&moved.from) {
            RenameProblem::StillDeclared { component, from }
        } else if !declares(&moved.to) {
            let to = moved.to.clone();
            RenameProblem::NotDeclared {
                component,
                from,
                to,
            }
        } else if manifest.moved[..index].iter().any(|m| m.from == moved.from) {
            RenameProblem::Twice { component, from }
        } else {
            continue;
        };
        return Err((index, problem));
    }
    Ok(())
}

/// Where entry `index` of a component's `moved` is, in `file` (document
/// `document`).
pub(super) fn entry_location(file: &SourceFile, document: usize, index: usize) -> Option<Location> {
    Declarations::scan(&file.path, &file.text).moved(document, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(outputs: &[&str], moved: &[(&str, &str)]) -> Manifest {
        Manifest {
            meta: hub_manifest::Meta {
                name: "a".into(),
                ..Default::default()
            },
            outputs: outputs
                .iter()
                .map(|name| Output {
                    name: name.to_string(),
                    kind: "secret".into(),
                    ..Output::default()
                })
                .collect(),
            moved: moved
                .iter()
                .map(|(from, to)| Moved {
                    from: from.to_string(),
                    to: to.to_string(),
                })
                .collect(),
            ..Manifest::default()
        }
    }

    #[test]
    fn a_rename_adds_the_former_name_reading_the_new_one() {
        let mut components = vec![manifest(&["value"], &[("val", "value")])];
        check_all(&components).expect("valid");
        add_aliases(&mut components);
        let alias = &components[0].outputs[1];
        assert_eq!(alias.name, "val");
        assert_eq!(alias.value, Some(Value::String("${value}".into())));
        assert_eq!(alias.kind, "secret");
    }

    #[test]
    fn wrong_renames_are_refused() {
        let problem = |outputs: &[&str], moved: &[(&str, &str)]| {
            check(&manifest(outputs, moved)).expect_err("refused").1
        };
        assert!(matches!(
            problem(&["v"], &[("v", "v")]),
            RenameProblem::ToItself { .. }
        ));
        assert!(matches!(
            problem(&["v"], &[("x", "y")]),
            RenameProblem::NotDeclared { .. }
        ));
        assert!(matches!(
            problem(&["v", "x"], &[("x", "v")]),
            RenameProblem::StillDeclared { .. }
        ));
        assert!(matches!(
            problem(&["v"], &[("x", "v"), ("x", "v")]),
            RenameProblem::Twice { .. }
        ));
    }
}
