use super::*;
use hub_manifest::diag::Warnings;
use hub_params::Origin;
use hub_state::{parse, render, State};
use std::fs;
use tempfile::TempDir;
use yaml_serde::Value;

/// A folder holding `files` (path, content).
fn tree(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        write(dir.path(), path, content);
    }
    dir
}

fn write(dir: &Path, path: &str, content: &str) {
    let path = dir.join(path);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
}

fn digest(dir: &TempDir) -> String {
    folder_digest(dir.path()).expect("digest")
}

/// Something done to a folder.
type Edit = dyn FnOnce(&Path);

const FILES: &[(&str, &str)] = &[
    ("Makefile", "deploy:\n\ttrue\n"),
    ("main.tf", "resource {}\n"),
    ("modules/net/vpc.tf", "vpc {}\n"),
];

/// The digest of `FILES` after `change` was applied to a fresh copy.
fn changed_by(change: impl FnOnce(&Path)) -> String {
    let dir = tree(FILES);
    change(dir.path());
    digest(&dir)
}

#[test]
fn the_same_tree_has_the_same_digest() {
    let first = tree(FILES);
    let reversed: Vec<_> = FILES.iter().rev().copied().collect();
    let second = tree(&reversed);
    assert_eq!(digest(&first), digest(&second));
    assert_eq!(digest(&first), digest(&first));
    assert!(digest(&first).starts_with("sha256:"));
    assert_eq!(digest(&first).len(), "sha256:".len() + 64);
}

#[test]
fn content_new_files_and_renames_change_the_digest() {
    let original = changed_by(|_| ());
    let changes: [(&str, Box<Edit>); 5] = [
        (
            "content",
            Box::new(|d| write(d, "main.tf", "resource { x }\n")),
        ),
        ("new file", Box::new(|d| write(d, "vars.tf", ""))),
        (
            "rename",
            Box::new(|d| fs::rename(d.join("main.tf"), d.join("main2.tf")).expect("rename")),
        ),
        (
            "move to a folder",
            Box::new(|d| {
                fs::rename(d.join("modules/net/vpc.tf"), d.join("modules/vpc.tf")).expect("rename")
            }),
        ),
        (
            "removal",
            Box::new(|d| fs::remove_file(d.join("main.tf")).expect("rm")),
        ),
    ];
    for (what, change) in changes {
        assert_ne!(changed_by(change), original, "{what}");
    }
}

#[test]
fn file_boundaries_cannot_be_confused() {
    let one = tree(&[("ab", "c")]);
    let other = tree(&[("a", "bc")]);
    assert_ne!(digest(&one), digest(&other));
    let empty = tree(&[("a", ""), ("b", "x")]);
    let moved = tree(&[("a", "x"), ("b", "")]);
    assert_ne!(digest(&empty), digest(&moved));
}

#[cfg(unix)]
#[test]
fn the_executable_bit_changes_the_digest() {
    use std::os::unix::fs::PermissionsExt;
    let original = changed_by(|_| ());
    let executable = changed_by(|d| {
        fs::set_permissions(d.join("main.tf"), fs::Permissions::from_mode(0o755)).expect("chmod")
    });
    assert_ne!(executable, original);
    let other_read_bits = changed_by(|d| {
        fs::set_permissions(d.join("main.tf"), fs::Permissions::from_mode(0o600)).expect("chmod")
    });
    assert_eq!(other_read_bits, original);
}

