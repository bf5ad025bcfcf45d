//! Assembling one stack level (and, recursively, its parents).

use super::params::{lacks_value, warn_missing_values, Trace};
use super::paths::{absolute, clean, stack_base_dir};
use super::{application, order, state_fill, unread, ElaborateError, Options};
use hub_manifest::declared::{Mark, ParameterSources};
use hub_manifest::diag::{Location, Warning, Warnings};
use hub_manifest::keys::suggest;
use hub_manifest::parallel::{self, Spread};
use hub_manifest::typos::{self, Origin};
use hub_manifest::{
    locate, locate_entry, read_manifest, read_params, ComponentRef, Elaborated, Manifest,
    ManifestError, Parameter, ParamsFile, Segment, SourceFile,
};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

mod level;
mod names;

use level::{apply_platform_provides, mark_secret_outputs, Level, LevelBuilder};

/// Elaborates the stack described by `options`.
pub fn elaborate(options: &Options, warnings: &mut Warnings) -> Result<Elaborated, ElaborateError> {
    elaborate_traced(options, warnings, false).map(|(elaborated, _)| elaborated)
}

/// [`elaborate`], and where each parameter was declared in the original
/// files: for a top-level parameter, the stack manifest, parameters file,
/// parent stack or component manifest that last set its value (the first
/// that declared it when none did); for a component, its
/// `hub-component.yaml`. Files are read again only when a location is
/// asked for.
pub fn elaborate_with_provenance(
    options: &Options,
    warnings: &mut Warnings,
) -> Result<(Elaborated, ParameterSources), ElaborateError> {
    elaborate_traced(options, warnings, true)
        .map(|(elaborated, provenance)| (elaborated, provenance.unwrap_or_default()))
}

fn elaborate_traced(
    options: &Options,
    warnings: &mut Warnings,
    provenance: bool,
) -> Result<(Elaborated, Option<ParameterSources>), ElaborateError> {
    let mut chain = Vec::new();
    let mut assembler = Assembler {
        options,
        warnings,
        files: Vec::new(),
        origins: Vec::new(),
        instances: HashMap::new(),
        order_written: false,
        top_repository: hub_manifest::typos::repository_of(&options.stack),
    };
    let level = assembler.assemble(
        &options.stack,
        Path::new(""),
        &options.params,
        &HashSet::new(),
        &mut chain,
    )?;
    let Assembler {
        files,
        origins,
        instances,
        order_written,
        ..
    } = assembler;
    let recorded = recorded_provenance(options, &files, order_written);
    let Level {
        mut doc,
        mut component_docs,
        parameters,
        traces,
        app_env,
    } = level;
    let found = Found {
        files,
        origins,
        instances,
    };
    let located = report_unread_parameters(
        &doc,
        &parameters,
        &component_docs,
        &traces,
        found,
        provenance,
        warnings,
    );
    doc.parameters = parameters;
    apply_platform_provides(&mut doc, &options.platform_provides);
    if let Some(state) = &options.state {
        state_fill::apply(&mut doc, state, warnings)?;
    }
    let declared = |name: &str| {
        located
            .as_ref()
            .and_then(|located| located.stack_parameter(name))
    };
    warn_missing_values(&doc.parameters, &declared, warnings);
    let provenance = located.filter(|_| provenance);
    finish_documents(&mut doc, &mut component_docs, &app_env, options, warnings)?;
    let elaborated = Elaborated {
        stack: doc,
        components: component_docs,
        provenance: recorded,
        ..Elaborated::default()
    };
    Ok((elaborated, provenance))
}

/// The files the parameters were read from, who wrote each, and each
/// component instance's `hub-component.yaml` among them.
struct Found {
    files: Vec<PathBuf>,
    origins: Vec<Origin>,
    instances: HashMap<String, usize>,
}

