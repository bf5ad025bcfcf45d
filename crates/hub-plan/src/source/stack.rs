//! The stack a run works on: an elaborated file read from disk, or a stack
//! manifest (`hub.yaml`) with parameters files elaborated in memory; and
//! where each component's folder is.

use super::error::SourceError;
use crate::order::schedule::{self, ScheduleError};
use hub_manifest::declared::{Declarations, ParameterSources};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{
    locate, locate_entry, parse_elaborated, ComponentRef, Elaborated, Manifest, PackedSource,
    Segment, SourceFile,
};
use std::path::{Path, PathBuf};

/// What to check when a component's folder is missing.
pub(crate) const COMPONENT_FOLDER_HINT: &str =
    "check the component's `source.dir` (relative to the \
    elaborated file's folder, or to the stack folder `hub elaborate` recorded in it) or the \
    components base dir `-b`";

/// An elaborated stack and where it came from.
#[derive(Debug, Clone)]
pub struct Stack {
    pub elaborated: Elaborated,
    /// The elaborated file's text, to point at declarations (read it with
    /// [`Stack::source`]: a run keeps it deflated, see [`Stack::pack_source`]).
    pub source: Option<SourceFile>,
    /// That text once a run no longer reads it but to report something.
    pub packed: Option<PackedSource>,
    /// For a manifest elaborated in memory: the original files, to point at
    /// declarations.
    pub provenance: Option<ParameterSources>,
    /// The elaborated file on disk (absolute), when there is one.
    pub file: Option<PathBuf>,
    /// The stack manifest elaborated in memory, as given.
    pub manifest: Option<PathBuf>,
    /// The folder relative component sources start from (absolute).
    pub base_dir: PathBuf,
}

impl Stack {
    /// Reads `first`: an elaborated file (then `params` must be empty), or a
    /// stack manifest that is elaborated in memory with `params`. A file is
    /// taken for a stack (or application) manifest when parameters files
    /// follow it, or when it holds a single document that lists components
    /// or has `kind: application`.
    pub fn load(
        first: &Path,
        params: &[PathBuf],
        base_dir: Option<&Path>,
        overrides: &indexmap::IndexMap<String, String>,
        warnings: &mut Warnings,
    ) -> Result<Stack, SourceError> {
        let source = SourceFile::read(first)?;
        // Warnings count only when the file turns out to be elaborated.
        let mut parse_warnings = Warnings::new();
        let elaborated = parse_elaborated(&source, &mut parse_warnings);
        let is_elaborated = match &elaborated {
            Ok(e) => {
                !e.components.is_empty()
                    || (e.stack.components.is_empty() && e.stack.kind != "application")
            }
            Err(_) => false,
        };
        let base = base_dir_of(first);
        if is_elaborated && params.is_empty() {
            let elaborated = elaborated?;
            warnings.append(parse_warnings);
            return Stack {
                elaborated,
                source: Some(source),
                packed: None,
                provenance: None,
                file: Some(absolute(first)),
                manifest: None,
                base_dir: base,
            }
            .with_renamed_outputs();
        }
        if is_elaborated {
            return Err(SourceError::ExtraArguments {
                path: first.to_path_buf(),
                extra: params.iter().map(|p| p.display().to_string()).collect(),
            });
        }
        let options = hub_elaborate::Options {
            stack: first.to_path_buf(),
            params: params.to_vec(),
            overrides: overrides.clone(),
            base_dir: base_dir.map(Path::to_path_buf),
            env_name: std::env::var("ENV").ok(),
            ..hub_elaborate::Options::default()
        };
        let (elaborated, provenance) =
            hub_elaborate::elaborate_with_provenance(&options, warnings)?;
        Stack {
            elaborated,
            source: None,
            packed: None,
            provenance: Some(provenance),
            file: None,
            manifest: Some(first.to_path_buf()),
            base_dir: base,
        }
        .with_renamed_outputs()
    }

    /// The stack with its components' renamed outputs readable by their
    /// former names ([`super::renamed`]).
    fn with_renamed_outputs(mut self) -> Result<Stack, SourceError> {
        if let Err((name, index, problem)) = super::renamed::check_all(&self.elaborated.components)
        {
            let at = self
                .declarations(&name)
                .and_then(|(file, document)| super::renamed::entry_location(file, document, index));
            return Err(SourceError::OutputMoved(Box::new((problem, at))));
        }
        super::renamed::add_aliases(&mut self.elaborated.components);
        Ok(self)
    }

