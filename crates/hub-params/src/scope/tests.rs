use super::*;
use crate::{lock, LockOptions};

fn locked(stack_yaml: &str) -> Locked {
    let stack: Manifest = yaml_serde::from_str(stack_yaml).expect("stack");
    let overrides = IndexMap::new();
    let environment = |_: &str| None;
    lock(
        &stack,
        LockOptions::new(&overrides, &environment),
        &mut Warnings::default(),
    )
    .expect("locks")
}

fn output(component: &str, name: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        component: component.into(),
        name: name.into(),
        value: Some(Value::String(value.into())),
        kind: String::new(),
        component_kind: component.into(),
    }
}

fn expand(
    locked: &Locked,
    name: &str,
    depends: &[&str],
    manifest: &str,
    outputs: &[CapturedOutput],
) -> Result<Vec<ExpandedParam>, ParamsError> {
    let manifest: Manifest = yaml_serde::from_str(manifest).expect("component");
    let depends: Vec<String> = depends.iter().map(|d| d.to_string()).collect();
    let scope = ComponentScope {
        name,
        depends: &depends,
        manifest: &manifest,
        outputs,
        provides: String::new(),
        source: None,
    };
    expand_component(locked, &scope, &mut Warnings::default())
}

fn values(params: &[ExpandedParam]) -> Vec<(String, String)> {
    params
        .iter()
        .map(|p| (p.name.clone(), substitution_text(p.value.as_ref())))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The example of deploy.md §6.3.
#[test]
fn spec_example() {
    let stack = locked("parameters:\n- {name: dns.domain, value: example.com}\n");
    let outputs = [
        output("a1", "endpoint", "e1"),
        output("a2", "endpoint", "e2"),
    ];
    let manifest = "meta: {name: b, kind: b}\nparameters:\n- {name: endpoint}\n- {name: dns.domain, env: DOMAIN}\n- {name: url, value: 'https://${dns.domain}/x'}\n- {name: mode, default: fast}\n- {name: opt, empty: allow}\n";
    let params = expand(&stack, "b", &["a2"], manifest, &outputs).expect("expands");
    assert_eq!(
        values(&params),
        pairs(&[
            ("hub.componentName", "b"),
            ("endpoint", "e2"),
            ("dns.domain", "example.com"),
            ("url", "https://example.com/x"),
            ("mode", "fast"),
            ("opt", ""),
            ("hub.provides", ""),
        ])
    );
    assert_eq!(params[2].env, "DOMAIN");
    assert_eq!(params.last().map(|p| p.env.as_str()), Some("HUB_PROVIDES"));
}

/// The worked example of deploy.md §7.10, and the latest producer
/// winning a plain name.
#[test]
fn precedence() {
    let stack = locked("parameters:\n- {name: dns.domain, value: stack.com}\n- {name: dns.domain, component: c3, value: q.com}\n");
    let outputs = [output("a", "dns.domain", "a.com")];
    let manifest = "meta: {kind: k}\nparameters:\n- {name: dns.domain}\n";
    let value_in = |name: &str, depends: &[&str], outputs: &[CapturedOutput]| {
        let params = expand(&stack, name, depends, manifest, outputs).expect("expands");
        substitution_text(params[1].value.as_ref())
    };
    assert_eq!(
        value_in("b", &[], &outputs),
        "a.com",
        "an output beats an unqualified stack parameter"
    );
    assert_eq!(
        value_in("c3", &[], &outputs),
        "q.com",
        "name|component first"
    );
    assert_eq!(value_in("b", &["a"], &outputs), "a.com");
    let two = [
        output("a", "dns.domain", "a.com"),
        output("z", "dns.domain", "z.com"),
    ];
    assert_eq!(
        value_in("b", &[], &two),
        "z.com",
        "the latest producer wins a plain name"
    );
    assert_eq!(
        value_in("b", &["a"], &two),
        "a.com",
        "depends wins over the plain name"
    );
}

#[test]
fn hub_parameters_are_always_derivable() {
    let stack = locked("parameters: []\n");
    let manifest = "meta: {name: c}\nparameters:\n- {name: hub.deploymentId, env: ID}\n- {name: hub.extra}\n- {name: hub.provides, env: MINE}\n";
    let params = expand(&stack, "c", &[], manifest, &[]).expect("expands");
    let names: Vec<(&str, &str)> = params
        .iter()
        .map(|p| (p.name.as_str(), p.env.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("hub.componentName", ""),
            ("hub.deploymentId", "ID"),
            ("hub.extra", ""),
            ("hub.provides", "MINE")
        ]
    );
}

#[test]
fn outputs_of_the_same_kind_are_invisible() {
    let stack = locked("parameters: []\n");
    let mut other = output("pg1", "host", "h1");
    other.component_kind = "postgresql".into();
    let manifest =
        "meta: {name: pg2, kind: postgresql}\nparameters:\n- {name: host, default: own}\n";
    let params = expand(&stack, "pg2", &[], manifest, &[other]).expect("expands");
    assert_eq!(substitution_text(params[1].value.as_ref()), "own");
}

#[test]
fn links_expand_with_the_component_lookup_and_cycles_are_reported() {
    let stack = locked("parameters:\n- {name: img, kind: link, value: '${a:host}/#{size(tag) > 0 ? tag : \"latest\"}'}\n- {name: tag, value: v1}\n- {name: l1, kind: link, value: '${l2}'}\n- {name: l2, kind: link, value: 'x${l1}'}\n");
    let manifest = "meta: {name: b, kind: b}\nparameters:\n- {name: img}\n";
    let params =
        expand(&stack, "b", &["a"], manifest, &[output("a", "host", "h")]).expect("expands");
    assert_eq!(substitution_text(params[1].value.as_ref()), "h/v1");
    let error = expand(
        &stack,
        "b",
        &[],
        "meta: {name: b}\nparameters:\n- {name: l1}\n",
        &[],
    )
    .expect_err("cycle");
    assert!(error.to_string().contains("l1 → l2 → l1"), "{error}");
}

#[test]
fn secrets_follow_their_values() {
    let stack = locked("parameters:\n- {name: db.password, value: hunter2}\n");
    let mut secret = output("v", "vault.root", "s");
    secret.kind = "secret/token".into();
    let manifest = "meta: {name: c}\nparameters:\n- {name: db.password}\n- {name: dsn, value: 'u:${db.password}'}\n- {name: vault.root}\n- {name: plain, value: x}\n";
    let params = expand(&stack, "c", &[], manifest, &[secret]).expect("expands");
    let flags: Vec<bool> = params.iter().map(|p| p.secret).collect();
    assert_eq!(flags, vec![false, true, true, true, false, false]);
}

/// A lookup scope over names `n0`… with qualified (`n1|c`) and
/// dependency (`d:n2`) forms, values plain or templates reading other
/// names (cycles and unknown names included), some secret.
mod layered {
    use super::super::*;
    use crate::{LockedParam, Origin};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct Entry {
        key: String,
        value: String,
        secret: bool,
    }

    fn key() -> impl Strategy<Value = String> {
        (0usize..8, 0usize..3).prop_map(|(n, form)| match form {
            0 => format!("n{n}"),
            1 => format!("n{n}|c"),
            _ => format!("d:n{n}"),
        })
    }

    fn value() -> impl Strategy<Value = String> {
        (0usize..10, 0usize..4).prop_map(|(n, form)| match form {
            0 => format!("plain{n}"),
            1 => format!("${{n{n}}}-x"),
            2 => format!("#{{n{n} + 'y'}}"),
            _ => format!("a${{n{n}}}b${{n{}}}", (n + 3) % 10),
        })
    }

    fn entries(size: usize) -> impl Strategy<Value = Vec<Entry>> {
        proptest::collection::vec(
            (key(), value(), any::<bool>()).prop_map(|(key, value, secret)| Entry {
                key,
                value,
                secret,
            }),
            0..size,
        )
    }

    fn locked_param(entry: &Entry) -> LockedParam {
        let value = Some(Value::String(entry.value.clone()));
        LockedParam::new(&entry.key, "", value, Origin::Value).with_secret(entry.secret)
    }

    /// What a template expands to, named by keys rather than entry
    /// numbers (which differ between the two tables).
    fn outcome(
        table: &mut Table<'_>,
        lazy: &Lazy,
        secret: &Secrets<'_>,
        template: &str,
    ) -> (Option<String>, bool, Vec<String>) {
        let scope = Scope {
            qualifier: "c".into(),
            depends: vec!["d".into()],
        };
        let cel = Cel::shared();
        let (text, tainted, problems) =
            expand_in_scope(table, lazy, &scope, template, &cel, secret);
        let mut problems: Vec<String> = problems
            .iter()
            .map(|problem| match problem {
                graph::ExpandProblem::Unknown { entry, name } => {
                    format!("unknown {name} in {}", table.key(*entry))
                }
                graph::ExpandProblem::Cel { entry, source, .. } => {
                    format!("cel {source} in {}", table.key(*entry))
                }
                graph::ExpandProblem::Cycle { path } => {
                    let mut keys: Vec<&str> = path.iter().map(|&e| table.key(e)).collect();
                    keys.sort_unstable();
                    format!("cycle {keys:?}")
                }
            })
            .collect();
        problems.sort();
        (text, tainted, problems)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The table of a component sits on the locked parameters and
        /// expands only the lazy entries a template reaches; the table
        /// it replaces copied every parameter and handed every lazy
        /// entry to the evaluation. Both give the same text, secrecy
        /// and problems.
        #[test]
        fn layered_lookup_expands_as_the_flat_copy_did(
            stack in entries(24),
            own in entries(6),
            template in value(),
        ) {
            let locked = Locked {
                params: stack
                    .iter()
                    .map(|e| {
                        let p = locked_param(e);
                        (p.shared_key(), p)
                    })
                    .collect(),
                drift: Vec::new(),
            };
            let empty = Locked::default();

            let mut layered = Table::on(&locked.params, own.len());
            let mut layered_secret = Secrets::on(&locked);
            let mut flat = Table::default();
            let mut flat_secret = Secrets::on(&empty);
            for (key, p) in &locked.params {
                let entry = flat.set(key, p.value.clone());
                flat_secret.mark(entry, p.secret);
            }
            for e in &own {
                let value = Some(Value::String(e.value.clone()));
                let entry = layered.set(&e.key, value.clone());
                layered_secret.mark(entry, e.secret);
                let entry = flat.set(&e.key, value);
                flat_secret.mark(entry, e.secret);
            }
            let layered_lazy = Lazy::of(&layered);
            // Every entry of the flat table is its own, so all its
            // templates are listed as lazy, as before.
            let flat_lazy = Lazy::of(&flat);

            for probe in ["n0", "n1", "n2", "n7", "zz"] {
                let scope = Scope { qualifier: "c".into(), depends: vec!["d".into()] };
                let a = layered.find(probe, &scope).and_then(|e| layered.value(e)).cloned();
                let b = flat.find(probe, &scope).and_then(|e| flat.value(e)).cloned();
                prop_assert_eq!(a, b);
            }
            prop_assert_eq!(
                outcome(&mut layered, &layered_lazy, &layered_secret, &template),
                outcome(&mut flat, &flat_lazy, &flat_secret, &template)
            );
        }
    }
}

/// `Table::find` on the locked parameters as a base: one hash per key of
/// the chain, against the lookup of each key built as text.
mod lookup_by_pieces {
    use crate::table::{Scope, Table};
    use crate::{LockedParam, LockedParams, Origin};
    use proptest::prelude::*;

    /// [`Table::find`] as it was: each key built as text, then looked up
    /// in the table and its base by text.
    fn find_by_text(table: &Table<'_>, name: &str, scope: &Scope) -> Option<usize> {
        if !scope.qualifier.is_empty() {
            if let Some(entry) = table.entry(&format!("{name}|{}", scope.qualifier)) {
                return Some(entry);
            }
        }
        for dep in &scope.depends {
            if let Some(entry) = table.entry(&format!("{dep}:{name}")) {
                return Some(entry);
            }
        }
        table.entry(name)
    }

    fn param(key: &str) -> LockedParam {
        LockedParam::new(key, "", None, Origin::Unset)
    }

    /// Short names over an alphabet with the separators, so that keys
    /// built from different pieces can make the same text.
    fn word() -> impl Strategy<Value = String> {
        "[ab:|]{0,3}"
    }

    /// Keys as the lookup chain builds them, and some arbitrary ones.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            word(),
            (word(), word()).prop_map(|(n, q)| format!("{n}|{q}")),
            (word(), word()).prop_map(|(d, n)| format!("{d}:{n}")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The lookup by pieces and one hash finds the entry the lookup
        /// by built text found, in a table on a base and in one without.
        #[test]
        fn lookup_by_pieces_finds_what_the_built_keys_found(
            base_keys in proptest::collection::vec(key(), 0..24),
            own_keys in proptest::collection::vec(key(), 0..12),
            names in proptest::collection::vec(word(), 1..8),
            qualifier in word(),
            depends in proptest::collection::vec(word(), 0..3),
        ) {
            let base: LockedParams = base_keys
                .iter()
                .map(|k| (k.as_str().into(), param(k)))
                .collect();
            let mut layered = Table::on(&base, own_keys.len());
            let mut alone = Table::default();
            for key in &own_keys {
                layered.set(key, None);
                alone.set(key, None);
            }
            let scope = Scope { qualifier, depends };
            for name in &names {
                for table in [&layered, &alone] {
                    prop_assert_eq!(table.find(name, &scope), find_by_text(table, name, &scope));
                }
            }
            for key in base_keys.iter().chain(&own_keys) {
                let scope = Scope::default();
                prop_assert_eq!(layered.find(key, &scope), layered.entry(key));
            }
        }
    }
}
