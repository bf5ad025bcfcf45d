//! `lifecycle.order`: validation against `components:`, generation from
//! `depends`, and the merge of a child's order into its parent's.

use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderError {
    /// The order is not a permutation of the component names.
    Mismatch {
        components: Vec<String>,
        order: Vec<String>,
    },
    Undefined(Vec<String>),
    /// The cycle as a path that ends where it starts.
    Cycle(Vec<String>),
    /// In the child, `before` is listed ahead of `after`, which the parent
    /// deploys first.
    ParentConflict {
        before: String,
        after: String,
    },
}

/// The multiset of `order` must equal the multiset of `components`.
pub fn validate(components: &[String], order: &[String]) -> Result<(), OrderError> {
    let mut a: Vec<&String> = components.iter().collect();
    let mut b: Vec<&String> = order.iter().collect();
    a.sort();
    b.sort();
    if a == b {
        Ok(())
    } else {
        Err(OrderError::Mismatch {
            components: components.to_vec(),
            order: order.to_vec(),
        })
    }
}

/// The index of the first entry of `order` that is not one of `components`
/// or repeats an earlier entry.
pub fn first_stray_entry(order: &[String], components: &[String]) -> Option<usize> {
    let mut seen = HashSet::new();
    order
        .iter()
        .position(|name| !components.contains(name) || !seen.insert(name.as_str()))
}

/// Places each component after its dependencies: depth-first, dependencies in
/// the order they are declared, roots in declaration order. Dependencies on
/// names in `external` (components of a parent stack) do not constrain the
/// order; any other unknown name is an error.
pub fn generate(
    components: &[(String, Vec<String>)],
    external: &HashSet<&str>,
) -> Result<Vec<String>, OrderError> {
    let index: HashMap<&str, usize> = components
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.as_str(), i))
        .collect();
    let mut undefined: Vec<String> = Vec::new();
    for (_, depends) in components {
        for dep in depends {
            if !index.contains_key(dep.as_str())
                && !external.contains(dep.as_str())
                && !undefined.contains(dep)
            {
                undefined.push(dep.clone());
            }
        }
    }
    if !undefined.is_empty() {
        return Err(OrderError::Undefined(undefined));
    }
    let mut placer = Placer {
        components,
        index: &index,
        state: vec![Mark::New; components.len()],
        path: Vec::new(),
        order: Vec::with_capacity(components.len()),
    };
    for i in 0..components.len() {
        placer.visit(i)?;
    }
    Ok(placer.order)
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    New,
    InProgress,
    Placed,
}

struct Placer<'a> {
    components: &'a [(String, Vec<String>)],
    index: &'a HashMap<&'a str, usize>,
    state: Vec<Mark>,
    path: Vec<usize>,
    order: Vec<String>,
}

impl Placer<'_> {
    // An explicit stack keeps deep dependency chains off the call stack.
    fn visit(&mut self, root: usize) -> Result<(), OrderError> {
        if self.state[root] != Mark::New {
            return Ok(());
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        self.state[root] = Mark::InProgress;
        self.path.push(root);
        while let Some((node, next_dep)) = stack.pop() {
            let depends = &self.components[node].1;
            if let Some(dep) = depends.get(next_dep) {
                stack.push((node, next_dep + 1));
                let Some(&d) = self.index.get(dep.as_str()) else {
                    continue;
                };
                match self.state[d] {
                    Mark::Placed => {}
                    Mark::InProgress => return Err(OrderError::Cycle(self.cycle_through(d))),
                    Mark::New => {
                        self.state[d] = Mark::InProgress;
                        self.path.push(d);
                        stack.push((d, 0));
                    }
                }
            } else {
                self.state[node] = Mark::Placed;
                self.path.pop();
                self.order.push(self.components[node].0.clone());
            }
        }
        Ok(())
    }

    fn cycle_through(&self, start: usize) -> Vec<String> {
        let from = self.path.iter().position(|&n| n == start).unwrap_or(0);
        self.path[from..]
            .iter()
            .chain(std::iter::once(&start))
            .map(|&n| self.components[n].0.clone())
            .collect()
    }
}