#[cfg(unix)]
#[test]
fn symlinks_are_hashed_by_their_target_text() {
    use std::os::unix::fs::symlink;
    let link =
        |target: &'static str| move |d: &Path| symlink(target, d.join("current")).expect("symlink");
    let to_main = changed_by(link("main.tf"));
    assert_eq!(to_main, changed_by(link("main.tf")));
    assert_ne!(to_main, changed_by(link("modules")));
    assert_ne!(to_main, changed_by(|_| ()));
    // Not followed: a change behind the link is seen once, at its file.
    let behind = changed_by(|d| {
        link("main.tf")(d);
        write(d, "main.tf", "resource { x }\n");
    });
    let plain = changed_by(|d| write(d, "main.tf", "resource { x }\n"));
    assert_ne!(behind, to_main);
    assert_ne!(behind, plain);
    // A link to a folder is not walked into.
    let outside = tree(&[("big", "outside")]);
    let target = outside.path().to_path_buf();
    let to_outside = |d: &Path| symlink(&target, d.join("ext")).expect("symlink");
    let before = changed_by(to_outside);
    write(outside.path(), "big", "changed outside");
    assert_eq!(changed_by(to_outside), before);
    // A dangling link is a link like any other.
    assert_ne!(changed_by(link("gone")), changed_by(|_| ()));
}

#[cfg(unix)]
#[test]
fn a_folder_given_through_a_symlink_is_walked() {
    let dir = tree(FILES);
    let parent = tempfile::tempdir().expect("tempdir");
    let linked = parent.path().join("component");
    std::os::unix::fs::symlink(dir.path(), &linked).expect("symlink");
    assert_eq!(folder_digest(&linked).expect("digest"), digest(&dir));
}

#[test]
fn hidden_files_count() {
    let original = changed_by(|_| ());
    let lock = changed_by(|d| write(d, ".terraform.lock.hcl", "provider {}\n"));
    assert_ne!(lock, original);
    let nested = changed_by(|d| write(d, ".config/settings", "x"));
    assert_ne!(nested, original);
}

#[test]
fn git_ignored_files_count() {
    let with_gitignore = changed_by(|d| write(d, ".gitignore", "*.tfstate\n"));
    let with_state = changed_by(|d| {
        write(d, ".gitignore", "*.tfstate\n");
        write(d, "terraform.tfstate", "{}");
    });
    assert_ne!(with_state, with_gitignore);
}

#[test]
fn git_folders_do_not_count() {
    let original = changed_by(|_| ());
    let with_git = changed_by(|d| {
        write(d, ".git/HEAD", "ref: refs/heads/main\n");
        write(d, "modules/.git", "gitdir: ../.git/modules/x\n");
    });
    assert_eq!(with_git, original);
}

#[test]
fn hubignored_files_do_not_count() {
    let ignore = |d: &Path| write(d, IGNORE_FILE, ".terraform/\n*.log\n!keep.log\n");
    let with_ignore = changed_by(ignore);
    let with_ignored = changed_by(|d| {
        ignore(d);
        write(d, ".terraform/providers/aws", "binary");
        write(d, "deploy.log", "output");
        write(d, "modules/net/trace.log", "output");
    });
    assert_eq!(with_ignored, with_ignore);
    let with_kept = changed_by(|d| {
        ignore(d);
        write(d, "keep.log", "kept");
    });
    assert_ne!(with_kept, with_ignore);
    // A nested `.hubignore` applies below its folder.
    let nested = |d: &Path| write(d, "modules/.hubignore", "cache\n");
    let nested_ignored = changed_by(|d| {
        nested(d);
        write(d, "modules/net/cache", "x");
    });
    assert_eq!(nested_ignored, changed_by(nested));
    // The `.hubignore` itself counts.
    assert_ne!(with_ignore, changed_by(|_| ()));
}

