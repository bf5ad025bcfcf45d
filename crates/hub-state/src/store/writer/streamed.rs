//! A write of one local, uncompressed location rendered straight into the
//! files: the state's text (50 MB at 10,000 components) is never held
//! whole, nor its backup's. The renderer writes its parts to a buffered
//! temporary file through [`FramedWriter`], which computes the digest of
//! the last line on the way; the backup of a fold after records (the same
//! state one serial earlier) is rendered again into its own file, from
//! the parts the first render left in the renderer's cache. The bytes are
//! those the text would have been: the frame is [`crate::integrity::frame_into`]'s,
//! and a render at the lower serial is the text with its serial line
//! changed (what the writer did to the text).
//!
//! Remote locations need the body whole for a conditional PUT, several
//! locations get the same bytes, and a compressed state is the gzip of
//! the text: those keep the text (see [`StateWriter::streams`]).

use super::{Content, Fold, StateWriter, Store};
use crate::integrity::FramedWriter;
use crate::model::State;
use crate::render::Changed;
use crate::StateError;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Write;

impl StateWriter {
    /// One local location, written uncompressed: streamed.
    pub(super) fn streams(&self) -> bool {
        !self.options.compressed
            && matches!(self.targets.as_slice(), [target] if target.store.local().is_some())
    }

    /// Writes `state` as `serial` (see [`Fold`]) to the one local location.
    pub(super) fn write_streamed(
        &mut self,
        state: &mut State,
        serial: u64,
        how: Fold,
    ) -> Result<(), StateError> {
        let first = self.changed_since_render.take();
        let location = self.first_location();
        // The renderer's cache follows the state once a render finished:
        // the next renders compare nothing (as after `render_text`).
        let rendered = Cell::new(false);
        let failed: RefCell<Option<StateError>> = RefCell::new(None);
        let result = {
            let parts = RefCell::new((&mut self.renderer, &mut *state));
            let render = |at: u64, out: &mut dyn Write| -> std::io::Result<u64> {
                let mut parts = parts.borrow_mut();
                let (renderer, state) = &mut *parts;
                let none = HashSet::new();
                let changed = match (rendered.get(), &first) {
                    (true, _) => Changed::Set(&none),
                    (false, Some(names)) => Changed::Set(names),
                    (false, None) => Changed::Any,
                };
                let previous = std::mem::replace(&mut state.serial, at);
                let mut framed = FramedWriter::new(out);
                let done = renderer.render_into(state, changed, &mut framed);
                state.serial = previous;
                match done {
                    Ok(()) => {
                        rendered.set(true);
                        let written = framed.finish()?;
                        // Past the limit the file is left unfinished:
                        // nothing replaces the state.
                        if let Err(error) =
                            super::super::check_written_size(&location, written as usize)
                        {
                            *failed.borrow_mut() = Some(error);
                            return Err(std::io::Error::other("the state is too large"));
                        }
                        Ok(written)
                    }
                    Err(error) => {
                        *failed.borrow_mut() = Some(error);
                        Err(std::io::Error::other("the state could not be rendered"))
                    }
                }
            };
            let mut text = |out: &mut dyn Write| render(serial, out);
            let mut backup = |out: &mut dyn Write| render(serial - 1, out);
            let Some(target) = self.targets.first_mut() else {
                return Err(super::no_location());
            };
            target.written = false;
            let Store::Local(local) = &mut target.store else {
                return Err(super::no_location());
            };
            let text = &mut Content::Written(&mut text);
            let backup = &mut Content::Written(&mut backup);
            let result = match how {
                Fold::Plain => local.fold_files(serial, None, text),
                Fold::Backup => local.fold_files(serial, Some(backup), text),
                Fold::Unrecorded => local.fold_without_record(serial, backup, text),
            };
            target.written = result.is_ok();
            result
        };
        self.changed_since_render = match rendered.get() {
            true => Some(HashSet::new()),
            false => None,
        };
        let errors = match (result, failed.into_inner()) {
            (Ok(()), _) => Vec::new(),
            (Err(_), Some(render_error)) => return Err(render_error),
            (Err(error), None) => vec![error],
        };
        self.settle(state, serial, errors)?;
        self.folded(state);
        Ok(())
    }
}
