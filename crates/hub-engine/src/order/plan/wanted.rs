//! `lifecycle.wants`: a selected component brings the components it
//! wants, and those theirs, into the selection. Wanting adds no edge of
//! the deploy graph: a wanted component runs where the order puts it.

use super::{Added, Relation};
use indexmap::IndexMap;
use std::collections::{HashSet, VecDeque};

/// Adds to `chosen` every component a chosen one wants, recursively, each
/// recorded in `added` with the first component found to want it. The
/// chosen ones are visited in `order` so that the record does not depend
/// on hashing.
pub(super) fn add(
    wants: &IndexMap<String, Vec<String>>,
    order: &[String],
    chosen: &mut HashSet<String>,
    added: &mut Vec<Added>,
) {
    if wants.is_empty() {
        return;
    }
    let mut queue: VecDeque<String> = order
        .iter()
        .filter(|name| chosen.contains(name.as_str()))
        .cloned()
        .collect();
    while let Some(name) = queue.pop_front() {
        for other in wants.get(&name).into_iter().flatten() {
            if chosen.insert(other.clone()) {
                added.push(Added {
                    name: other.clone(),
                    from: name.clone(),
                    relation: Relation::Wanted,
                });
                queue.push_back(other.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wants_are_followed_recursively_once() {
        let wants: IndexMap<String, Vec<String>> = [
            ("app".to_string(), vec!["cache".to_string()]),
            (
                "cache".to_string(),
                vec!["metrics".to_string(), "app".to_string()],
            ),
        ]
        .into_iter()
        .collect();
        let order: Vec<String> = ["metrics", "cache", "app"].map(String::from).to_vec();
        let mut chosen = HashSet::from(["app".to_string()]);
        let mut added = Vec::new();
        add(&wants, &order, &mut chosen, &mut added);
        let seen: Vec<String> = added.iter().map(ToString::to_string).collect();
        assert_eq!(
            seen,
            ["cache (wanted by `app`)", "metrics (wanted by `cache`)"]
        );
        assert_eq!(chosen.len(), 3);
    }
}
