use super::*;

fn param(name: &str, component: &str, value: &str) -> Parameter {
    Parameter {
        name: name.into(),
        component: component.into(),
        value: Some(Value::String(value.into())),
        ..Parameter::default()
    }
}

fn component(name: &str, params: &[&str]) -> Manifest {
    let mut manifest = Manifest::default();
    manifest.meta.name = name.into();
    manifest.parameters = params.iter().map(|p| param(p, name, "")).collect();
    manifest
}

fn stack(params: Vec<Parameter>) -> Manifest {
    Manifest {
        parameters: params,
        ..Manifest::default()
    }
}

fn names(found: &[Unread]) -> Vec<(&str, Option<&str>)> {
    found
        .iter()
        .map(|u| {
            (
                u.qualified.as_str(),
                u.close.as_ref().map(|(n, _)| n.as_str()),
            )
        })
        .collect()
}

#[test]
fn close_names_are_within_a_typo_and_the_nearest_wins() {
    let read = ["app.replicas", "app.replica.count", "dns.domain"];
    assert_eq!(
        close_name("app.replica", read.into_iter()),
        Some("app.replicas")
    );
    assert_eq!(
        close_name("dns.domian", read.into_iter()),
        Some("dns.domain")
    );
    assert_eq!(
        close_name("APP.REPLICAS", read.into_iter()),
        Some("app.replicas")
    );
    assert_eq!(close_name("app.replicas", read.into_iter()), None);
    assert_eq!(close_name("db.size", read.into_iter()), None);
    // Edits that change half of a short name are no typo.
    assert_eq!(close_name("y", ["x"].into_iter()), None);
    assert_eq!(close_name("ab", ["ac"].into_iter()), None);
    // Members of a numbered family are not typos of each other.
    assert_eq!(close_name("p10", ["p1", "p100"].into_iter()), None);
    assert_eq!(close_name("node2", ["node1"].into_iter()), None);
    // Two names as near: the first in order.
    assert_eq!(close_name("abc", ["abd", "abb"].into_iter()), Some("abb"));
}

#[test]
fn a_misspelt_name_is_unread_with_the_name_the_component_reads() {
    let doc = stack(vec![
        param("app.replica", "", "7"),
        param("app.replicas", "", "1"),
    ]);
    let reads = Reads::of(
        &doc,
        &doc.parameters,
        &[component("app", &["app.replicas"])],
    );
    let found = unread(&doc.parameters, &reads);
    assert_eq!(names(&found), [("app.replica", Some("app.replicas"))]);
    assert_eq!(found[0].close.as_ref().unwrap().1, "component `app`");
}

#[test]
fn qualified_parameters_match_names_of_the_same_component() {
    let doc = stack(vec![
        param("replica", "app", "7"),
        param("replicas", "app", "1"),
        param("replica", "db", "1"),
    ]);
    let reads = Reads::of(&doc, &doc.parameters, &[component("app", &["replicas"])]);
    let found = unread(&doc.parameters, &reads);
    // `replica|db`: `db` reads nothing, so no close name either.
    assert_eq!(
        names(&found),
        [("replica|app", Some("replicas|app")), ("replica|db", None)]
    );
}

#[test]
fn expressions_outputs_and_conditions_read_names() {
    let mut doc = stack(vec![
        param("dns.name", "", "demo"),
        param("dns.zone", "", "${dns.name}.example.com"),
        param("limit", "", "3"),
        param("used.by.cel", "", "x"),
        param("region", "", "eu"),
        param("flag.on", "", "true"),
        param("loose", "", "1"),
    ]);
    doc.outputs = vec![
        Output {
            name: "zone".into(),
            value: Some(Value::String("${dns.zone}".into())),
            ..Output::default()
        },
        Output {
            name: "region".into(),
            ..Output::default()
        },
    ];
    doc.lifecycle.requires.optional = vec!["flag.on:app".into()];
    let mut app = component("app", &["count"]);
    app.parameters[0].value = Some(Value::String("#{int(limit) + size(used.by.cel)}".into()));
    let reads = Reads::of(&doc, &doc.parameters, &[app]);
    let found = unread(&doc.parameters, &reads);
    assert_eq!(names(&found), [("loose", None)]);
}

#[test]
fn names_hub_reads_are_never_unread() {
    let doc = stack(vec![
        param("hub.deploymentId", "", "x"),
        param("cloud.region", "", "eu"),
        param("kubernetes.api.endpoint", "", "https://k"),
    ]);
    let reads = Reads::of(&doc, &doc.parameters, &[]);
    assert!(unread(&doc.parameters, &reads).is_empty());
}

#[test]
fn warnings_are_near_typos_only_with_a_close_name() {
    let typo = Unread {
        qualified: "app.replica".into(),
        close: Some(("app.replicas".into(), "component `app`".into())),
    };
    let warning = warning(&typo, None, Origin::Own);
    assert!(warning.near_typo);
    assert_eq!(warning.topic, Topic::UnreadParameter);
    assert!(warning.message.contains("`app.replica` is ignored"));
    assert!(warning.message.contains("did you mean `app.replicas`"));
    let plain = Unread {
        qualified: "loose".into(),
        close: None,
    };
    let warning = super::warning(&plain, None, Origin::Foreign);
    assert!(!warning.near_typo);
    assert!(warning.message.contains("set but never read"));
}

#[test]
fn a_name_differing_only_in_case_is_a_warning() {
    let unread = Unread {
        qualified: "certManager.namespace".into(),
        close: Some((
            "certmanager.namespace".into(),
            "component `cert-manager`".into(),
        )),
    };
    let warning = warning(&unread, None, Origin::Own);
    assert!(!warning.near_typo);
    assert!(warning
        .message
        .contains("did you mean `certmanager.namespace`"));
}
