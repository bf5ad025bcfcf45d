//! The generated stack the deploy benchmarks share: `size` components
//! `c0..`, each with two parameters exported to its environment and a
//! script that prints one line.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const SCRIPT: &str = "#!/bin/sh\necho \"deploying $ID in $DOMAIN\"\n";

/// Writes the elaborated stack and the component folders.
pub fn write_stack(root: &Path, size: usize) {
    let mut text = String::from("version: 1\nkind: stack\nmeta: {name: bench}\ncomponents:\n");
    for i in 0..size {
        let _ = writeln!(text, "- {{name: c{i}, source: {{dir: c/c{i}}}}}");
    }
    text.push_str("lifecycle:\n  verbs: [deploy, undeploy]\n  order:\n");
    for i in 0..size {
        let _ = writeln!(text, "  - c{i}");
    }
    text.push_str("parameters:\n- {name: dns.domain, value: bench.example.com}\n");
    for i in 0..size {
        let _ = write!(
            text,
            "---\nversion: 1\nkind: component\nmeta: {{name: c{i}, kind: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n- {{name: id, value: c{i}, env: ID}}\n"
        );
        let dir = root.join(format!("c/c{i}"));
        std::fs::create_dir_all(&dir).expect("component folder");
        let script = dir.join("deploy.sh");
        std::fs::write(&script, SCRIPT).expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(dir.join("undeploy.sh"), "#!/bin/sh\n").expect("undeploy");
        std::fs::set_permissions(
            dir.join("undeploy.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    std::fs::write(root.join("hub.yaml.elaborate"), text).expect("elaborate");
}
