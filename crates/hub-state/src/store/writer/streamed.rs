//! A write of one local, uncompressed location rendered straight into the
//! files: the state's text (50 MB at 10,000 components) is never held
//! whole, nor its backup's. The renderer writes its parts to a buffered
//! temporary file through [`FramedWriter`], which computes the digest of
//! the last line on the way. A fold after records writes two files, the
//! state and its backup (the same state one serial earlier): the state is
//! rendered into the first written, and the second is made from that
//! file's bytes with its serial line changed and framed again (see
//! [`super::reframed`]), or rendered again when that cannot be done. The
//! bytes are those the text would have been: the frame is
//! [`crate::integrity::frame_into`]'s, and a render at the other serial is
//! the text with its serial line changed (what the writer did to the
//! text).
//!
//! Remote locations need the body whole for a conditional PUT, several
//! locations get the same bytes, and a compressed state is the gzip of
//! the text: those keep the text (see [`StateWriter::streams`]).

use super::{reframed, Content, Fold, StateWriter, Store};
use crate::integrity::FramedWriter;
use crate::model::State;
use crate::render::Changed;
use crate::StateError;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fs::File;
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
            // Past the limit the file is left unfinished: nothing replaces
            // the state.
            let within_limit = |written: u64| -> std::io::Result<u64> {
                match super::super::check_written_size(&location, written as usize) {
                    Ok(()) => Ok(written),
                    Err(error) => {
                        *failed.borrow_mut() = Some(error);
                        Err(std::io::Error::other("the state is too large"))
                    }
                }
            };
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
                        within_limit(framed.finish()?)
                    }
                    Err(error) => {
                        *failed.borrow_mut() = Some(error);
                        Err(std::io::Error::other("the state could not be rendered"))
                    }
                }
            };
            // The second file of a fold, from the first (`from` its serial).
            let derive = |source: &mut File, from: u64, at: u64, out: &mut dyn Write| {
                match reframed::with_serial(source, from, at, out)? {
                    Some(written) => within_limit(written),
                    None => render(at, out),
                }
            };
            let mut text = |out: &mut dyn Write| render(serial, out);
            let mut backup = |out: &mut dyn Write| render(serial - 1, out);
            let mut text_from_backup =
                |backup: &mut File, out: &mut dyn Write| derive(backup, serial - 1, serial, out);
            let mut backup_from_text =
                |text: &mut File, out: &mut dyn Write| derive(text, serial, serial - 1, out);
            let Some(target) = self.targets.first_mut() else {
                return Err(super::no_location());
            };
            target.written = false;
            let Store::Local(local) = &mut target.store else {
                return Err(super::no_location());
            };
            // The backup is written first after records, the state first
            // without (see `LocalStore::fold_without_record`): the second
            // is made from the first.
            let rendered_text = &mut Content::Written(&mut text);
            let result = match how {
                Fold::Plain => local.fold_files(serial, None, rendered_text),
                Fold::Backup => local.fold_files(
                    serial,
                    Some(&mut Content::Written(&mut backup)),
                    &mut Content::Derived(&mut text_from_backup),
                ),
                Fold::Unrecorded => local.fold_without_record(
                    serial,
                    &mut Content::Derived(&mut backup_from_text),
                    rendered_text,
                ),
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