/// Warns of the parameters set in files that nothing reads, at their
/// lines; the parameters' locations, when they are asked for
/// (`provenance`) or needed to point a warning at a line.
fn report_unread_parameters(
    doc: &Manifest,
    parameters: &[Parameter],
    component_docs: &[Manifest],
    traces: &[Trace],
    found: Found,
    provenance: bool,
    warnings: &mut Warnings,
) -> Option<ParameterSources> {
    // Named after the merge: `-s` may add parameters and sort them again.
    // Also made to point the warnings of parameters without a value, and
    // of those nothing reads, at their lines.
    let reads = unread::Reads::of(doc, parameters, component_docs);
    let unread_params: Vec<bool> = parameters
        .iter()
        .map(|p| !reads.contains(&p.name, &p.component) && !unread::read_by_hub(&p.name))
        .collect();
    let marks: HashMap<String, Mark> = parameters
        .iter()
        .zip(traces)
        .map(|(p, t)| (p.qualified_name(), t.mark()))
        .collect();
    let located =
        (provenance || unread_params.contains(&true) || parameters.iter().any(lacks_value))
            .then(|| ParameterSources::new(found.files, marks.clone(), found.instances));
    let set_at = |name: &str| {
        let mark = marks.get(name)?;
        let origin = found.origins.get(mark.file).copied().unwrap_or_default();
        let location = located.as_ref().and_then(|l| l.stack_parameter(name));
        Some((location, origin))
    };
    let set_in_files: Vec<Parameter> = parameters
        .iter()
        .zip(&unread_params)
        .filter(|(_, unread)| **unread)
        .map(|(p, _)| p.clone())
        .collect();
    unread::report(&set_in_files, &reads, &set_at, warnings);
    located
}

/// The documents as the elaborated file holds them: an application's own
/// component split off, templates dropped from a stack, every component
/// given its default verbs, secret outputs marked.
fn finish_documents(
    doc: &mut Manifest,
    component_docs: &mut Vec<Manifest>,
    app_env: &HashMap<String, String>,
    options: &Options,
    warnings: &mut Warnings,
) -> Result<(), ElaborateError> {
    if doc.kind == "application" {
        // Read again to name the line of a key; only applications need it.
        let source = SourceFile::read(&options.stack).ok();
        let at = |keys: &[&str]| match &source {
            Some(file) => key_location(file, keys),
            None => Location::file(&options.stack),
        };
        let app = application::split_off(doc, app_env, &at, warnings)?;
        component_docs.push(app);
    } else {
        doc.templates = Default::default();
    }
    for component in component_docs.iter_mut() {
        if component.lifecycle.verbs.is_empty() {
            component.lifecycle.verbs = vec!["deploy".into(), "undeploy".into()];
        }
        mark_secret_outputs(&mut component.outputs);
    }
    mark_secret_outputs(&mut doc.outputs);
    Ok(())
}

struct Assembler<'a> {
    options: &'a Options,
    warnings: &'a mut Warnings,
    /// Files parameters were read from ([`hub_manifest::declared::Mark::file`]).
    files: Vec<PathBuf>,
    /// Who wrote each of `files` (see [`hub_manifest::typos`]).
    origins: Vec<Origin>,
    /// Component instance → its `hub-component.yaml` in `files`.
    instances: HashMap<String, usize>,
    /// Some level (the stack or a parent) wrote a `lifecycle.order`.
    order_written: bool,
    /// The repository of the top stack: a parent in it is the user's own
    /// (its near typos are errors, see [`hub_manifest::typos`]).
    top_repository: Option<PathBuf>,
}

/// What the elaborated file records about its making: every file read
/// (the stack manifest first), the stack's folder, and whether the order
/// was derived.
fn recorded_provenance(
    options: &Options,
    files: &[PathBuf],
    order_written: bool,
) -> hub_manifest::Provenance {
    let mut sources: Vec<PathBuf> = Vec::with_capacity(files.len() + 1);
    let mut seen: HashSet<PathBuf> = HashSet::with_capacity(files.len() + 1);
    for file in std::iter::once(&options.stack).chain(files) {
        let file = absolute(file);
        if seen.insert(file.clone()) {
            sources.push(file);
        }
    }
    hub_manifest::Provenance {
        sources,
        stack_dir: Some(absolute(&stack_base_dir(&options.stack))),
        order_derived: !order_written,
    }
}

