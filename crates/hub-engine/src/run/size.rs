//! The size of the state a deploy will write, estimated from the locked
//! parameters before anything runs.
//!
//! Every state is read with the limit of [`hub_state::max_state_bytes`]
//! (`HUB_MAX_STATE_BYTES`, 512 MiB by default): a state
//! written past it would be refused by every later command, its backup as
//! well. A stack parameter is written once in `stackParameters` and again
//! in the entry of every component that takes it, so one large value read
//! by many components multiplies. The deploy is refused before its first
//! component when the parameters alone would take the state past the
//! limit, naming those that weigh most.

use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::{flatten, qualified, Locked};
use indexmap::IndexMap;
use yaml_serde::Value;

/// What one parameter adds to the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weight {
    /// The stack parameter's qualified name, or `COMPONENT: NAME` for a
    /// value a component declares itself.
    pub name: String,
    /// The bytes of one copy of its value.
    pub bytes: u64,
    /// Copies in `stackParameters` (0 or 1).
    pub in_stack: u64,
    /// The components whose entries hold a copy.
    pub components: Vec<String>,
    /// The entries that name it by an alias (a few bytes each).
    pub aliases: u64,
}

impl Weight {
    pub fn total(&self) -> u64 {
        self.bytes * (self.in_stack + self.components.len() as u64) + self.aliases * ALIAS_BYTES
    }
}

/// An entry's parameter written as an alias: its `name`, `value: *hub-…`
/// and `env` lines.
const ALIAS_BYTES: u64 = 64;

/// Whether the run's entries write the stack parameter `key` as an alias
/// (see [`hub_state::SHARED_VALUE_BYTES`]).
fn is_shared(locked: &Locked, key: &str) -> bool {
    shared_value(locked.value(key))
}

/// Whether a stack parameter's value is written as an alias (see
/// [`is_shared`]).
fn shared_value(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(text)) if text.len() >= hub_state::SHARED_VALUE_BYTES)
}

/// Bytes a parameter's value takes in the state's YAML: its text, an
/// indentation for each of its lines, and its `name`/`value` keys. A
/// string is measured where it is, not copied.
fn written_size(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::String(text)) => text_size(text),
        Some(Value::Tagged(tagged)) => written_size(Some(&tagged.value)),
        other => text_size(&substitution_text(other)),
    }
}

fn text_size(text: &str) -> u64 {
    let lines = text.bytes().filter(|b| *b == b'\n').count() as u64;
    text.len() as u64 + lines * 8 + 32
}

/// The sum of [`estimate`]'s weights, counted without naming any: a
/// deploy asks for the weights only when the sum passes the limit.
pub fn total<'m>(
    locked: &Locked,
    components: impl IntoIterator<Item = (&'m str, &'m Manifest)>,
) -> u64 {
    let params = &locked.params;
    // One copy of each in `stackParameters`; the size of a copy by index.
    let sizes: Vec<u64> = params
        .values()
        .map(|param| written_size(param.value.as_ref()))
        .collect();
    let mut total: u64 = sizes.iter().sum();
    let mut own = String::new();
    // A component's own values, by name: a name declared twice counts
    // the first declaration's size twice, as in `estimate`.
    let mut declared: Vec<(String, u64)> = Vec::new();
    for (component, manifest) in components {
        declared.clear();
        for (param, _) in flatten(&manifest.parameters) {
            own.clear();
            own.push_str(&param.name);
            if !component.is_empty() {
                own.push('|');
                own.push_str(component);
            }
            let found = params
                .get_index_of(own.as_str())
                .or_else(|| params.get_index_of(param.name.as_str()));
            total += match found {
                Some(at) if shared_value(params[at].value.as_ref()) => ALIAS_BYTES,
                Some(at) => sizes[at],
                None => match declared.iter().find(|(name, _)| *name == param.name) {
                    Some((_, bytes)) => *bytes,
                    None => {
                        let value = param.value.as_ref().or(param.default_value().as_ref());
                        let bytes = written_size(value);
                        declared.push((param.name.clone(), bytes));
                        bytes
                    }
                },
            };
        }
    }
    total
}

