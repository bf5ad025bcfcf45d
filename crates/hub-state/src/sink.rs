//! Where a state's text is written as it is rendered: the trait the
//! renderer writes through and the framed file writer implements, below
//! both.

/// Where a [`Renderer`](crate::render::Renderer) writes a state's text, part after part: a string,
/// or a file being written (see [`crate::integrity::FramedWriter`]).
pub trait Sink {
    /// Drops what was written so far, where it can (a string); a file is
    /// given to one render only.
    fn clear(&mut self);
    fn push_str(&mut self, text: &str);
}

impl Sink for String {
    fn clear(&mut self) {
        String::clear(self);
    }

    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}
