use super::*;
use hub_manifest::{parse_elaborated, render_elaborated};

const COMPONENT: &str = "kind: component\nmeta: {name: c}\n";

/// A stack `child/hub.yaml` with components `a` and `b` (`b` depends on
/// `a`) whose parent `base/hub.yaml` has component `p`; `child_order`
/// and `parent_order` are their `lifecycle` sections.
fn stacks(child_order: &str, parent_order: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    for component in ["child/a", "child/b", "base/p"] {
        write(&format!("{component}/hub-component.yaml"), COMPONENT);
    }
    write(
            "base/hub.yaml",
            &format!("kind: stack\nmeta: {{name: base}}\ncomponents:\n- {{name: p, source: {{dir: p}}}}\n{parent_order}"),
        );
    write("base/params.yaml", "parameters: []\n");
    write(
            "child/hub.yaml",
            &format!(
                "kind: stack\nmeta: {{name: child, fromStack: ../base}}\ncomponents:\n\
                 - {{name: a, source: {{dir: a}}}}\n- {{name: b, source: {{dir: b}}, depends: [a]}}\n{child_order}"
            ),
        );
    dir
}

fn elaborated(dir: &Path) -> Elaborated {
    let options = Options {
        stack: dir.join("child/hub.yaml"),
        ..Options::default()
    };
    elaborate(&options, &mut Warnings::default()).unwrap()
}

/// The elaborated stack written to a file and read back.
fn round_trip(elaborated: &Elaborated, dir: &Path) -> Elaborated {
    let text = render_elaborated(elaborated).unwrap();
    let file = SourceFile::from_bytes(&dir.join("x.elaborate"), text.into_bytes()).unwrap();
    parse_elaborated(&file, &mut Warnings::default()).unwrap()
}

#[test]
fn order_is_derived_only_when_no_level_writes_one() {
    let cases = [
        ("", "", true),
        ("lifecycle: {order: [a, b]}\n", "", false),
        ("", "lifecycle: {order: [p]}\n", false),
    ];
    for (child, parent, derived) in cases {
        let dir = stacks(child, parent);
        let elaborated = elaborated(dir.path());
        assert_eq!(
            elaborated.provenance.order_derived, derived,
            "{child:?} {parent:?}"
        );
        let read = round_trip(&elaborated, dir.path());
        assert_eq!(read.provenance, elaborated.provenance);
        assert_eq!(read.stack, elaborated.stack);
    }
}

#[test]
fn every_file_read_is_a_source_and_the_stack_folder_is_recorded() {
    let dir = stacks("", "");
    let root = absolute(dir.path());
    let provenance = elaborated(dir.path()).provenance;
    let expected: Vec<PathBuf> = [
        "child/hub.yaml",
        "child/a/hub-component.yaml",
        "child/b/hub-component.yaml",
        "base/p/hub-component.yaml",
        "base/hub.yaml",
        "base/params.yaml",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    assert_eq!(provenance.sources, expected);
    assert_eq!(provenance.stack_dir, Some(root.join("child")));
}
