//! Which parameters of a component read a name: the same walk as the
//! component's edges ([`super::Index::producers_of_outputs_read`]), made
//! for one parameter at a time. Only asked when a plan names the readers
//! of an output (an output contract the plan breaks, a renamed output).

use super::{group_leaves, Index, Reads};
use hub_manifest::Elaborated;

/// A parameter of a component that reads a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadingParameter {
    pub name: String,
    /// The item of the component's `parameters:` that declares it.
    pub index: usize,
}

/// The parameters of `component` that look up `name` (an output's name,
/// or `producer:name`), directly or through stack parameters.
pub fn parameters_reading(
    elaborated: &Elaborated,
    order: &[String],
    component: &str,
    name: &str,
) -> Vec<ReadingParameter> {
    let groups = group_leaves(&elaborated.stack.parameters);
    let index = Index::new(elaborated, order, &groups);
    let Some(manifest) = index.manifests.get(component) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (param, at) in hub_params::flatten(&manifest.parameters) {
        if param.name.starts_with("hub.") {
            continue;
        }
        let reader = param.name.as_str();
        let mut reads = Reads::default();
        match index.stack_params.get(&param.name, component) {
            Some(stack_param) => index.read_values(stack_param, reader, &mut reads),
            None => {
                reads.push(&param.name, reader);
                if let Some(stack_param) = index.stack_params.get(&param.name, "") {
                    index.read_values(stack_param, reader, &mut reads);
                }
            }
        }
        index.read_values(&param, reader, &mut reads);
        while let Some((read, _)) = reads.next() {
            let stack_param = index
                .stack_params
                .get(&read, component)
                .or_else(|| index.stack_params.get(&read, ""));
            if let Some(stack_param) = stack_param {
                index.read_values(stack_param, reader, &mut reads);
            }
        }
        if reads.seen.contains(name) && !found.iter().any(|f: &ReadingParameter| f.name == reader) {
            found.push(ReadingParameter {
                name: reader.to_string(),
                index: at,
            });
        }
    }
    found
}
