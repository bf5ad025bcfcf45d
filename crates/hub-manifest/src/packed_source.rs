//! A file's text kept deflated while nothing reads it.
//!
//! A run reads the elaborated file's text to point at a declaration when
//! it has something to report (a parameter that does not expand, an
//! output that does not match its declaration): rarely, once its
//! parameters are locked. The text (28 MB at 10,000 components) is kept
//! deflated at the fastest level, a tenth of its room or less, and
//! inflated once, the first time it is asked for (see
//! `hub_plan::source::stack::Stack::pack_source`).

use crate::SourceFile;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A UTF-8 text kept deflated at the fastest level (YAML whose keys and
/// names repeat takes a fifth to a tenth of its room).
#[derive(Debug, Clone)]
pub struct DeflatedText {
    bytes: Box<[u8]>,
    /// The text's length, to inflate it into a string of the right room.
    len: usize,
}

// A deflater's and an inflater's state are tens of kilobytes each (hash
// chains, Huffman tables, the 32 KiB window), more than most texts kept
// here (a state entry is a few kilobytes): making them anew for every
// text cost more than deflating it. Each thread keeps one of each.
thread_local! {
    static DEFLATER: RefCell<Option<Compress>> = const { RefCell::new(None) };
    static INFLATER: RefCell<Option<Decompress>> = const { RefCell::new(None) };
    static INFLATED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl DeflatedText {
    /// `text`, deflated; `Err(text)` when deflating does not make it
    /// smaller.
    pub fn new(text: String) -> Result<DeflatedText, String> {
        let deflated = with_reused(&DEFLATER, fresh_deflater, |deflater| {
            deflate_smaller(deflater, text.as_bytes())
        });
        match deflated {
            Some(bytes) => Ok(DeflatedText {
                bytes: bytes.into_boxed_slice(),
                len: text.len(),
            }),
            None => Err(text),
        }
    }

    /// The text, inflated.
    pub fn inflate(&self) -> String {
        let mut bytes = Vec::with_capacity(self.len);
        self.inflate_into(&mut bytes);
        String::from_utf8(bytes).expect("a text deflated in memory inflates to UTF-8")
    }

    /// Hands the inflated text to `read` without keeping it: the room it
    /// is inflated into is the thread's, used again by the next call.
    pub fn read<R>(&self, read: impl FnOnce(&str) -> R) -> R {
        INFLATED.with(|cell| match cell.try_borrow_mut() {
            Ok(mut bytes) => {
                bytes.clear();
                self.inflate_into(&mut bytes);
                let result = read(as_text(&bytes));
                // A rare large text does not keep its room for the thread.
                if bytes.capacity() > REUSED_ROOM {
                    *bytes = Vec::new();
                }
                result
            }
            // `read` itself reads another text: this one gets its own room.
            Err(_) => read(&self.inflate()),
        })
    }

    fn inflate_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.len);
        // The bytes are the UTF-8 text `new` deflated, held in memory
        // since: they inflate back to it.
        with_reused(&INFLATER, fresh_inflater, |inflater| {
            inflate(inflater, &self.bytes, out, self.len)
        })
        .expect("a text deflated in memory inflates again");
    }

    /// The bytes it holds.
    pub fn packed_len(&self) -> usize {
        self.bytes.len()
    }
}

/// The room [`DeflatedText::read`] keeps between calls.
const REUSED_ROOM: usize = 1 << 20;

fn as_text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("a text deflated in memory inflates to UTF-8")
}

fn fresh_deflater() -> Compress {
    Compress::new(Compression::fast(), false)
}

fn fresh_inflater() -> Decompress {
    Decompress::new(false)
}

/// Runs `work` with the thread's `slot`, made by `fresh` the first time;
/// with a fresh one when the slot is in use (a nested call) or gone (the
/// thread is ending).
fn with_reused<T, R>(
    slot: &'static std::thread::LocalKey<RefCell<Option<T>>>,
    fresh: fn() -> T,
    work: impl FnOnce(&mut T) -> R,
) -> R {
    let mut work = Some(work);
    let reused = slot.try_with(|cell| {
        let mut held = cell.try_borrow_mut().ok()?;
        let state = held.get_or_insert_with(fresh);
        Some((work.take()?)(state))
    });
    match (reused, work) {
        (Ok(Some(result)), _) => result,
        (_, Some(work)) => work(&mut fresh()),
        (_, None) => unreachable!("the work ran and returned its result"),
    }
}

/// `input` deflated as a raw stream, or `None` when that takes as much
/// room as `input` or more.
fn deflate_smaller(deflater: &mut Compress, input: &[u8]) -> Option<Vec<u8>> {
    deflater.reset();
    let mut out = Vec::with_capacity(input.len() / 4 + 64);
    loop {
        if out.len() >= input.len() {
            return None;
        }
        if out.len() == out.capacity() {
            out.reserve(out.capacity());
        }
        let read = usize::try_from(deflater.total_in()).ok()?;
        let status = deflater
            .compress_vec(&input[read..], &mut out, FlushCompress::Finish)
            .ok()?;
        if status == Status::StreamEnd {
            return (out.len() < input.len()).then_some(out);
        }
    }
}