impl Assembler<'_> {
    /// `manifest_path` is where to read the manifest; `rel` is the folder of
    /// this level relative to the top stack's folder, used to rewrite paths.
    fn assemble(
        &mut self,
        manifest_path: &Path,
        rel: &Path,
        params_paths: &[PathBuf],
        excluded: &HashSet<String>,
        chain: &mut Vec<PathBuf>,
    ) -> Result<Level, ElaborateError> {
        let identity =
            std::fs::canonicalize(manifest_path).unwrap_or_else(|_| manifest_path.to_path_buf());
        if chain.contains(&identity) {
            let mut cycle = chain.clone();
            cycle.push(identity);
            return Err(ElaborateError::FromStackCycle { chain: cycle });
        }
        chain.push(identity);

        let top = chain.len() == 1;
        let origin = if top {
            Origin::Own
        } else {
            typos::parent_origin(self.top_repository.as_deref(), manifest_path)
        };
        let (manifest, file) = self.read_stack(manifest_path, top, origin)?;
        let params_files = self.read_params_files(params_paths, origin)?;

        let base = stack_base_dir(manifest_path);
        let own_docs = self.read_components(&manifest, &file, &base, excluded)?;
        check_duplicates(&manifest, &file)?;
        names::check_names(&manifest, &file)?;

        let parent = self.parent(&manifest, &file, &base, rel, excluded, chain)?;
        chain.pop();

        let own_order = self.own_order(&manifest, &file, parent.as_ref().map(|(_, p)| &p.doc))?;
        let mut builder =
            LevelBuilder::new(manifest, own_order, parent, self.options.base_dir.is_some());
        builder.add_component_docs(own_docs);
        let order = builder.merge_lifecycle().map_err(|e| {
            ElaborateError::from_order(e, key_location(&file, &["lifecycle", "order"]))
        })?;
        builder.doc.lifecycle.order = order;
        builder.merge_outputs(&params_files);
        builder.compute_requires_provides();
        let stack_file = self.files.len();
        self.files.push(manifest_path.to_path_buf());
        self.files
            .extend(params_files.iter().map(|(p, _)| p.clone()));
        self.origins.resize(self.files.len(), origin);
        let (parameters, traces, app_env) = builder.merge_parameters(
            &file.path,
            stack_file,
            &params_files,
            (&self.instances, &self.files),
            self.options,
            self.warnings,
        );
        Ok(Level {
            doc: builder.doc,
            component_docs: builder.component_docs,
            parameters,
            traces,
            app_env,
        })
    }

    /// The stack manifest of a level, its warnings marked as its origin's;
    /// the top one is warned about when it is not a stack or application.
    fn read_stack(
        &mut self,
        manifest_path: &Path,
        top: bool,
        origin: Origin,
    ) -> Result<(Manifest, SourceFile), ElaborateError> {
        let mut read = Warnings::new();
        let manifest = read_manifest(manifest_path, "stack", &mut read);
        self.warnings.append(typos::mark(read, origin));
        let (manifest, file) = manifest?;
        self.order_written |= !manifest.lifecycle.order.is_empty();
        if top && !matches!(manifest.kind.as_str(), "stack" | "application") {
            self.warnings.warn(
                Some(key_location(&file, &["kind"])),
                format!(
                    "manifest `kind` should be `stack` or `application`, found `{}`",
                    manifest.kind
                ),
            );
        }
        Ok((manifest, file))
    }

    /// The parameters files of a level, their warnings marked as its
    /// origin's.
    fn read_params_files(
        &mut self,
        params_paths: &[PathBuf],
        origin: Origin,
    ) -> Result<Vec<(PathBuf, ParamsFile)>, ElaborateError> {
        let mut read = Warnings::new();
        let params_files = params_paths
            .iter()
            .map(|p| read_params(p, &mut read).map(|f| (p.clone(), shrunk(f))))
            .collect::<Result<Vec<_>, _>>();
        self.warnings.append(typos::mark(read, origin));
        params_files.map_err(ElaborateError::Params)
    }

    /// The level of `meta.fromStack`, assembled without the components
    /// this level (or one below) declares; `None` without one.
    fn parent(
        &mut self,
        manifest: &Manifest,
        file: &SourceFile,
        base: &Path,
        rel: &Path,
        excluded: &HashSet<String>,
        chain: &mut Vec<PathBuf>,
    ) -> Result<Option<(String, Level)>, ElaborateError> {
        let from = manifest.meta.from_stack.as_str();
        if from.is_empty() {
            return Ok(None);
        }
        if manifest.kind == "application" {
            return Err(ElaborateError::ApplicationFromStack {
                location: key_location(file, &["meta", "fromStack"]),
            });
        }
        let parent_dir = base.join(from);
        let parent_params = self.parent_params(&parent_dir);
        let mut excluded = excluded.clone();
        excluded.extend(manifest.components.iter().map(|c| c.name.clone()));
        let parent_rel = clean(&rel.join(from));
        let level = self.assemble(
            &parent_dir.join("hub.yaml"),
            &parent_rel,
            &parent_params,
            &excluded,
            chain,
        )?;
        Ok(Some((from.to_string(), level)))
    }

    fn parent_params(&self, parent_dir: &Path) -> Vec<PathBuf> {
        let mut names = vec!["params.yaml".to_string()];
        if let Some(env) = self.options.env_name.as_deref().filter(|e| !e.is_empty()) {
            names.push(format!("params-{env}.yaml"));
        }
        names
            .into_iter()
            .map(|n| parent_dir.join(n))
            .filter(|p| p.is_file())
            .collect()
    }

    /// The level's own order: as written (and checked), or derived from
    /// `depends` when `lifecycle.order` is absent.
    fn own_order(
        &self,
        manifest: &Manifest,
        file: &SourceFile,
        parent: Option<&Manifest>,
    ) -> Result<Vec<String>, ElaborateError> {
        let names: Vec<String> = manifest.components.iter().map(|c| c.name.clone()).collect();
        if !manifest.lifecycle.order.is_empty() || names.is_empty() {
            order::validate(&names, &manifest.lifecycle.order).map_err(|e| {
                let at = order_entry_location(file, &manifest.lifecycle.order, &names)
                    .unwrap_or_else(|| key_location(file, &["lifecycle", "order"]));
                ElaborateError::from_order(e, at)
            })?;
            return Ok(manifest.lifecycle.order.clone());
        }
        let external: HashSet<&str> = parent
            .map(|p| p.components.iter().map(|c| c.name.as_str()).collect())
            .unwrap_or_default();
        let components: Vec<(String, Vec<String>)> = manifest
            .components
            .iter()
            .map(|c| (c.name.clone(), c.depends.to_vec()))
            .collect();
        order::generate(&components, &external).map_err(|e| match e {
            order::OrderError::Undefined(names) => {
                undefined_dependencies(file, manifest, &external, names)
            }
            order::OrderError::Cycle(ref cycle) => {
                let at = component_location(file, manifest, &cycle[0]);
                ElaborateError::from_order(e, at)
            }
            _ => ElaborateError::from_order(e, key_location(file, &["components"])),
        })
    }

    fn read_components(
        &mut self,
        manifest: &Manifest,
        file: &SourceFile,
        base: &Path,
        excluded: &HashSet<String>,
    ) -> Result<Vec<Manifest>, ElaborateError> {
        let components_base = self
            .options
            .base_dir
            .clone()
            .unwrap_or_else(|| base.to_path_buf());
        let references: Vec<&ComponentRef> = manifest
            .components
            .iter()
            .filter(|c| !excluded.contains(&c.name))
            .collect();
        let dirs: Vec<Option<PathBuf>> = references
            .iter()
            .map(|r| component_dir(r, base, &components_base))
            .collect();
        // Each folder is read once however many instances share it, all
        // folders at once; the results are then taken in the stack's order,
        // so warnings and errors are those of reading one after the other.
        let mut slots: HashMap<&PathBuf, usize> = HashMap::new();
        let mut folders: Vec<&PathBuf> = Vec::new();
        let mut uses: Vec<usize> = Vec::new();
        for dir in dirs.iter().map_while(Option::as_ref) {
            let slot = *slots.entry(dir).or_insert_with(|| {
                folders.push(dir);
                uses.push(0);
                folders.len() - 1
            });
            uses[slot] += 1;
        }
        let mut loaded = read_component_manifests(&folders);
        let mut files: Vec<Option<usize>> = vec![None; folders.len()];
        let mut docs = Vec::with_capacity(references.len());
        for (reference, dir) in references.iter().zip(&dirs) {
            let Some((dir, &slot)) = dir.as_ref().and_then(|d| slots.get_key_value(d)) else {
                return Err(ElaborateError::NoSource {
                    component: reference.name.clone(),
                    location: component_location(file, manifest, &reference.name),
                });
            };
            let (result, found) = loaded[slot]
                .take()
                .unwrap_or_else(|| read_component_manifest(dir));
            for w in found.iter() {
                self.warnings.push(Warning {
                    origin: Origin::Foreign,
                    ..w.clone()
                });
            }
            let mut doc = result.map_err(|source| ElaborateError::Component {
                component: reference.name.clone(),
                referenced_from: file.path.clone(),
                entry: Box::new(source_dir_location(file, manifest, &reference.name)),
                closest: closest_folder(dir, &reference.source.dir),
                source: Box::new(source),
            })?;
            if files[slot].is_none() {
                files[slot] = Some(self.files.len());
                self.files.push(dir.join("hub-component.yaml"));
                self.origins.push(Origin::Foreign);
            }
            if let Some(file) = files[slot] {
                self.instances.insert(reference.name.clone(), file);
            }
            uses[slot] -= 1;
            if uses[slot] > 0 {
                // The folder's warnings were reported with its first
                // instance, just above.
                loaded[slot] = Some((Ok(doc.clone()), Warnings::already_reported()));
            }
            rename_component(&mut doc, &reference.name);
            docs.push(doc);
        }
        Ok(docs)
    }
}

