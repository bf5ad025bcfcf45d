//! What a run selects: the `-c` entries (`app`, `app+`, `+app`), the
//! components `--affected` found, and what they pull in: along the deploy
//! graph for `app+`/`+app`, and through `lifecycle.wants`. Wanting adds no
//! edge of the deploy graph: a wanted component runs where the order puts
//! it.

use super::edges::{Reason, Upstream};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet, VecDeque};

/// `-c`, `-o`, `-l`, `--with-deps` and `--with-dependents` as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `-c` entries as written: `app`, `app+`, `+app` or `+app+`.
    pub components: Vec<String>,
    pub offset: Option<String>,
    pub limit: Option<String>,
    /// `--with-deps`: every `-c` entry as if written `app+`.
    pub with_deps: bool,
    /// `--with-dependents`: every `-c` entry as if written `+app`.
    pub with_dependents: bool,
    /// `--affected`: the components whose inputs changed in git, each
    /// with why; `None` without the flag (`Some` of none selects none).
    pub affected: Option<Vec<Chosen>>,
}

/// A component selected by something other than its name (`--affected`),
/// with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub name: String,
    /// `` `app/main.tf` changed ``, `` parameter `x` changed in `params.yaml` ``.
    pub why: String,
}

impl Selection {
    /// `-c` or `-o`: a run that needs a state.
    pub fn is_partial(&self) -> bool {
        self.restricts() || self.offset.is_some()
    }

    /// `-c` or `--affected`: only the components they select run.
    pub fn restricts(&self) -> bool {
        !self.components.is_empty() || self.affected.is_some()
    }

    /// The `-c` entries a saved plan replays: those given, then each
    /// component `--affected` selected, by name.
    pub fn replayed(&self) -> Vec<String> {
        let affected = self.affected.iter().flatten().map(|c| c.name.clone());
        self.components.iter().cloned().chain(affected).collect()
    }

    /// The `-c` entries, parsed, with the list-wide flags applied.
    pub fn picks(&self) -> impl Iterator<Item = Pick<'_>> + '_ {
        self.components.iter().map(|entry| {
            let pick = Pick::parse(entry);
            Pick {
                dependencies: pick.dependencies || self.with_deps,
                dependents: pick.dependents || self.with_dependents,
                ..pick
            }
        })
    }

    /// The `-c` entries with those naming one of `taken` widened to
    /// `+name`: what takes their dependents down in the same run.
    pub fn widened_to_dependents(&self, taken: &[&str]) -> Vec<String> {
        self.components
            .iter()
            .map(|entry| {
                let pick = Pick::parse(entry);
                match !pick.dependents && taken.contains(&pick.name) {
                    true => format!("+{entry}"),
                    false => entry.clone(),
                }
            })
            .collect()
    }

    /// Some `-c` entry pulls in more components than it names.
    fn widens(&self) -> bool {
        self.picks().any(|p| p.dependencies || p.dependents)
    }

    /// The `-c` entries, then each component `--affected` selected as an
    /// entry with the list-wide flags applied.
    fn all_picks(&self) -> Vec<Pick<'_>> {
        let affected = self.affected.iter().flatten().map(|c| Pick {
            name: c.name.as_str(),
            dependencies: self.with_deps,
            dependents: self.with_dependents,
        });
        self.picks().chain(affected).collect()
    }
}

/// One `-c` entry: `app` (only it), `app+` (and what it depends on),
/// `+app` (and what depends on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick<'a> {
    pub name: &'a str,
    pub dependencies: bool,
    pub dependents: bool,
}

impl<'a> Pick<'a> {
    pub fn parse(entry: &'a str) -> Pick<'a> {
        let after = entry.strip_prefix('+');
        let name = after.unwrap_or(entry);
        let before = name.strip_suffix('+');
        Pick {
            name: before.unwrap_or(name),
            dependencies: before.is_some(),
            dependents: after.is_some(),
        }
    }
}

/// The entry as `+app+` would be written.
impl std::fmt::Display for Pick<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plus = |on: bool| if on { "+" } else { "" };
        write!(
            f,
            "{}{}{}",
            plus(self.dependents),
            self.name,
            plus(self.dependencies)
        )
    }
}

/// A component a `-c` entry pulled in besides the one it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub name: String,
    /// The selected component it was reached from.
    pub from: String,
    pub relation: Relation,
}

/// How an added component is related to the one it was reached from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// `from` depends on it (`from+`).
    Dependency,
    /// It depends on `from` (`+from`).
    Dependent,
    /// `from` wants it (`lifecycle.wants`).
    Wanted,
}

