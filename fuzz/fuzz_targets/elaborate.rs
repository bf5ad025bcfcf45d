//! Elaborating a small generated stack: the input is the stack manifest,
//! beside two fixed components and a parameters file.
#![no_main]

use hub_manifest::diag::Warnings;
use hub_elaborate::{elaborate, Options};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn folder() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        for name in ["a", "b"] {
            let component = dir.path().join(name);
            std::fs::create_dir_all(&component).expect("component folder");
            let manifest = format!(
                "kind: component\nmeta:\n  name: {name}\nparameters:\n  - name: x.one\n    env: ONE\n  - name: {name}.out\n    value: ${{x.one}}-{name}\noutputs:\n  - name: {name}.url\n"
            );
            std::fs::write(component.join("hub-component.yaml"), manifest).expect("manifest");
        }
        std::fs::write(dir.path().join("params.yaml"), "parameters:\n  - name: x.one\n    value: one\n")
            .expect("params");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = folder().path();
    let stack: PathBuf = dir.join("hub.yaml");
    std::fs::write(&stack, data).expect("stack");
    let options = Options {
        stack,
        params: vec![dir.join("params.yaml")],
        ..Options::default()
    };
    let mut warnings = Warnings::default();
    if let Ok(elaborated) = elaborate(&options, &mut warnings) {
        let _ = hub_manifest::render_elaborated(&elaborated);
    }
});