/// A parameters file without the room its lists grew into while decoded
/// (a third of its parameters' memory; it is held until the level's
/// parameters are merged).
fn shrunk(mut file: ParamsFile) -> ParamsFile {
    file.parameters.shrink_to_fit();
    file.outputs.shrink_to_fit();
    file
}

type ReadComponent = (Result<Manifest, ManifestError>, Warnings);

/// Stacks with fewer component folders are read on one thread.
const PARALLEL_FROM: usize = 8;

fn read_component_manifest(dir: &Path) -> ReadComponent {
    let mut warnings = Warnings::new();
    let result = read_manifest(&dir.join("hub-component.yaml"), "component", &mut warnings)
        .map(|(doc, _)| doc);
    (result, warnings)
}

/// Reads the manifest of every folder, on all cores (four folders a thread
/// at least). Each slot is taken by the first component of its folder;
/// another one of the same folder reads it again.
fn read_component_manifests(folders: &[&PathBuf]) -> Vec<Option<ReadComponent>> {
    let spread = Spread {
        smallest_share: PARALLEL_FROM / 2,
        most_threads: usize::MAX,
    };
    parallel::map(folders, spread, |dir| Some(read_component_manifest(dir)))
}

/// The folder holding a component's `hub-component.yaml`.
fn component_dir(reference: &ComponentRef, base: &Path, components_base: &Path) -> Option<PathBuf> {
    let source = &reference.source;
    if !source.dir.is_empty() {
        return Some(clean(&base.join(&source.dir)));
    }
    let git = source.git.as_ref()?;
    if !git.local_dir.is_empty() {
        let local = Path::new(&git.local_dir).join(&git.sub_dir);
        return Some(if local.is_absolute() {
            local
        } else {
            clean(&components_base.join(local))
        });
    }
    if !git.remote.is_empty() {
        return Some(clean(
            &components_base.join(&reference.name).join(&git.sub_dir),
        ));
    }
    None
}

