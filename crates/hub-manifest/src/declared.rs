//! Where parameters were declared: in an elaborated file, the line of every
//! item of each document's top-level `parameters:` list, found in one scan;
//! for a stack elaborated in memory, the original files ([`ParameterSources`],
//! with a [`Mark`] per stack parameter). Elaboration records them, the
//! parameters and the engine read them: they live here, below all three.
//! (Not the [`crate::Provenance`] header of an elaborated file.)

use crate::diag::Location;
use crate::load::SourceFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Lines (1-based) of the items of the top-level `parameters:`,
/// `outputs:` and `moved:` lists, per YAML document.
#[derive(Debug, Clone)]
pub struct Declarations {
    /// Shared by every location given (see [`Location`]).
    file: Arc<Path>,
    documents: Vec<Vec<usize>>,
    outputs: Vec<Vec<usize>>,
    moved: Vec<Vec<usize>>,
}

impl Default for Declarations {
    fn default() -> Self {
        Declarations {
            file: Arc::from(Path::new("")),
            documents: Vec::new(),
            outputs: Vec::new(),
            moved: Vec::new(),
        }
    }
}

/// The top-level lists whose items are located.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    Parameters,
    Outputs,
    Moved,
}

impl Declarations {
    /// Block-style YAML only; flow-style lists give no lines, and then
    /// locations name the file alone.
    pub fn scan(file: &Path, text: &str) -> Self {
        let mut documents = vec![Vec::new()];
        let mut outputs = vec![Vec::new()];
        let mut moved = vec![Vec::new()];
        let mut list: Option<List> = None;
        let mut item_indent: Option<usize> = None;
        for (number, line) in text.lines().enumerate() {
            if line == "---" || line.starts_with("--- ") {
                documents.push(Vec::new());
                outputs.push(Vec::new());
                moved.push(Vec::new());
                list = None;
                continue;
            }
            let content = line.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let indent = line.len() - content.len();
            if indent == 0 && !content.starts_with('-') {
                list = match content.trim_end() {
                    "parameters:" => Some(List::Parameters),
                    "outputs:" => Some(List::Outputs),
                    "moved:" => Some(List::Moved),
                    _ => None,
                };
                item_indent = None;
                continue;
            }
            let Some(which) = list else {
                continue;
            };
            if !(content.starts_with("- ") || content == "-") {
                continue;
            }
            let expected = *item_indent.get_or_insert(indent);
            let items = match which {
                List::Parameters => documents.last_mut(),
                List::Outputs => outputs.last_mut(),
                List::Moved => moved.last_mut(),
            };
            if let (true, Some(items)) = (indent == expected, items) {
                items.push(number + 1);
            }
        }
        if text.starts_with("---") && documents.len() > 1 {
            documents.remove(0);
            outputs.remove(0);
            moved.remove(0);
        }
        Declarations {
            file: Arc::from(file),
            documents,
            outputs,
            moved,
        }
    }

    /// The location of item `index` of the `parameters:` list of
    /// `document` (0 is the stack).
    pub fn parameter(&self, document: usize, index: usize) -> Option<Location> {
        self.item(&self.documents, document, index)
    }

    /// The location of item `index` of the `outputs:` list of `document`.
    pub fn output(&self, document: usize, index: usize) -> Option<Location> {
        self.item(&self.outputs, document, index)
    }

    /// The location of item `index` of the `moved:` list of `document`.
    pub fn moved(&self, document: usize, index: usize) -> Option<Location> {
        self.item(&self.moved, document, index)
    }

    fn item(&self, lists: &[Vec<usize>], document: usize, index: usize) -> Option<Location> {
        if self.file.as_os_str().is_empty() {
            return None;
        }
        match lists.get(document).and_then(|d| d.get(index)) {
            Some(&line) => Some(Location::line_of(&self.file, line)),
            None => Some(Location {
                file: Arc::clone(&self.file),
                line: None,
                column: None,
            }),
        }
    }
}

/// Item `index` of the top-level `parameters:` list of file `file` of a
/// [`ParameterSources`]; for a parameter nested in a group, its leaf number
/// `leaf` ([`crate::leaves`] order) within that item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    pub file: usize,
    pub index: usize,
    /// `Some(n)`: leaf `n` of the group at `index`.
    pub leaf: Option<u32>,
}

/// Where the parameters of a stack elaborated in memory come from: the stack
/// manifest, parameters files, parent stacks and `hub-component.yaml` files.
/// Elaborate records only file paths and item numbers; a file is read and
/// scanned for lines the first time a location in it is asked for.
#[derive(Debug, Clone, Default)]
pub struct ParameterSources {
    /// Shared by the locations in each file (see [`Location`]).
    files: Vec<Arc<Path>>,
    texts: Vec<OnceLock<Option<SourceFile>>>,
    scans: Vec<OnceLock<Declarations>>,
    /// The decoded top-level parameters of each file, for the lines of
    /// nested ones.
    trees: Vec<OnceLock<Option<Vec<crate::Parameter>>>>,
    /// Qualified name (`name` or `name|component`) of each merged stack
    /// parameter → the source that last set its value, else the first
    /// that declared it.
    stack: HashMap<String, Mark>,
    /// Component instance → its `hub-component.yaml`.
    components: HashMap<String, usize>,
}

