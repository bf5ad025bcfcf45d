//! The renderer's cached texts, kept deflated.
//!
//! A run that writes keeps the text of every part of its state from one
//! write to the next (see [`super::Renderer`]), so that a write costs what
//! changed: about one more text of the state for the run's length (52 MB
//! at 10,000 components, most of it component entries and the stack
//! parameters, at the peak of `deploy`). The texts are YAML whose keys and
//! names repeat: deflated at the fastest level they take a fifth to a
//! tenth of the room. A part is deflated once, when it is rendered, and
//! inflated each time a write reuses it; writes are folds, which a run
//! spaces so that they take a small share of its time
//! ([`crate::journal::FOLD_SHARE`]).

use super::Sink;
use hub_manifest::DeflatedText;

/// Below this, a text is kept as it is (deflating would save little).
const SMALLEST: usize = 512;

/// A cached text: as it is, or deflated.
pub(super) enum Packed {
    Plain(String),
    Deflated(DeflatedText),
}

impl Packed {
    /// `text`, kept in no more room than it takes.
    pub(super) fn new(text: String) -> Packed {
        let plain = |mut text: String| {
            text.shrink_to_fit();
            Packed::Plain(text)
        };
        if text.len() < SMALLEST {
            return plain(text);
        }
        match DeflatedText::new(text) {
            Ok(deflated) => Packed::Deflated(deflated),
            Err(text) => plain(text),
        }
    }

    /// Writes the text to `out`.
    pub(super) fn push_to<S: Sink + ?Sized>(&self, out: &mut S) {
        match self {
            Packed::Plain(text) => out.push_str(text),
            Packed::Deflated(deflated) => deflated.read(|text| out.push_str(text)),
        }
    }

    /// The text (a copy when deflated).
    #[cfg(test)]
    pub(super) fn text(&self) -> String {
        let mut out = String::new();
        self.push_to(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_comes_back_as_it_was_given() {
        let long: String = (0..200)
            .map(|i| format!("  c{i}:\n    parameters:\n    - name: p{i}\n      value: \"é{i}\"\n"))
            .collect();
        for text in ["", "short: text\n", long.as_str()] {
            let packed = Packed::new(text.to_string());
            assert_eq!(packed.text(), text);
        }
        assert!(
            matches!(Packed::new(long.clone()), Packed::Deflated(ref d) if d.packed_len() * 4 < long.len())
        );
        assert!(matches!(Packed::new("short".into()), Packed::Plain(_)));
    }
}
