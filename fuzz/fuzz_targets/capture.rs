//! The `Outputs:` capture: both readings of a component's stdout, and the
//! bounded copy hub keeps while streaming, which must read to the same raw
//! outputs as the whole stdout.
#![no_main]

use hub_engine::child::capture::{parse_outputs, parse_outputs_strict};
use hub_engine::child::kept::KeptStdout;
use hub_engine::child::process::{LineSplitter, MAX_LINE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let stdout = String::from_utf8_lossy(data);
    let whole = parse_outputs(&stdout);
    let _ = parse_outputs_strict(&stdout);
    let mut kept = KeptStdout::default();
    let mut lines = LineSplitter::new(MAX_LINE);
    let mut feed = |line: &[u8], whole: bool| kept.line(&String::from_utf8_lossy(line), whole);
    // In uneven chunks, as a pipe delivers them.
    for chunk in stdout.as_bytes().chunks(7) {
        lines.feed(chunk, &mut feed);
    }
    lines.finish(&mut feed);
    let kept = kept.finish();
    assert_eq!(
        parse_outputs(&kept.blocks),
        whole,
        "kept blocks:\n{}",
        kept.blocks
    );
});