impl Relation {
    /// As the JSON plan writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Dependency => "dependency",
            Relation::Dependent => "dependent",
            Relation::Wanted => "wanted",
        }
    }
}

impl Added {
    /// Why it is selected, as `hub plan` says it: `wanted by app`.
    pub fn why(&self) -> String {
        match self.relation {
            Relation::Dependency => format!("`{}` depends on it", self.from),
            Relation::Dependent => format!("it depends on `{}`", self.from),
            Relation::Wanted => format!("wanted by {}", self.from),
        }
    }
}

impl std::fmt::Display for Added {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.relation {
            Relation::Wanted => write!(f, "{} (wanted by `{}`)", self.name, self.from),
            _ => write!(f, "{} ({})", self.name, self.why()),
        }
    }
}

/// The components the `-c` entries name, with those `app+` and `+app`
/// pull in. "Depends" is every edge of the deploy graph except the
/// written order's: `depends`, a capability required from a provider, an
/// output read. An order edge only says "comes later in the list the
/// author wrote"; following it, `app+` would pull in every component
/// written before `app`, which is what `-l app` already says.
pub(super) fn resolve(
    selection: &Selection,
    after: &HashMap<String, Upstream>,
    dependents: &HashMap<String, Vec<String>>,
) -> (HashSet<String>, Vec<Added>) {
    let picks = selection.all_picks();
    let mut chosen: HashSet<String> = picks.iter().map(|p| p.name.to_string()).collect();
    let mut found: HashSet<String> = HashSet::new();
    let mut added = Vec::new();
    let upstream = |name: &str| -> Vec<String> {
        let Some(up) = after.get(name) else {
            return Vec::new();
        };
        up.names
            .iter()
            .zip(&up.reasons)
            .filter(|(_, reasons)| reasons.iter().any(|r| *r != Reason::Order))
            .map(|(n, _)| n.clone())
            .collect()
    };
    let downstream = |name: &str| -> Vec<String> {
        dependents
            .get(name)
            .into_iter()
            .flatten()
            .filter(|d| upstream(d).iter().any(|u| u == name))
            .cloned()
            .collect()
    };
    for pick in picks {
        let walks: [(bool, Relation, &Neighbours); 2] = [
            (pick.dependencies, Relation::Dependency, &upstream),
            (pick.dependents, Relation::Dependent, &downstream),
        ];
        for (wanted, relation, next) in walks {
            if !wanted {
                continue;
            }
            for name in closure(pick.name, next) {
                if chosen.contains(name.as_str()) || !found.insert(name.clone()) {
                    continue;
                }
                added.push(Added {
                    name,
                    from: pick.name.to_string(),
                    relation,
                });
            }
        }
    }
    chosen.extend(found);
    (chosen, added)
}

/// The components one step away from a component in some direction.
type Neighbours<'a> = dyn Fn(&str) -> Vec<String> + 'a;

/// Every component reachable from `start` through `next`, nearest first.
fn closure(start: &str, next: &Neighbours) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::from([start.to_string()]);
    let mut queue = VecDeque::from([start.to_string()]);
    let mut found = Vec::new();
    while let Some(name) = queue.pop_front() {
        for neighbour in next(&name) {
            if seen.insert(neighbour.clone()) {
                found.push(neighbour.clone());
                queue.push_back(neighbour);
            }
        }
    }
    found
}

/// The entries `hub plan` shows as requested, when the selection says
/// more than the names it lists: a widened `-c` entry, `--affected`, or a
/// component a selected one wants. Empty otherwise.
pub(super) fn requested(selection: &Selection, added: &[Added]) -> Vec<String> {
    if !selection.widens() && selection.affected.is_none() && added.is_empty() {
        return Vec::new();
    }
    let mut requested: Vec<String> = selection.picks().map(|p| p.to_string()).collect();
    if selection.affected.is_some() {
        let mut flags = vec!["--affected"];
        flags.extend(selection.with_deps.then_some("--with-deps"));
        flags.extend(selection.with_dependents.then_some("--with-dependents"));
        requested.push(flags.join(" "));
    }
    requested
}

/// Adds to `chosen` every component a chosen one wants, recursively, each
/// recorded in `added` with the first component found to want it. The
/// chosen ones are visited in `order` so that the record does not depend
/// on hashing.
pub(super) fn add_wanted(
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
        add_wanted(&wants, &order, &mut chosen, &mut added);
        let seen: Vec<String> = added.iter().map(ToString::to_string).collect();
        assert_eq!(
            seen,
            ["cache (wanted by `app`)", "metrics (wanted by `cache`)"]
        );
        assert_eq!(chosen.len(), 3);
    }
}