/// The parameters' weights, heaviest first, and their sum; `components`:
/// the components the deploy runs, with their manifests.
pub fn estimate<'m>(
    locked: &Locked,
    components: impl IntoIterator<Item = (&'m str, &'m Manifest)>,
) -> (u64, Vec<Weight>) {
    let mut weights: IndexMap<String, Weight> = IndexMap::new();
    for (name, param) in &locked.params {
        weights.insert(
            name.to_string(),
            Weight {
                name: name.to_string(),
                bytes: written_size(param.value.as_ref()),
                in_stack: 1,
                components: Vec::new(),
                aliases: 0,
            },
        );
    }
    for (component, manifest) in components {
        for (param, _) in flatten(&manifest.parameters) {
            let own = qualified(&param.name, component);
            let found = [own.as_str(), param.name.as_str()]
                .into_iter()
                .find(|key| locked.params.contains_key(*key));
            let weight = match found {
                // Written as an alias of the stack parameter's value.
                Some(key) if is_shared(locked, key) => {
                    weights[key].aliases += 1;
                    continue;
                }
                Some(key) => &mut weights[key],
                None => {
                    let value = param.value.as_ref().or(param.default_value().as_ref());
                    let key = format!("{component}: {}", param.name);
                    weights.entry(key.clone()).or_insert(Weight {
                        name: key,
                        bytes: written_size(value),
                        in_stack: 0,
                        components: Vec::new(),
                        aliases: 0,
                    })
                }
            };
            weight.components.push(component.to_string());
        }
    }
    let mut weights: Vec<Weight> = weights.into_values().collect();
    let total = weights.iter().map(Weight::total).sum();
    weights.sort_by_key(|w| std::cmp::Reverse(w.total()));
    (total, weights)
}

/// The estimate passes the limit: the weights that make it so, heaviest
/// first, as long as they are each a tenth of the limit or more (at least
/// one).
pub(crate) fn over_limit(total: u64, limit: u64, weights: Vec<Weight>) -> Option<Vec<Weight>> {
    if total <= limit {
        return None;
    }
    let tenth = limit / 10;
    let heavy: Vec<Weight> = weights
        .iter()
        .take_while(|w| w.total() >= tenth)
        .take(5)
        .cloned()
        .collect();
    Some(match heavy.is_empty() {
        true => weights.into_iter().take(1).collect(),
        false => heavy,
    })
}

/// One line of the refusal: `big` (10.0 MiB) in the stack parameters
/// and in the entries of 7 components (`a`, `b`, …).
pub fn describe(weight: &Weight) -> String {
    let mut places = Vec::new();
    if weight.in_stack > 0 {
        places.push("in the stack parameters".to_string());
    }
    let count = weight.components.len();
    if count > 0 {
        let mut names: Vec<String> = weight
            .components
            .iter()
            .take(4)
            .map(|c| format!("`{c}`"))
            .collect();
        if count > 4 {
            names.push("…".into());
        }
        let noun = if count == 1 {
            "component"
        } else {
            "components"
        };
        places.push(format!(
            "in the entries of {count} {noun} ({})",
            names.join(", ")
        ));
    }
    let mut line = format!(
        "`{}` ({}) {}",
        weight.name,
        mebibytes(weight.bytes),
        places.join(" and ")
    );
    if weight.aliases > 0 {
        let noun = if weight.aliases == 1 {
            "component"
        } else {
            "components"
        };
        line.push_str(&format!(", read by {} {noun}", weight.aliases));
    }
    line
}