impl ParameterSources {
    pub fn new(
        files: Vec<PathBuf>,
        stack: HashMap<String, Mark>,
        components: HashMap<String, usize>,
    ) -> Self {
        ParameterSources {
            texts: files.iter().map(|_| OnceLock::new()).collect(),
            scans: files.iter().map(|_| OnceLock::new()).collect(),
            trees: files.iter().map(|_| OnceLock::new()).collect(),
            files: files.into_iter().map(Arc::from).collect(),
            stack,
            components,
        }
    }

    /// The file, read on first use; `None` when it cannot be read any more.
    fn text(&self, file: usize) -> Option<&SourceFile> {
        let path = self.files.get(file)?;
        self.texts[file]
            .get_or_init(|| SourceFile::read(path).ok())
            .as_ref()
    }

    /// Where the stack parameter `qualified_name` was declared.
    pub fn stack_parameter(&self, qualified_name: &str) -> Option<Location> {
        let mark = *self.stack.get(qualified_name)?;
        let path = self.files.get(mark.file)?;
        let Some(source) = self.text(mark.file) else {
            return Some(Location {
                file: Arc::clone(path),
                line: None,
                column: None,
            });
        };
        if let Some(leaf) = mark.leaf {
            let parameters = self.trees[mark.file]
                .get_or_init(|| crate::top_parameters(&source.text))
                .as_deref()
                .unwrap_or_default();
            let found = crate::leaf_segments(parameters, mark.index, leaf as usize)
                .and_then(|path| crate::locate(&source.text, &path));
            if let Some((line, _)) = found {
                return Some(Location::line_of(path, line));
            }
        }
        self.scans[mark.file]
            .get_or_init(|| Declarations::scan(&source.path, &source.text))
            .parameter(0, mark.index)
    }

    /// The file at `path`, when it is one of the files read.
    pub fn file(&self, path: &Path) -> Option<&SourceFile> {
        let index = self.files.iter().position(|f| **f == *path)?;
        self.text(index)
    }

    /// The `hub-component.yaml` of component instance `name` (its
    /// parameters are the component document's, item for item).
    pub fn component(&self, name: &str) -> Option<&SourceFile> {
        self.text(*self.components.get(name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_per_document() {
        let text = "kind: stack\nparameters:\n- name: a\n  value: 1\n- name: b\n  parameters:\n  - name: c\n---\nkind: component\nparameters:\n  - name: x\n";
        let d = Declarations::scan(Path::new("f"), text);
        assert_eq!(d.parameter(0, 0).and_then(|l| l.line), Some(3));
        assert_eq!(d.parameter(0, 1).and_then(|l| l.line), Some(5));
        assert_eq!(d.parameter(1, 0).and_then(|l| l.line), Some(11));
        assert_eq!(d.parameter(1, 3).and_then(|l| l.line), None);
    }

    #[test]
    fn the_locations_of_one_file_share_its_path() {
        let text = "parameters:\n- name: a\n- name: b\noutputs:\n- name: o\n";
        let d = Declarations::scan(Path::new("dir/hub.yaml.elaborate"), text);
        let (a, b, o) = (
            d.parameter(0, 0).unwrap(),
            d.parameter(0, 1).unwrap(),
            d.output(0, 0).unwrap(),
        );
        assert_eq!((a.line, b.line, o.line), (Some(2), Some(3), Some(5)));
        assert_eq!(&*a.file, Path::new("dir/hub.yaml.elaborate"));
        assert!(Arc::ptr_eq(&a.file, &b.file) && Arc::ptr_eq(&a.file, &o.file));
        // A location with no line (an item past the list) shares it too.
        assert!(Arc::ptr_eq(&a.file, &d.parameter(0, 9).unwrap().file));
    }

    #[test]
    fn output_lines_per_document() {
        let text = "kind: stack\noutputs:\n- name: s\n---\nkind: component\nparameters:\n- name: p\noutputs:\n  - name: a\n    brief: x\n  - name: b\n";
        let d = Declarations::scan(Path::new("f"), text);
        assert_eq!(d.output(0, 0).and_then(|l| l.line), Some(3));
        assert_eq!(d.output(1, 0).and_then(|l| l.line), Some(9));
        assert_eq!(d.output(1, 1).and_then(|l| l.line), Some(11));
        assert_eq!(d.parameter(1, 0).and_then(|l| l.line), Some(7));
    }

    #[test]
    fn provenance_reads_files_on_demand() {
        let dir = tempfile::tempdir().unwrap();
        let stack = dir.path().join("hub.yaml");
        let component = dir.path().join("hub-component.yaml");
        std::fs::write(&stack, "kind: stack\nparameters:\n- name: a\n- name: b\n").unwrap();
        std::fs::write(&component, "parameters:\n  - name: x\n").unwrap();
        let names = HashMap::from([
            (
                "b".to_string(),
                Mark {
                    file: 0,
                    index: 1,
                    leaf: None,
                },
            ),
            (
                "x|c".to_string(),
                Mark {
                    file: 1,
                    index: 0,
                    leaf: None,
                },
            ),
        ]);
        let p = ParameterSources::new(
            vec![stack.clone(), component.clone()],
            names,
            HashMap::from([("c".to_string(), 1)]),
        );
        let b = p.stack_parameter("b").unwrap();
        assert_eq!((b.file.to_path_buf(), b.line), (stack, Some(4)));
        assert_eq!(p.stack_parameter("x|c").and_then(|l| l.line), Some(2));
        assert!(p.stack_parameter("a").is_none());
        assert_eq!(p.component("c").map(|s| s.path.clone()), Some(component));
        assert!(p.component("d").is_none());
    }
}
