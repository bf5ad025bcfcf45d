//! Flattening nested `parameters:` groups: the one rule used when merging
//! parameters at elaborate and when locking and expanding them at deploy.

use super::{Parameter, ParameterRare};

/// The leaves of `param`, in declaration order, each named after its
/// ancestors joined with `.` (`a.b` + `c` → `a.b.c`); a leaf inherits
/// `kind`, `empty` and `component` from the nearest ancestor that sets them,
/// and the other fields of a group are dropped. A plain parameter is its own
/// only leaf. `empty_name(prefix)` is called for every node without a name,
/// which keeps the name `prefix.`.
pub fn leaves(param: &Parameter, mut empty_name: impl FnMut(&str)) -> Vec<Parameter> {
    let mut out = Vec::new();
    // An explicit stack keeps deeply nested groups off the call stack.
    let mut pending = vec![(param, String::new(), Parameter::default())];
    while let Some((node, prefix, inherited)) = pending.pop() {
        let name = match (prefix.is_empty(), node.name.is_empty()) {
            (true, _) => node.name.clone(),
            (false, false) => format!("{prefix}.{}", node.name),
            (false, true) => format!("{prefix}."),
        };
        if node.name.is_empty() {
            empty_name(&prefix);
        }
        let pick = |own: &str, from: &str| if own.is_empty() { from } else { own }.to_string();
        let scope = Parameter {
            kind: pick(&node.kind, &inherited.kind),
            component: pick(&node.component, &inherited.component),
            ..Parameter::default()
        }
        .with_rare(ParameterRare {
            empty: pick(node.empty(), inherited.empty()),
            ..ParameterRare::default()
        });
        if node.parameters().is_empty() {
            let rare = ParameterRare {
                empty: scope.empty().to_string(),
                parameters: Vec::new(),
                ..node.rare().clone()
            };
            out.push(
                Parameter {
                    name,
                    kind: scope.kind,
                    component: scope.component,
                    rare: None,
                    ..node.clone()
                }
                .with_rare(rare),
            );
        } else {
            for child in node.parameters().iter().rev() {
                pending.push((child, name.clone(), scope.clone()));
            }
        }
    }
    out
}

/// The child indices leading to each leaf of `param`, in [`leaves`] order
/// (empty for a plain parameter, its own only leaf).
pub fn leaf_paths(param: &Parameter) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut pending = vec![(param, Vec::new())];
    while let Some((node, path)) = pending.pop() {
        if node.parameters().is_empty() {
            out.push(path);
        } else {
            for (i, child) in node.parameters().iter().enumerate().rev() {
                let mut child_path = path.clone();
                child_path.push(i);
                pending.push((child, child_path));
            }
        }
    }
    out
}

/// The top-level `parameters:` of the first YAML document of `text`.
pub fn top_parameters(text: &str) -> Option<Vec<Parameter>> {
    use serde::Deserialize;
    #[derive(Deserialize)]
    struct Parameters {
        #[serde(default)]
        parameters: Vec<Parameter>,
    }
    let first = yaml_serde::Deserializer::from_str(text).next()?;
    Parameters::deserialize(first).ok().map(|d| d.parameters)
}

/// The path to leaf number `leaf` ([`leaves`] order) of item `index` of
/// `parameters` (a document's top-level list), for [`crate::locate`].
pub fn leaf_segments(
    parameters: &[Parameter],
    index: usize,
    leaf: usize,
) -> Option<Vec<crate::Segment>> {
    let path = leaf_paths(parameters.get(index)?).into_iter().nth(leaf)?;
    let mut segments = vec![
        crate::Segment::Key("parameters".into()),
        crate::Segment::Index(index),
    ];
    for child in path {
        segments.push(crate::Segment::Key("parameters".into()));
        segments.push(crate::Segment::Index(child));
    }
    Some(segments)
}

/// The 1-based (line, column) of leaf number `leaf` ([`leaves`] order) of
/// item `index` of the top-level `parameters:` list of the first YAML
/// document of `text`: the nested parameter itself, not its group.
pub fn leaf_position(text: &str, index: usize, leaf: usize) -> Option<(usize, usize)> {
    let parameters = top_parameters(text)?;
    crate::locate(text, &leaf_segments(&parameters, index, leaf)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_leaf_is_found_at_its_own_line() {
        let text = "kind: component\nparameters:\n  - name: plain\n  - name: redis\n    parameters:\n      - name: port\n        value: 1\n      - name: auth\n        parameters:\n          - name: user\n          - name: password\n";
        assert_eq!(leaf_position(text, 0, 0).map(|p| p.0), Some(3));
        assert_eq!(leaf_position(text, 1, 0).map(|p| p.0), Some(6));
        assert_eq!(leaf_position(text, 1, 1).map(|p| p.0), Some(10));
        assert_eq!(leaf_position(text, 1, 2).map(|p| p.0), Some(11));
        assert_eq!(leaf_position(text, 1, 3), None);
    }

    #[test]
    fn groups_give_their_leaves_in_order() {
        let group: Parameter = yaml_serde::from_str(
            "{name: grp, kind: user, empty: allow, value: dropped, parameters: [{name: x}, {name: y, kind: tech}, {name: deep, parameters: [{name: z, value: 1}]}, {name: ''}]}",
        )
        .expect("yaml");
        let mut unnamed = Vec::new();
        let flat = leaves(&group, |prefix| unnamed.push(prefix.to_string()));
        let names: Vec<_> = flat
            .iter()
            .map(|p| (p.name.as_str(), p.kind.as_str(), p.empty()))
            .collect();
        assert_eq!(
            names,
            [
                ("grp.x", "user", "allow"),
                ("grp.y", "tech", "allow"),
                ("grp.deep.z", "user", "allow"),
                ("grp.", "user", "allow")
            ]
        );
        assert!(flat[0].value.is_none());
        assert_eq!(flat[2].value, Some(1.into()));
        assert_eq!(unnamed, ["grp"]);
    }

    #[test]
    fn a_plain_parameter_is_its_own_leaf() {
        let plain = Parameter {
            name: "p".into(),
            value: Some("v".into()),
            ..Parameter::default()
        };
        assert_eq!(leaves(&plain, |_| {}), std::slice::from_ref(&plain));
    }
}