#[test]
fn a_missing_folder_is_an_error() {
    let dir = tree(&[("file", "x")]);
    let missing = dir.path().join("nowhere");
    let error = folder_digest(&missing).unwrap_err();
    assert!(
        matches!(error, FingerprintError::NoFolder { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("nowhere"), "{error}");
    assert_eq!(*error.location().file, *missing);
    assert!(error.hint().is_some());
    let file = dir.path().join("file");
    assert!(matches!(
        folder_digest(&file),
        Err(FingerprintError::NoFolder { .. })
    ));
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let dir = tree(&[]);
    let gone = dir.path().join("gone.tf");
    let error = hash_file(&mut Sha256::new(), &gone, b"gone.tf", None).unwrap_err();
    assert!(matches!(error, FingerprintError::Read { .. }), "{error}");
    assert!(error.to_string().contains("gone.tf"), "{error}");
    assert!(error.hint().is_some_and(|h| h.contains(IGNORE_FILE)));
}

#[test]
fn a_broken_hubignore_is_an_error_naming_it() {
    let dir = tree(&[(IGNORE_FILE, "ok\n[z-a]\n")]);
    let error = folder_digest(dir.path()).unwrap_err();
    assert!(matches!(error, FingerprintError::Walk { .. }), "{error}");
    assert!(error.to_string().contains(IGNORE_FILE), "{error}");
}

fn param(name: &str, value: Value, env: &str) -> ExpandedParam {
    ExpandedParam {
        name: name.into(),
        value: Some(value),
        env: env.into(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }
}

fn text(value: &str) -> Value {
    Value::String(value.into())
}

fn params() -> Vec<ExpandedParam> {
    vec![
        param("db.host", text("db.local"), "DB_HOST"),
        param("db.port", Value::Number(5432.into()), ""),
    ]
}

#[test]
fn parameters_digest_follows_order_values_and_env_names() {
    let original = parameters_digest(&params());
    assert_eq!(parameters_digest(&params()), original);
    let mut reordered = params();
    reordered.reverse();
    assert_ne!(parameters_digest(&reordered), original);
    let mut value = params();
    value[1].value = Some(Value::Number(5433.into()));
    assert_ne!(parameters_digest(&value), original);
    let mut env = params();
    env[0].env = "HOST".into();
    assert_ne!(parameters_digest(&env), original);
    let mut added = params();
    added.push(param("extra", Value::Null, ""));
    assert_ne!(parameters_digest(&added), original);
    // Values are compared as text.
    let mut as_text = params();
    as_text[1].value = Some(text("5432"));
    assert_eq!(parameters_digest(&as_text), original);
    // Boundaries between fields cannot be confused.
    let one = [param("ab", text("c"), "")];
    let other = [param("a", text("bc"), "")];
    assert_ne!(parameters_digest(&one), parameters_digest(&other));
    // The capabilities provided so far grow as the stack deploys.
    let mut provides = params();
    provides.push(param(
        "hub.provides",
        text("vpc kubernetes"),
        "HUB_PROVIDES",
    ));
    assert_eq!(parameters_digest(&provides), original);
}

fn output(component: &str, name: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        component: component.into(),
        name: name.into(),
        value: text(value),
        ..CapturedOutput::default()
    }
}

fn outputs() -> Vec<CapturedOutput> {
    vec![
        output("network", "vpc", "vpc-1"),
        output("network", "subnet", "sn-1"),
        output("dns", "zone", "example.com"),
        output("unrelated", "x", "1"),
    ]
}

fn names(depends: &[&str]) -> Vec<String> {
    depends.iter().map(|d| d.to_string()).collect()
}

#[test]
fn upstream_digests_are_per_dependency_in_depends_order() {
    let depends = names(&["network", "dns", "silent"]);
    let original = upstream_digests(&depends, &outputs());
    assert_eq!(
        original.keys().collect::<Vec<_>>(),
        ["network", "dns", "silent"]
    );
    assert_eq!(
        original["silent"],
        upstream_digests(&depends, &[])["silent"]
    );
    let mut reordered = outputs();
    reordered.reverse();
    assert_eq!(upstream_digests(&depends, &reordered), original);
    let mut changed = outputs();
    changed[0].value = text("vpc-2");
    let after = upstream_digests(&depends, &changed);
    assert_ne!(after["network"], original["network"]);
    assert_eq!(after["dns"], original["dns"]);
    let mut unrelated = outputs();
    unrelated[3].value = text("2");
    assert_eq!(upstream_digests(&depends, &unrelated), original);
    let mut added = outputs();
    added.push(output("dns", "ns", "ns1"));
    let after = upstream_digests(&depends, &added);
    assert_ne!(after["dns"], original["dns"]);
    assert_eq!(after["network"], original["network"]);
    // A name captured again counts with its latest value.
    let mut again = outputs();
    again.insert(0, output("network", "vpc", "vpc-0"));
    assert_eq!(upstream_digests(&depends, &again), original);
}

#[test]
fn take_gathers_the_three_parts() {
    let dir = tree(FILES);
    let depends = names(&["network"]);
    let fingerprint = take(dir.path(), &params(), &depends, &outputs()).expect("take");
    assert_eq!(fingerprint.folder, digest(&dir));
    assert_eq!(fingerprint.parameters, parameters_digest(&params()));
    assert_eq!(fingerprint.upstream, upstream_digests(&depends, &outputs()));
    assert!(take(&dir.path().join("x"), &params(), &depends, &outputs()).is_err());
}

fn fingerprint() -> Fingerprint {
    Fingerprint {
        folder: "sha256:f".into(),
        parameters: parameters_digest(&params()),
        upstream: [("network", "sha256:n"), ("dns", "sha256:d")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// An entry deployed with `params()` and `fingerprint()`.
fn deployed(status: &str) -> ComponentState {
    ComponentState {
        status: status.into(),
        parameters: crate::decide::records::component_parameters(&params()),
        fingerprint: Some(fingerprint()),
        ..ComponentState::default()
    }
}

#[test]
fn unchanged_components_have_no_changes() {
    for status in ["deployed", ""] {
        let entry = deployed(status);
        assert_eq!(changes(Some(&entry), &fingerprint(), &params()), []);
    }
}

#[test]
fn an_entry_not_deployed_must_run() {
    assert_eq!(
        changes(None, &fingerprint(), &params()),
        [Change::NeverDeployed]
    );
    for status in ["error", "undeployed", "deploying"] {
        assert_eq!(
            changes(Some(&deployed(status)), &fingerprint(), &params()),
            [Change::NotDeployed {
                status: status.into()
            }]
        );
    }
    let mut old = deployed("deployed");
    old.fingerprint = None;
    assert_eq!(
        changes(Some(&old), &fingerprint(), &params()),
        [Change::NoFingerprint]
    );
}

#[test]
fn a_changed_folder_is_named() {
    let mut current = fingerprint();
    current.folder = "sha256:other".into();
    assert_eq!(
        changes(Some(&deployed("deployed")), &current, &params()),
        [Change::Folder]
    );
}

#[test]
fn changed_parameters_are_listed_by_name() {
    let mut now = params();
    now[1].value = Some(Value::Number(5433.into()));
    now.push(param("db.user", text("admin"), ""));
    now.remove(0);
    let mut current = fingerprint();
    current.parameters = parameters_digest(&now);
    assert_eq!(
        changes(Some(&deployed("deployed")), &current, &now),
        [Change::Parameters {
            names: names(&["db.port", "db.user", "db.host"])
        }]
    );
    let mut env = params();
    env[0].env = "HOST".into();
    current.parameters = parameters_digest(&env);
    assert_eq!(
        changes(Some(&deployed("deployed")), &current, &env),
        [Change::Parameters {
            names: names(&["db.host"])
        }]
    );
}

#[test]
fn a_parameter_change_only_the_digest_tells_lists_no_name() {
    let mut reordered = params();
    reordered.reverse();
    let mut current = fingerprint();
    current.parameters = parameters_digest(&reordered);
    assert_eq!(
        changes(Some(&deployed("deployed")), &current, &reordered),
        [Change::Parameters { names: vec![] }]
    );
}

#[test]
fn changed_upstream_outputs_are_listed_by_dependency() {
    let mut current = fingerprint();
    current.upstream["dns"] = "sha256:d2".into();
    current.upstream.shift_remove("network");
    current.upstream.insert("storage".into(), "sha256:s".into());
    assert_eq!(
        changes(Some(&deployed("deployed")), &current, &params()),
        [Change::Upstream {
            components: names(&["dns", "storage", "network"])
        }]
    );
}

#[test]
fn every_change_is_reported_in_order() {
    let mut now = params();
    now[0].value = Some(text("db.remote"));
    let current = Fingerprint {
        folder: "sha256:other".into(),
        parameters: parameters_digest(&now),
        upstream: [("network".to_string(), "sha256:n2".to_string())]
            .into_iter()
            .chain([("dns".to_string(), "sha256:d".to_string())])
            .collect(),
    };
    let found = changes(Some(&deployed("deployed")), &current, &now);
    let said: Vec<String> = found.iter().map(Change::to_string).collect();
    assert_eq!(
        said,
        [
            "folder content changed",
            "parameters changed: db.host",
            "outputs of `network` changed"
        ]
    );
}

#[test]
fn changes_are_said_in_short_phrases() {
    let said = |change: Change| change.to_string();
    assert_eq!(said(Change::NeverDeployed), "never deployed");
    assert_eq!(
        said(Change::NotDeployed {
            status: "error".into()
        }),
        "its last run failed (`error`)"
    );
    assert_eq!(
        said(Change::NotDeployed {
            status: "deploying".into()
        }),
        "its last run was interrupted (`deploying`)"
    );
    assert_eq!(said(Change::NoFingerprint), "no fingerprint recorded");
    assert_eq!(said(Change::Folder), "folder content changed");
    assert_eq!(
        said(Change::Parameters {
            names: names(&["db.host", "db.port"])
        }),
        "parameters changed: db.host, db.port"
    );
    assert_eq!(
        said(Change::Parameters { names: vec![] }),
        "parameters changed"
    );
    assert_eq!(
        said(Change::Upstream {
            components: names(&["network"])
        }),
        "outputs of `network` changed"
    );
    assert_eq!(
        said(Change::Upstream {
            components: names(&["network", "dns"])
        }),
        "outputs of `network`, `dns` changed"
    );
}

fn state_with(entry: ComponentState) -> State {
    let mut state = State {
        version: 1,
        kind: "state".into(),
        timestamp: "2026-01-01T00:00:00Z".into(),
        ..State::default()
    };
    state.components.insert("app".into(), entry);
    state
}

fn reparse(text: &str) -> State {
    let mut warnings = Warnings::default();
    let state = parse(Path::new("state.yaml"), text, &mut warnings).expect("parse");
    assert!(
        warnings.is_empty(),
        "{:?}",
        warnings.iter().collect::<Vec<_>>()
    );
    state
}

#[test]
fn a_fingerprint_is_written_last_in_its_entry_and_read_back() {
    let state = state_with(deployed("deployed"));
    let text = render(&state).expect("render");
    assert_eq!(reparse(&text), state);
    let entry = text.split_once("  app:\n").expect("entry").1;
    let keys: Vec<&str> = entry
        .lines()
        .filter(|l| l.starts_with("    ") && !l.starts_with("     ") && !l.starts_with("    -"))
        .map(|l| l.trim().split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(keys, ["status", "parameters", "fingerprint"], "{text}");
    let written = &entry[entry.find("    fingerprint:").expect("fingerprint")..];
    assert_eq!(
            written,
            format!(
                "    fingerprint:\n      folder: sha256:f\n      parameters: {}\n      upstream:\n        network: sha256:n\n        dns: sha256:d\n",
                parameters_digest(&params())
            ),
            "{text}"
        );
}

#[test]
fn a_fingerprint_without_upstream_omits_the_key() {
    let mut entry = deployed("deployed");
    if let Some(fingerprint) = entry.fingerprint.as_mut() {
        fingerprint.upstream.clear();
    }
    let state = state_with(entry);
    let text = render(&state).expect("render");
    assert!(!text.contains("upstream"), "{text}");
    assert_eq!(reparse(&text), state);
}

#[test]
fn an_entry_without_fingerprint_is_written_as_before() {
    let mut entry = deployed("deployed");
    entry.fingerprint = None;
    let text = render(&state_with(entry)).expect("render");
    assert_eq!(
            text,
            "version: 1\nkind: state\ntimestamp: 2026-01-01T00:00:00Z\ncomponents:\n  app:\n    status: deployed\n    parameters:\n    - name: db.host\n      value: db.local\n      env: DB_HOST\n    - name: db.port\n      value: 5432\n"
        );
}
