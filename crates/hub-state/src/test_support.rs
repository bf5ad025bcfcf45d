//! Helpers for the tests of this crate and of the crates above it (the
//! engine's tests build states and snapshots too). Compiled for tests, and
//! for other crates' tests through the `test-support` feature.

use crate::{scalar_text, CapturedOutput};
use yaml_serde::Value;

/// A plain text output.
pub fn text_output(component: &str, name: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        component: component.into(),
        name: name.into(),
        value: Value::String(value.into()),
        ..CapturedOutput::default()
    }
}

/// `component:name=value` of each output, for comparisons.
pub fn keys(outputs: &[CapturedOutput]) -> Vec<String> {
    outputs
        .iter()
        .map(|o| format!("{}={}", o.qualified_name(), scalar_text(&o.value)))
        .collect()
}

/// A small pseudo-random source for property tests, so that a failure
/// replays from its seed.
pub struct Dice(pub u64);

impl Dice {
    /// A number below `sides` (0 for none).
    pub fn roll(&mut self, sides: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % sides.max(1)
    }
}
