//! The stack a run works on: an elaborated file read from disk, or a stack
//! manifest (`hub.yaml`) with parameters files elaborated in memory; and
//! where each component's folder is.

use super::error::EngineError;
use crate::diag::Warnings;
use crate::manifest::{parse_elaborated, ComponentRef, Elaborated, SourceFile};
use crate::params::Provenance;
use std::path::{Path, PathBuf};

/// An elaborated stack and where it came from.
#[derive(Debug, Clone)]
pub struct Stack {
    pub elaborated: Elaborated,
    /// The elaborated file's text, to point at declarations.
    pub source: Option<SourceFile>,
    /// For a manifest elaborated in memory: the original files, to point at
    /// declarations.
    pub provenance: Option<Provenance>,
    /// The elaborated file on disk (absolute), when there is one.
    pub file: Option<PathBuf>,
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
    ) -> Result<Stack, EngineError> {
        let source = SourceFile::read(first)?;
        // Warnings count only when the file turns out to be elaborated.
        let mut parse_warnings = Warnings::default();
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
            return Ok(Stack {
                elaborated,
                source: Some(source),
                provenance: None,
                file: Some(absolute(first)),
                base_dir: base,
            });
        }
        if is_elaborated {
            return Err(EngineError::ExtraArguments {
                path: first.to_path_buf(),
                extra: params.iter().map(|p| p.display().to_string()).collect(),
            });
        }
        let options = crate::elaborate::Options {
            stack: first.to_path_buf(),
            params: params.to_vec(),
            overrides: overrides.clone(),
            base_dir: base_dir.map(Path::to_path_buf),
            env_name: std::env::var("ENV").ok(),
            ..crate::elaborate::Options::default()
        };
        let (elaborated, provenance) =
            crate::elaborate::elaborate_with_provenance(&options, warnings)?;
        Ok(Stack {
            elaborated,
            source: None,
            provenance: Some(provenance),
            file: None,
            base_dir: base,
        })
    }

    /// The folder of component `reference` (§6.8): `source.dir` (absolute,
    /// or relative to the stack), else the git checkout under the
    /// components base dir.
    pub fn component_dir(
        &self,
        reference: &ComponentRef,
        components_base: Option<&Path>,
    ) -> Result<PathBuf, EngineError> {
        let source = &reference.source;
        let components_base = components_base
            .map(absolute)
            .unwrap_or_else(|| self.base_dir.clone());
        if !source.dir.is_empty() {
            return Ok(self.base_dir.join(&source.dir));
        }
        match &source.git {
            Some(git) if !git.local_dir.is_empty() => {
                Ok(components_base.join(&git.local_dir).join(&git.sub_dir))
            }
            Some(git) if !git.remote.is_empty() => {
                Ok(components_base.join(&reference.name).join(&git.sub_dir))
            }
            _ => Err(EngineError::NoSource {
                component: reference.name.clone(),
            }),
        }
    }

    pub fn reference(&self, name: &str) -> Option<&ComponentRef> {
        self.elaborated
            .stack
            .components
            .iter()
            .find(|c| c.name == name)
    }

    /// The file that declares component `name`'s parameters and its
    /// document number there: the elaborated file, or the component's
    /// `hub-component.yaml` for a manifest elaborated in memory.
    pub fn declarations(&self, name: &str) -> Option<(&SourceFile, usize)> {
        match (&self.source, &self.provenance) {
            (Some(source), _) => Some(source).zip(self.document(name)),
            (None, Some(provenance)) => provenance.component(name).map(|file| (file, 0)),
            (None, None) => None,
        }
    }

    /// The component's document number in the elaborated file (the stack
    /// is document 0).
    pub fn document(&self, name: &str) -> Option<usize> {
        self.elaborated
            .components
            .iter()
            .position(|c| c.meta.name == name)
            .map(|p| p + 1)
    }
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

/// `path` made absolute against the current folder (not resolving links).
pub fn absolute(path: &Path) -> PathBuf {
    let joined = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    crate::elaborate::paths::clean(&joined)
}
