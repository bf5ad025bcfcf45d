//! Reading a large state a piece at a time.
//!
//! The YAML decoder holds every event of a document before it decodes it:
//! about twenty times the text's size, a gigabyte for the 52 MB state of
//! 10,000 components. A state hub wrote (framed, without anchors) is read
//! with [`hub_manifest::pieces`]: its head (the document with its stack
//! parameters, captured outputs and components left empty, lines kept, so
//! that every position is the same), then those sections a chunk of items
//! at a time. Anything this reading is unsure of (another layout, a
//! warning, an error, a name twice) gives `None`, and the state is read
//! whole, as before: the same state, the same warnings, the same errors.

use super::integrity;
use super::model::{ComponentState, State};
use hub_manifest::pieces::{self, Shape};
use hub_manifest::SourceFile;
use indexmap::IndexMap;

/// Below this size, the whole document is read at once (the tests read
/// every state a piece at a time).
const PIECEWISE_BYTES: usize = if cfg!(test) { 1 } else { 256 << 10 };

/// The sections read a piece at a time: the stack parameters and the
/// captured outputs (lists), and the component entries (a map).
const SECTIONS: [(&str, Shape); 3] = [
    ("stackParameters", Shape::List),
    ("capturedOutputs", Shape::List),
    ("components", Shape::Map),
];

/// The first document of `source` as a state, read a piece at a time, and
/// how many non-empty documents the file holds; `None` when it must be
/// read whole.
pub(super) fn first_state(source: &SourceFile) -> Option<(State, usize)> {
    let text = source.text.as_str();
    if !integrity::is_framed(text) || text.contains("&hub-") {
        return None;
    }
    let path = source.path.as_path();
    pieces::first_document::<State>(source, &SECTIONS, PIECEWISE_BYTES, |state, sections| {
        let [parameters, captured, components] = sections.as_slice() else {
            return None;
        };
        pieces::fill_list(path, parameters, &mut state.stack_parameters)?;
        pieces::fill_list(path, captured, &mut state.captured_outputs)?;
        if !components.found {
            return Some(());
        }
        if !state.components.is_empty() {
            return None;
        }
        let mut entries = IndexMap::with_capacity(components.items.len());
        pieces::decode::<IndexMap<String, ComponentState>>(path, components, |chunk| {
            chunk
                .into_iter()
                .all(|(name, entry)| entries.insert(name, entry).is_none())
        })?;
        if entries.len() != components.items.len() {
            return None;
        }
        state.components = entries;
        Some(())
    })
}

#[cfg(test)]
mod tests;