/// Merges a child's order into its parent's (anchors are the components the
/// child overrides): child-only components listed before an anchor go right
/// before it, trailing ones go to the end.
pub fn merge(parent: &[String], child: &[String]) -> Result<Vec<String>, OrderError> {
    let position: HashMap<&str, usize> = parent
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut anchors: Vec<(usize, usize)> = Vec::new(); // (child index, parent index)
    for (ci, name) in child.iter().enumerate() {
        if let Some(&pi) = position.get(name.as_str()) {
            if let Some(&(_, last)) = anchors.last() {
                if pi < last {
                    return Err(OrderError::ParentConflict {
                        before: parent[last].clone(),
                        after: name.clone(),
                    });
                }
            }
            anchors.push((ci, pi));
        }
    }
    let mut out = Vec::with_capacity(parent.len() + child.len());
    let (mut p_from, mut c_from) = (0, 0);
    for &(ci, pi) in &anchors {
        out.extend_from_slice(&parent[p_from..pi]);
        out.extend_from_slice(&child[c_from..=ci]);
        p_from = pi + 1;
        c_from = ci + 1;
    }
    out.extend_from_slice(&parent[p_from..]);
    out.extend_from_slice(&child[c_from..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stray_entries_are_unknown_or_repeated() {
        let components = names("a,b,c");
        assert_eq!(first_stray_entry(&names("a,x,c"), &components), Some(1));
        assert_eq!(first_stray_entry(&names("a,b,a"), &components), Some(2));
        assert_eq!(first_stray_entry(&names("c,b,a"), &components), None);
        assert_eq!(first_stray_entry(&names("a,b"), &components), None);
    }

    fn names(s: &str) -> Vec<String> {
        s.split(',')
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    }

    fn comps(spec: &str) -> Vec<(String, Vec<String>)> {
        spec.split(';')
            .map(|c| {
                let (name, deps) = c.split_once(':').unwrap_or((c, ""));
                (name.to_string(), names(deps))
            })
            .collect()
    }

    #[test]
    fn generation_table() {
        let none = HashSet::new();
        for (spec, expected) in [
            ("a;b;c", "a,b,c"),
            ("a:c;b;c", "c,a,b"),
            ("a:b,c;b:c;c", "c,b,a"),
            ("a:c,b;b;c", "c,b,a"),
            ("c:b;b:a;a", "a,b,c"),
            ("x:a;a:b;b", "b,a,x"),
        ] {
            assert_eq!(
                generate(&comps(spec), &none).unwrap(),
                names(expected),
                "{spec}"
            );
        }
    }

    #[test]
    fn generation_errors() {
        let none = HashSet::new();
        assert_eq!(
            generate(&comps("a:zz;b:zz,yy"), &none),
            Err(OrderError::Undefined(names("zz,yy")))
        );
        assert_eq!(
            generate(&comps("a:b;b:a"), &none),
            Err(OrderError::Cycle(names("a,b,a")))
        );
        assert_eq!(
            generate(&comps("a:b;b:c;c:a"), &none),
            Err(OrderError::Cycle(names("a,b,c,a")))
        );
        assert_eq!(
            generate(&comps("a:a"), &none),
            Err(OrderError::Cycle(names("a,a")))
        );
    }

    #[test]
    fn external_dependencies_are_ignored() {
        let external = HashSet::from(["base"]);
        assert_eq!(
            generate(&comps("a:base;b:a"), &external).unwrap(),
            names("a,b")
        );
    }

    #[test]
    fn deep_chain_does_not_overflow() {
        let n = 100_000;
        let components: Vec<(String, Vec<String>)> = (0..n)
            .map(|i| {
                (
                    format!("c{i}"),
                    if i + 1 < n {
                        vec![format!("c{}", i + 1)]
                    } else {
                        vec![]
                    },
                )
            })
            .collect();
        let order = generate(&components, &HashSet::new()).unwrap();
        assert_eq!(order.first().map(String::as_str), Some("c99999"));
    }

    #[test]
    fn merge_table() {
        for (p, c, expected) in [
            ("a,b,c,d", "x,y", "a,b,c,d,x,y"),
            ("a,b,c,d", "x,b,y", "a,x,b,c,d,y"),
            ("a,b,c,d", "b", "a,b,c,d"),
            ("a,b,c,d", "x,a", "x,a,b,c,d"),
            ("a,b,c,d", "d,x", "a,b,c,d,x"),
            ("a,b,c,d,e", "b,x,d", "a,b,c,x,d,e"),
            ("a,b,c,d", "p,q,c,r", "a,b,p,q,c,d,r"),
            ("a,b,c", "x,a,y,b,z,c,w", "x,a,y,b,z,c,w"),
            ("", "x,y", "x,y"),
            ("a,b", "", "a,b"),
        ] {
            assert_eq!(
                merge(&names(p), &names(c)).unwrap(),
                names(expected),
                "{p} + {c}"
            );
        }
    }

    #[test]
    fn merge_conflicts() {
        assert_eq!(
            merge(&names("a,b,c,d"), &names("d,b")),
            Err(OrderError::ParentConflict {
                before: "d".into(),
                after: "b".into()
            })
        );
        assert_eq!(
            merge(&names("a,b,c,d"), &names("c,x,a")),
            Err(OrderError::ParentConflict {
                before: "c".into(),
                after: "a".into()
            })
        );
    }

    #[test]
    fn validation() {
        assert!(validate(&names("a,b"), &names("b,a")).is_ok());
        assert!(validate(&names(""), &names("")).is_ok());
        assert!(validate(&names("a"), &names("")).is_err());
        assert!(validate(&names("a"), &names("a,b")).is_err());
    }
}
