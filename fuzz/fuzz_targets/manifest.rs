//! Manifest, parameters and elaborated files: bytes (plain or gzip) to
//! typed documents, with the limits, unknown-key warnings and schema
//! validation `hub` applies when it reads them.
#![no_main]

use hub_manifest::diag::Warnings;
use hub_manifest::{parse_elaborated, Manifest, ParamsFile, SourceFile};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = SourceFile::from_bytes(Path::new("fuzz.yaml"), data.to_vec()) else {
        return;
    };
    let mut warnings = Warnings::default();
    let _ = file.first_document::<Manifest>(&mut warnings);
    let _ = file.first_document::<ParamsFile>(&mut warnings);
    let _ = parse_elaborated(&file, &mut warnings);
    let _ =
        hub_manifest::validate::validate_source(&file, hub_manifest::typos::TypoPolicy::Default);
});