    /// The folder of component `reference` (§6.8): `source.dir` (absolute,
    /// or relative to the stack), else the git checkout under the
    /// components base dir (`-b`, else the stack's folder).
    ///
    /// The stack's folder is the elaborated file's, as the Hub CLI has it.
    /// When the component is not there but is in the stack folder that
    /// `hub elaborate` recorded, that one: an elaborated file written
    /// elsewhere (`-o /tmp/x.elaborate`) still finds its components.
    pub fn component_dir(
        &self,
        reference: &ComponentRef,
        components_base: Option<&Path>,
    ) -> Result<PathBuf, SourceError> {
        let dir = component_dir_under(&self.base_dir, reference, components_base)?;
        let recorded = self.elaborated.provenance.stack_dir.as_deref();
        match recorded.filter(|r| *r != self.base_dir && !dir.is_dir()) {
            Some(stack_dir) => {
                let there = component_dir_under(stack_dir, reference, components_base)?;
                Ok(if there.is_dir() { there } else { dir })
            }
            None => Ok(dir),
        }
    }

    pub fn reference(&self, name: &str) -> Option<&ComponentRef> {
        self.elaborated.reference(name)
    }

    /// The file that declares component `name`'s parameters and its
    /// document number there: the elaborated file, or the component's
    /// `hub-component.yaml` for a manifest elaborated in memory.
    pub fn declarations(&self, name: &str) -> Option<(&SourceFile, usize)> {
        match (self.source(), &self.provenance) {
            (Some(source), _) => Some(source).zip(self.document(name)),
            (None, Some(provenance)) => provenance.component(name).map(|file| (file, 0)),
            (None, None) => None,
        }
    }

    /// The structural checks of the stack (`schedule::validate`), an unknown
    /// name located at its entry in the file that declares it: the
    /// elaborated file, or the stack manifest elaborated in memory.
    pub fn validated_order(&self) -> Result<Vec<String>, SourceError> {
        schedule::validate(&self.elaborated).map_err(|error| {
            match self
                .stack_text()
                .and_then(|text| entry_location(text, &error))
            {
                Some(location) => SourceError::PlanEntry(Box::new((error, location))),
                None => SourceError::Plan(error),
            }
        })
    }

    /// The text of the stack's own manifest (or of the elaborated file).
    fn stack_text(&self) -> Option<&SourceFile> {
        match (self.source(), &self.provenance, &self.manifest) {
            (Some(source), _, _) => Some(source),
            (None, Some(provenance), Some(manifest)) => provenance.file(manifest),
            _ => None,
        }
    }

    /// The elaborated file's text: as read, or inflated (once) from what
    /// [`Stack::pack_source`] kept; `None` for a stack elaborated in memory.
    pub fn source(&self) -> Option<&SourceFile> {
        let packed = || self.packed.as_ref().map(PackedSource::file);
        self.source.as_ref().or_else(packed)
    }

    /// Where the elaborated file declares each parameter, output and
    /// `moved` entry (what the lock reads of its text), read from the text
    /// as read or, once packed, from the text inflated for the scan alone;
    /// `None` for a stack elaborated in memory.
    pub fn scan_declarations(&self) -> Option<Declarations> {
        match (&self.source, &self.packed) {
            (Some(file), _) => Some(Declarations::scan(&file.path, &file.text)),
            (None, Some(packed)) => Some(packed.read(Declarations::scan)),
            (None, None) => None,
        }
    }

    /// Keeps the elaborated file's text deflated until something asks for
    /// it ([`Stack::source`]): a command reads it only to point at
    /// something it reports (the lock reads
    /// [`Stack::scan_declarations`]), so a run and `hub plan` pack it once
    /// the stack is loaded, before the state is read.
    pub fn pack_source(&mut self) {
        if let Some(file) = self.source.take() {
            match PackedSource::new(file) {
                Ok(packed) => self.packed = Some(packed),
                Err(file) => self.source = Some(file),
            }
        }
    }

    /// The component's document number in the elaborated file (the stack
    /// is document 0).
    pub fn document(&self, name: &str) -> Option<usize> {
        self.elaborated.component_position(name).map(|p| p + 1)
    }
}

/// The folder of component `reference` for a stack in `stack_dir`.
fn component_dir_under(
    stack_dir: &Path,
    reference: &ComponentRef,
    components_base: Option<&Path>,
) -> Result<PathBuf, SourceError> {
    let source = &reference.source;
    if !source.dir.is_empty() {
        return Ok(stack_dir.join(&source.dir));
    }
    let components_base = components_base
        .map(absolute)
        .unwrap_or_else(|| stack_dir.to_path_buf());
    match &source.git {
        Some(git) if !git.local_dir.is_empty() => {
            Ok(components_base.join(&git.local_dir).join(&git.sub_dir))
        }
        Some(git) if !git.remote.is_empty() => {
            Ok(components_base.join(&reference.name).join(&git.sub_dir))
        }
        _ => Err(SourceError::NoSource {
            component: reference.name.clone(),
        }),
    }
}

