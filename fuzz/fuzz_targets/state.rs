//! State files (plain or gzip): what parses must render, and what renders
//! must parse again to the same state.
#![no_main]

use hub_manifest::diag::Warnings;
use hub_manifest::SourceFile;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.state");
    let Ok(file) = SourceFile::from_bytes(path, data.to_vec()) else {
        return;
    };
    let mut warnings = Warnings::default();
    let Ok(state) = hub_state::parse(path, &file.text, &mut warnings) else {
        return;
    };
    let text = hub_state::render(&state).expect("a state read renders");
    let again = hub_state::parse(path, &text, &mut warnings)
        .unwrap_or_else(|e| panic!("a rendered state reads again: {e}\n{text}"));
    let twice = hub_state::render(&again).expect("renders again");
    assert_eq!(text, twice, "rendering is stable");
});