pub(crate) fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_params::{LockedParam, Origin};

    const LIMIT: u64 = 64 << 20;

    fn locked(values: &[(&str, usize)]) -> Locked {
        let mut locked = Locked::default();
        for (name, size) in values {
            let value = Some(Value::String("x".repeat(*size)));
            locked.insert(LockedParam::new(name, "", value, Origin::Implicit));
        }
        locked
    }

    fn manifest(params: &[&str]) -> Manifest {
        let text = format!(
            "version: 1\nkind: component\nmeta: {{name: c}}\nparameters:\n{}",
            params
                .iter()
                .map(|p| format!("  - name: {p}\n"))
                .collect::<String>()
        );
        yaml_serde::from_str(&text).expect("manifest")
    }

    #[test]
    fn a_shared_value_counts_once_however_many_components_take_it() {
        let locked = locked(&[("big", 10 << 20), ("small", 10)]);
        let m = manifest(&["big", "small"]);
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let (total, weights) = estimate(&locked, names.iter().map(|n| (*n, &m)));
        assert!(total < 11 << 20, "{total}");
        assert!(over_limit(total, LIMIT, weights).is_none());
    }

    #[test]
    fn values_a_component_declares_count_once_per_component() {
        let mut m = manifest(&["big"]);
        m.parameters[0].value = Some(Value::String("x".repeat(10 << 20)));
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let (total, weights) = estimate(&Locked::default(), names.iter().map(|n| (*n, &m)));
        assert!(total > 70 << 20, "{total}");
        let heavy = over_limit(total, LIMIT, weights).expect("over the limit");
        let line = describe(&heavy[0]);
        assert!(
            line.starts_with("`a: big` (10.0 MiB) in the entries of 1 component (`a`)"),
            "{line}"
        );
    }

    #[test]
    fn distinct_large_values_count_each() {
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let values: Vec<(String, usize)> = names
            .iter()
            .map(|n| (format!("big.{n}"), 10 << 20))
            .collect();
        let values: Vec<(&str, usize)> = values.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let locked = locked(&values);
        let manifests: Vec<Manifest> = names
            .iter()
            .map(|n| manifest(&[&format!("big.{n}")]))
            .collect();
        let (total, weights) = estimate(&locked, names.iter().copied().zip(&manifests));
        let heavy = over_limit(total, LIMIT, weights).expect("over the limit");
        assert_eq!(heavy.len(), 5, "{heavy:?}");
        assert!(
            describe(&heavy[0])
                .ends_with("(10.0 MiB) in the stack parameters, read by 1 component"),
            "{}",
            describe(&heavy[0])
        );
    }

    /// A value of the property test: by kind, a size or a number.
    fn value_of(kind: u8, size: usize) -> Option<Value> {
        match kind % 5 {
            0 => None,
            1 => Some(Value::String("x".repeat(size))),
            2 => Some(Value::String("line\n".repeat(size / 5 + 1))),
            3 => Some(Value::Number((size as u64).into())),
            _ => Some(Value::String(
                "y".repeat(hub_state::SHARED_VALUE_BYTES + size),
            )),
        }
    }

    /// The YAML of a component's parameter named `name`.
    fn declaration(name: &str, kind: u8, size: usize) -> String {
        let key = if kind % 2 == 0 { "value" } else { "default" };
        match value_of(kind, size) {
            Some(Value::String(text)) => format!("  - name: {name}\n    {key}: {text:?}\n"),
            Some(Value::Number(n)) => format!("  - name: {name}\n    {key}: {n}\n"),
            _ => format!("  - name: {name}\n"),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The sum counted alone is the named weights' total, whatever
        /// the parameters: stack ones plain, qualified or shared, values
        /// the components declare, a name declared twice.
        #[test]
        fn the_sum_alone_equals_the_named_weights_total(
            stack in proptest::collection::vec((0usize..6, 0usize..4, 0u8..5, 0usize..300), 0..12),
            taken in proptest::collection::vec(
                proptest::collection::vec((0usize..8, 0u8..5, 0usize..300), 0..8),
                0..4,
            ),
        ) {
            let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
            let components = ["", "p", "q", "r"];
            let mut locked = Locked::default();
            for (name, component, kind, size) in &stack {
                let value = value_of(*kind, *size);
                locked.insert(LockedParam::new(names[*name], components[*component], value, Origin::Implicit));
            }
            let manifests: Vec<Manifest> = taken
                .iter()
                .map(|params| {
                    let text: String = params
                        .iter()
                        .map(|(name, kind, size)| declaration(names[*name], *kind, *size))
                        .collect();
                    let text = format!("version: 1\nkind: component\nmeta: {{name: c}}\nparameters:\n{text}");
                    yaml_serde::from_str(if params.is_empty() { "version: 1\nkind: component\nmeta: {name: c}\n" } else { &text })
                        .expect("manifest")
                })
                .collect();
            let selected = || components[1..].iter().copied().zip(&manifests);
            let (sum, weights) = estimate(&locked, selected());
            proptest::prop_assert_eq!(sum, weights.iter().map(Weight::total).sum::<u64>());
            proptest::prop_assert_eq!(total(&locked, selected()), sum);
        }
    }

    #[test]
    fn a_state_under_the_limit_passes() {
        let locked = locked(&[("big", 10 << 20)]);
        let m = manifest(&["big"]);
        let (total, weights) = estimate(&locked, ["a", "b"].iter().map(|n| (*n, &m)));
        assert!(over_limit(total, LIMIT, weights).is_none());
    }
}
