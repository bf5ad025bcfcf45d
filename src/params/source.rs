//! Where parameters were declared in an elaborated file: the line of every
//! item of each document's top-level `parameters:` list, found in one scan.

use crate::diag::Location;
use std::path::{Path, PathBuf};

/// Lines (1-based) of `parameters:` items, per YAML document.
#[derive(Debug, Clone, Default)]
pub struct Declarations {
    file: PathBuf,
    documents: Vec<Vec<usize>>,
}

impl Declarations {
    /// Block-style YAML only; flow-style lists give no lines, and then
    /// locations name the file alone.
    pub fn scan(file: &Path, text: &str) -> Self {
        let mut documents = vec![Vec::new()];
        let mut in_parameters = false;
        let mut item_indent: Option<usize> = None;
        for (number, line) in text.lines().enumerate() {
            if line == "---" || line.starts_with("--- ") {
                documents.push(Vec::new());
                in_parameters = false;
                continue;
            }
            let content = line.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let indent = line.len() - content.len();
            if indent == 0 && !content.starts_with('-') {
                in_parameters = content.trim_end() == "parameters:";
                item_indent = None;
                continue;
            }
            if !in_parameters || !(content.starts_with("- ") || content == "-") {
                continue;
            }
            let expected = *item_indent.get_or_insert(indent);
            if indent == expected {
                if let Some(items) = documents.last_mut() {
                    items.push(number + 1);
                }
            }
        }
        if text.starts_with("---") && documents.len() > 1 {
            documents.remove(0);
        }
        Declarations {
            file: file.to_path_buf(),
            documents,
        }
    }

    /// The location of item `index` of the `parameters:` list of
    /// `document` (0 is the stack).
    pub fn parameter(&self, document: usize, index: usize) -> Option<Location> {
        if self.file.as_os_str().is_empty() {
            return None;
        }
        match self.documents.get(document).and_then(|d| d.get(index)) {
            Some(&line) => Some(Location {
                file: self.file.clone(),
                line: Some(line),
                column: None,
            }),
            None => Some(Location::file(&self.file)),
        }
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
}