/// Where the unknown name of a `depends`, `lifecycle.mandatory`,
/// `lifecycle.optional` or `lifecycle.timeouts` entry (or a timeout that
/// is not a duration) is written in `file` (its first document).
fn entry_location(file: &SourceFile, error: &ScheduleError) -> Option<Location> {
    // The file was read before: what it warns about was said then.
    let (manifest, _) = file
        .first_document::<Manifest>(&mut Warnings::already_reported())
        .ok()?;
    let manifest = manifest?;
    let key = |k: &str| Segment::Key(k.to_string());
    if let ScheduleError::BadName(bad) = error {
        let i = manifest
            .components
            .iter()
            .position(|c| c.name == bad.name)?;
        let (line, column) = hub_manifest::locate(
            &file.text,
            &[key("components"), Segment::Index(i), key("name")],
        )?;
        return Some(Location::at(&file.path, line, column));
    }
    let (list, index, name) = match error {
        ScheduleError::UnknownDependency {
            component, name, ..
        } => {
            let i = manifest
                .components
                .iter()
                .position(|c| &c.name == component)?;
            let j = manifest.components[i]
                .depends
                .iter()
                .position(|d| d == name)?;
            (
                vec![key("components"), Segment::Index(i), key("depends")],
                j,
                name,
            )
        }
        ScheduleError::UnknownListed {
            list: "lifecycle.timeouts",
            name,
            ..
        }
        | ScheduleError::BadTimeout {
            component: name, ..
        } => {
            let path = ["lifecycle", "timeouts", name.as_str()].map(key);
            let (line, column) =
                locate(&file.text, &path).or_else(|| locate(&file.text, &path[..2]))?;
            return Some(Location::at(&file.path, line, column));
        }
        ScheduleError::UnknownListed { list, name, .. } => {
            let entries = match *list {
                "lifecycle.mandatory" => &manifest.lifecycle.mandatory,
                "lifecycle.optional" => &manifest.lifecycle.optional,
                _ => return None,
            };
            let j = entries.iter().position(|e| e == name)?;
            (list.split('.').map(key).collect(), j, name)
        }
        _ => return None,
    };
    let (line, column) = locate_entry(&file.text, &list, index, name)?;
    Some(Location::at(&file.path, line, column))
}

/// The folder of the manifest, above any `.hub` folders it sits in
/// (`/p/.hub/hub.yaml.elaborate` → `/p`). Other dot-folders are kept:
/// temporary folders are often named `.tmpXXXX`.
fn base_dir_of(manifest: &Path) -> PathBuf {
    let mut dir = absolute(manifest);
    dir.pop();
    while dir.file_name().is_some_and(|name| name == ".hub") {
        dir.pop();
    }
    dir
}

pub use hub_elaborate::paths::absolute;

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::{GitSource, Provenance, Source};

    fn by_dir(name: &str, dir: &str) -> ComponentRef {
        ComponentRef {
            name: name.into(),
            source: Source {
                dir: dir.into(),
                ..Source::default()
            },
            ..ComponentRef::default()
        }
    }

    fn by_git(name: &str) -> ComponentRef {
        ComponentRef {
            name: name.into(),
            source: Source {
                git: Some(Box::new(GitSource {
                    remote: "https://example.com/r.git".into(),
                    ..GitSource::default()
                })),
                ..Source::default()
            },
            ..ComponentRef::default()
        }
    }

    /// An elaborated file in `root/out` of the stack in `root/stack`.
    fn written_elsewhere(root: &Path) -> Stack {
        let elaborated = Elaborated {
            provenance: Provenance {
                stack_dir: Some(root.join("stack")),
                ..Provenance::default()
            },
            ..Elaborated::default()
        };
        Stack {
            elaborated,
            source: None,
            packed: None,
            provenance: None,
            file: Some(root.join("out/x.elaborate")),
            manifest: None,
            base_dir: root.join("out"),
        }
    }

    #[test]
    fn components_missing_beside_the_file_come_from_the_recorded_stack_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for folder in ["stack/c/a", "stack/g", "stack/both", "out/both"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        let stack = written_elsewhere(root);
        let resolve = |reference: &ComponentRef, base: Option<&Path>| {
            stack.component_dir(reference, base).unwrap()
        };
        assert_eq!(resolve(&by_dir("a", "c/a"), None), root.join("stack/c/a"));
        assert_eq!(resolve(&by_git("g"), None), root.join("stack/g"));
        // Where the reference finds the folder, it wins.
        assert_eq!(resolve(&by_dir("b", "both"), None), root.join("out/both"));
        // Found nowhere: the reference's path, for the error.
        assert_eq!(resolve(&by_dir("n", "none"), None), root.join("out/none"));
        // `-b` applies to git-sourced components wherever the stack is.
        let base = root.join("checkouts");
        assert_eq!(resolve(&by_git("g"), Some(&base)), base.join("g"));
    }
}