/// The instance takes the name the stack gives it; the manifest's own name
/// is kept as `origin` and `kind`.
fn rename_component(doc: &mut Manifest, instance: &str) {
    let original = std::mem::take(&mut doc.meta.name);
    if doc.meta.origin.is_empty() {
        doc.meta.origin.clone_from(&original);
    }
    if doc.meta.kind.is_empty() {
        doc.meta.kind = original;
    }
    doc.meta.name = instance.to_string();
    for p in &mut doc.parameters {
        p.component = instance.to_string();
    }
}

fn check_duplicates(manifest: &Manifest, file: &SourceFile) -> Result<(), ElaborateError> {
    let mut seen = HashSet::new();
    for (i, c) in manifest.components.iter().enumerate() {
        let at = || {
            let entry = [Segment::Key("components".into()), Segment::Index(i)];
            let (line, column) = locate(&file.text, &entry).unwrap_or((1, 1));
            Location::at(&file.path, line, column)
        };
        if c.name.trim().is_empty() {
            return Err(ElaborateError::UnnamedComponent { location: at() });
        }
        if let Err(error) = hub_manifest::names::check_component_name(&c.name) {
            let name = [
                Segment::Key("components".into()),
                Segment::Index(i),
                Segment::Key("name".into()),
            ];
            let (line, column) = locate(&file.text, &name).unwrap_or((1, 1));
            let location = Location::at(&file.path, line, column);
            return Err(ElaborateError::BadComponentName { error, location });
        }
        if !seen.insert(c.name.as_str()) {
            return Err(ElaborateError::DuplicateComponent {
                component: c.name.clone(),
                location: at(),
            });
        }
    }
    Ok(())
}