/// Inflates the raw stream `bytes` of a text of `len` bytes onto `out`;
/// `None` when the stream is damaged or does not hold exactly `len` bytes.
/// The room is made once, exactly (the inflater writes into a slice: a
/// `Vec`'s spare room would be zeroed at every call, however large).
fn inflate(inflater: &mut Decompress, bytes: &[u8], out: &mut Vec<u8>, len: usize) -> Option<()> {
    inflater.reset(false);
    let start = out.len();
    out.resize(start + len, 0);
    let mut whole = false;
    loop {
        let (read, written) = (inflater.total_in(), inflater.total_out());
        let (Ok(read_at), Ok(written_at)) = (usize::try_from(read), usize::try_from(written))
        else {
            break;
        };
        let (Some(input), Some(room)) = (bytes.get(read_at..), out.get_mut(start + written_at..))
        else {
            break;
        };
        match inflater.decompress(input, room, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) => {
                whole = inflater.total_out() == len as u64;
                break;
            }
            // Neither read nor wrote: the stream stops short.
            Ok(_) if (inflater.total_in(), inflater.total_out()) == (read, written) => break,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if !whole {
        out.truncate(start);
    }
    whole.then_some(())
}

/// A [`SourceFile`] whose text is deflated until it is read.
#[derive(Debug, Clone)]
pub struct PackedSource {
    path: PathBuf,
    text: DeflatedText,
    /// The file, once inflated.
    inflated: OnceLock<SourceFile>,
}

impl PackedSource {
    /// `file`, deflated; `Err(file)` when deflating does not make it
    /// smaller.
    pub fn new(file: SourceFile) -> Result<PackedSource, SourceFile> {
        let SourceFile { path, text } = file;
        match DeflatedText::new(text) {
            Ok(text) => Ok(PackedSource {
                path,
                text,
                inflated: OnceLock::new(),
            }),
            Err(text) => Err(SourceFile { path, text }),
        }
    }

    /// The file, inflated the first time it is asked for and kept.
    pub fn file(&self) -> &SourceFile {
        self.inflated.get_or_init(|| SourceFile {
            path: self.path.clone(),
            text: self.text.inflate(),
        })
    }

    /// Hands the file's path and text to `read` without keeping the text
    /// inflated (the file as kept, when it was inflated already).
    pub fn read<R>(&self, read: impl FnOnce(&std::path::Path, &str) -> R) -> R {
        match self.inflated.get() {
            Some(file) => read(&file.path, &file.text),
            None => self.text.read(|text| read(&self.path, text)),
        }
    }

    /// Whether the text was inflated since it was packed.
    pub fn is_inflated(&self) -> bool {
        self.inflated.get().is_some()
    }

    /// The bytes it holds while packed.
    pub fn packed_len(&self) -> usize {
        self.text.packed_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text of `lines` list items whose values repeat every `period`,
    /// and its file packed.
    fn packed_list(lines: usize, period: usize) -> (String, PackedSource) {
        let text: String = (0..lines)
            .map(|i| format!("- name: c{i}\n  value: v{}\n", i % period))
            .collect();
        let file = SourceFile {
            path: PathBuf::from("/s/hub.yaml.elaborate"),
            text: text.clone(),
        };
        let packed = PackedSource::new(file).expect("repetitive text deflates");
        (text, packed)
    }

    #[test]
    fn a_packed_text_is_smaller_and_reads_back_the_same() {
        let (text, packed) = packed_list(2000, 7);
        assert!(packed.packed_len() * 5 < text.len());
        assert!(!packed.is_inflated());
        assert_eq!(packed.file().text, text);
        assert_eq!(packed.file().path, PathBuf::from("/s/hub.yaml.elaborate"));
        assert!(packed.is_inflated());
    }

    #[test]
    fn reading_a_packed_text_gives_it_whole_without_keeping_it() {
        let (text, packed) = packed_list(3000, 11);
        let read = packed.read(|path, read| (path.to_path_buf(), read.to_string()));
        assert_eq!(read, (PathBuf::from("/s/hub.yaml.elaborate"), text.clone()));
        assert!(!packed.is_inflated(), "read keeps nothing inflated");
        // Once inflated, the kept file is what is read.
        assert_eq!(packed.file().text, text);
        assert_eq!(packed.read(|_, read| read.len()), text.len());
    }

    #[test]
    fn a_text_that_does_not_deflate_is_given_back() {
        let file = SourceFile {
            path: PathBuf::from("x"),
            text: "a".into(),
        };
        let back = PackedSource::new(file).expect_err("one byte does not get smaller");
        assert_eq!(back.text, "a");
    }

    /// Texts of every size, deflated and inflated one after the other on
    /// the same thread (the reused deflater and inflater carry nothing
    /// from one text to the next), and on a second thread at once.
    #[test]
    fn reused_deflaters_and_inflaters_give_every_text_back() {
        let texts: Vec<String> = [0usize, 1, 7, 300, 5_000, 70_000, 3, 1_200_000, 40]
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|i| char::from(b'a' + (i * 7 % 13 + i / 97 % 5) as u8))
                    .collect()
            })
            .collect();
        let round_trip = |texts: &[String]| {
            for text in texts {
                match DeflatedText::new(text.clone()) {
                    Ok(deflated) => {
                        assert!(deflated.packed_len() < text.len());
                        assert_eq!(&deflated.inflate(), text);
                        deflated.read(|read| assert_eq!(read, text));
                    }
                    Err(back) => assert_eq!(&back, text),
                }
            }
        };
        std::thread::scope(|scope| {
            scope.spawn(|| round_trip(&texts));
            round_trip(&texts);
        });
    }

    #[test]
    fn a_text_read_while_another_is_read_comes_back_whole() {
        let outer: String = "outer: text\n".repeat(50);
        let inner: String = "inner: other\n".repeat(80);
        let outer_packed = DeflatedText::new(outer.clone()).expect("repetitive text deflates");
        let inner_packed = DeflatedText::new(inner.clone()).expect("repetitive text deflates");
        outer_packed.read(|first| {
            inner_packed.read(|second| assert_eq!(second, inner));
            assert_eq!(first, outer);
        });
    }
}
