use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_script_without_the_execute_bit_is_named_with_its_mode() {
    let dir = tempfile::tempdir().expect("tmp");
    let script = dir.path().join("deploy.sh");
    std::fs::write(&script, "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (message, hint) = executable(&script, "its implementation").expect_err("not executable");
    assert_eq!(
        message,
        format!(
            "its implementation `{}` is not executable (mode 0644): starting it would fail with \"Permission denied\"",
            script.display()
        )
    );
    assert!(
        hint.starts_with("make it executable with `chmod +x "),
        "{hint}"
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(executable(&script, "its implementation"), Ok(()));
}