/// Points at the first `depends` entry naming an undefined component, with
/// the defined component it may stand for.
fn undefined_dependencies(
    file: &SourceFile,
    manifest: &Manifest,
    external: &HashSet<&str>,
    names: Vec<String>,
) -> ElaborateError {
    let first = &names[0];
    let entry = manifest.components.iter().enumerate().find_map(|(i, c)| {
        let j = c.depends.iter().position(|d| d == first)?;
        Some((i, j))
    });
    let location = entry
        .and_then(|(i, j)| {
            let list = [
                Segment::Key("components".into()),
                Segment::Index(i),
                Segment::Key("depends".into()),
            ];
            locate_entry(&file.text, &list, j, first)
        })
        .map_or_else(
            || key_location(file, &["components"]),
            |(line, column)| Location::at(&file.path, line, column),
        );
    let mut defined: Vec<String> = manifest.components.iter().map(|c| c.name.clone()).collect();
    defined.extend(external.iter().map(|n| n.to_string()));
    let suggestion = suggest(first, &defined).map(|s| s.key.to_string());
    ElaborateError::UndefinedDependencies {
        names,
        suggestion,
        location,
    }
}

/// The first entry of `lifecycle.order` that names no component, or names
/// one a second time.
fn order_entry_location(file: &SourceFile, order: &[String], names: &[String]) -> Option<Location> {
    let index = order::first_stray_entry(order, names)?;
    let list = [
        Segment::Key("lifecycle".into()),
        Segment::Key("order".into()),
    ];
    let (line, column) = locate_entry(&file.text, &list, index, &order[index])?;
    Some(Location::at(&file.path, line, column))
}

fn key_location(file: &SourceFile, keys: &[&str]) -> Location {
    let path: Vec<Segment> = keys.iter().map(|k| Segment::Key(k.to_string())).collect();
    match locate(&file.text, &path) {
        Some((line, column)) => Location::at(&file.path, line, column),
        None => Location::file(&file.path),
    }
}

/// The line of the component's `source.dir` in the stack, else its entry.
fn source_dir_location(file: &SourceFile, manifest: &Manifest, name: &str) -> Location {
    let index = manifest.components.iter().position(|c| c.name == name);
    let path = index.map(|index| {
        [
            Segment::Key("components".into()),
            Segment::Index(index),
            Segment::Key("source".into()),
            Segment::Key("dir".into()),
        ]
    });
    match path.and_then(|path| locate(&file.text, &path)) {
        Some((line, column)) => Location::at(&file.path, line, column),
        None => component_location(file, manifest, name),
    }
}

/// A folder beside `dir` (missing) whose name is close to its name and
/// which holds a component manifest: `written` (the `source.dir` as the
/// stack gives it) with its last part replaced.
fn closest_folder(dir: &Path, written: &str) -> Option<String> {
    let missing = dir.file_name()?.to_str()?;
    let entries = std::fs::read_dir(dir.parent()?).ok()?;
    // Bounded: `source.dir` is what a stack says, and may name any folder.
    let folders: Vec<String> = entries
        .take(4096)
        .filter_map(Result::ok)
        .filter(|e| e.path().join("hub-component.yaml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    let found = hub_manifest::keys::suggest(missing, &folders)?;
    let written = written.trim_end_matches('/');
    Some(match written.rsplit_once('/') {
        Some((parent, _)) => format!("{parent}/{}", found.key),
        None => found.key.to_string(),
    })
}

fn component_location(file: &SourceFile, manifest: &Manifest, name: &str) -> Location {
    let index = manifest
        .components
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(0);
    match locate(
        &file.text,
        &[Segment::Key("components".into()), Segment::Index(index)],
    ) {
        Some((line, column)) => Location::at(&file.path, line, column),
        None => Location::file(&file.path),
    }
}

#[cfg(test)]
mod tests;
