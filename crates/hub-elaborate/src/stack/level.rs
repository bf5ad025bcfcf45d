//! Building one level's document from the child manifest and its assembled
//! parent: component references, outputs, provides and environment merged.

use crate::params::{Origin, ParamTable, Trace, Traced};
use crate::paths::rebase;
use crate::{order, tuning, Options, ENVIRONMENT_PROVIDED};
use hub_manifest::diag::Warnings;
use hub_manifest::secrets::looks_secret;
use hub_manifest::{ComponentRef, Manifest, Output, Parameter, ParamsFile, Policy};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One assembled level: the stack document without its parameters, the
/// component documents, and the merged parameters.
pub(super) struct Level {
    pub(super) doc: Manifest,
    pub(super) component_docs: Vec<Manifest>,
    pub(super) parameters: Vec<Parameter>,
    /// Where each of `parameters` comes from.
    pub(super) traces: Vec<Trace>,
    /// For applications: the `env` of the stack's own parameters.
    pub(super) app_env: HashMap<String, String>,
}

/// Builds one level's document from the child manifest and its assembled parent.
pub(super) struct LevelBuilder {
    pub(super) doc: Manifest,
    pub(super) manifest: Manifest,
    pub(super) own_order: Vec<String>,
    pub(super) parent: Option<Level>,
    pub(super) component_docs: Vec<Manifest>,
}

impl LevelBuilder {
    pub(super) fn new(
        manifest: Manifest,
        own_order: Vec<String>,
        parent: Option<(String, Level)>,
        has_base_dir: bool,
    ) -> Self {
        let mut doc = Manifest {
            version: manifest.version,
            kind: manifest.kind.clone(),
            meta: manifest.meta.clone(),
            requires: Vec::new(),
            provides: Vec::new(),
            platform: manifest.platform.clone(),
            lifecycle: manifest.lifecycle.clone(),
            outputs: Vec::new(),
            templates: manifest.templates.clone(),
            moved: manifest.moved.clone(),
            policies: manifest.policies.clone(),
            ci: manifest.ci.clone(),
            ..Manifest::default()
        };
        doc.meta.from_stack.clear();
        let mut component_docs = Vec::new();
        let parent = parent.map(|(from, mut level)| {
            let own: HashSet<&str> = manifest
                .components
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            level
                .component_docs
                .retain(|d| !own.contains(d.meta.name.as_str()));
            component_docs = std::mem::take(&mut level.component_docs);
            for reference in &mut level.doc.components {
                rewrite_parent_ref(reference, Path::new(&from), has_base_dir);
            }
            level
        });
        doc.components = merge_refs(
            parent
                .as_ref()
                .map(|p| &p.doc.components[..])
                .unwrap_or(&[]),
            &manifest.components,
        );
        if let Some(p) = &parent {
            let mut annotations = p.doc.meta.annotations.clone();
            annotations.extend(doc.meta.annotations.clone());
            doc.meta.annotations = annotations;
            doc.platform.provides = union(&p.doc.platform.provides, &manifest.platform.provides);
        }
        LevelBuilder {
            doc,
            manifest,
            own_order,
            parent,
            component_docs,
        }
    }

    pub(super) fn add_component_docs(&mut self, docs: Vec<Manifest>) {
        // Kept until the document is written: without the room their
        // lists grew into while decoded.
        self.component_docs.extend(docs.into_iter().map(|mut doc| {
            doc.shrink_to_fit();
            doc
        }));
    }

    pub(super) fn merge_lifecycle(&mut self) -> Result<Vec<String>, order::OrderError> {
        let Some(parent) = &self.parent else {
            return Ok(self.own_order.clone());
        };
        let (p, c) = (&parent.doc.lifecycle, &self.manifest.lifecycle);
        let l = &mut self.doc.lifecycle;
        l.verbs = union(&p.verbs, &c.verbs);
        l.mandatory = union(&p.mandatory, &c.mandatory);
        l.optional = union(&p.optional, &c.optional);
        l.ready_conditions = p
            .ready_conditions
            .iter()
            .chain(&c.ready_conditions)
            .cloned()
            .collect();
        l.requires.optional = tuning::merge(&p.requires.optional, &c.requires.optional);
        // The nearer level's entry for a component wins.
        l.timeouts = p.timeouts.clone();
        l.timeouts
            .extend(c.timeouts.iter().map(|(k, v)| (k.clone(), v.clone())));
        // `watch` and `wants`: the nearer level's entry for a component
        // replaces the parent's.
        l.watch = p.watch.clone();
        l.watch
            .extend(c.watch.iter().map(|(k, v)| (k.clone(), v.clone())));
        l.wants = p.wants.clone();
        l.wants
            .extend(c.wants.iter().map(|(k, v)| (k.clone(), v.clone())));
        // Issue 26 (items 4, 6, 7): the list appends, the maps take the
        // nearer level's entry for a component.
        l.trigger_always = union(&p.trigger_always, &c.trigger_always);
        l.ignore_changes = p.ignore_changes.clone();
        l.ignore_changes
            .extend(c.ignore_changes.iter().map(|(k, v)| (k.clone(), v.clone())));
        l.replace_triggered_by = p.replace_triggered_by.clone();
        l.replace_triggered_by.extend(
            c.replace_triggered_by
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        l.protected = union(&p.protected, &c.protected);
        self.doc.moved = (parent.doc.moved.iter())
            .chain(&self.manifest.moved)
            .cloned()
            .collect();
        self.doc.policies = merge_policies(&parent.doc.policies, &self.manifest.policies);
        if self.manifest.ci.is_empty() {
            self.doc.ci = parent.doc.ci.clone();
        }
        l.retry = p.retry.clone();
        l.retry
            .extend(c.retry.iter().map(|(k, v)| (k.clone(), v.clone())));
        // Issue 28 (branch `pipeline`): the nearer level's entry wins.
        l.runners = p.runners.clone();
        l.runners
            .extend(c.runners.iter().map(|(k, v)| (k.clone(), v.clone())));
        if !p.bare.is_empty() {
            l.bare.clone_from(&p.bare);
        }
        if c.options.is_empty() {
            l.options = p.options.clone();
        }
        order::merge(&p.order, &self.own_order)
    }

    pub(super) fn merge_outputs(&mut self, params_files: &[(PathBuf, ParamsFile)]) {
        let mut outputs: Vec<Output> = self
            .parent
            .as_ref()
            .map(|p| p.doc.outputs.clone())
            .unwrap_or_default();
        if self.parent.is_some() {
            merge_outputs_into(&mut outputs, &self.manifest.outputs);
        } else {
            outputs = self.manifest.outputs.clone();
        }
        for (_, params) in params_files {
            merge_outputs_into(&mut outputs, &params.outputs);
        }
        self.doc.outputs = outputs;
    }

    pub(super) fn compute_requires_provides(&mut self) {
        let parent_provides: Vec<String> = self
            .parent
            .as_ref()
            .map(|p| p.doc.provides.clone())
            .unwrap_or_default();
        let mut provided: HashSet<String> = HashSet::new();
        let add_provided = |provided: &mut HashSet<String>, cap: &str| {
            provided.insert(cap.to_string());
            if cap == "kubernetes" {
                provided.insert("kubectl".into());
            }
        };
        for cap in &parent_provides {
            add_provided(&mut provided, cap);
        }
        let mut level: BTreeSet<String> = self
            .manifest
            .requires
            .iter()
            .filter(|r| !provided.contains(*r))
            .cloned()
            .collect();
        let own_docs: HashMap<&str, &Manifest> = self
            .component_docs
            .iter()
            .map(|d| (d.meta.name.as_str(), d))
            .collect();
        for name in &self.own_order {
            let Some(doc) = own_docs.get(name.as_str()) else {
                continue;
            };
            level.extend(
                doc.requires
                    .iter()
                    .filter(|r| !provided.contains(*r))
                    .cloned(),
            );
            for cap in &doc.provides {
                add_provided(&mut provided, cap);
            }
        }
        let mut requires = self
            .parent
            .as_ref()
            .map(|p| p.doc.requires.clone())
            .unwrap_or_default();
        for r in level {
            if !requires.contains(&r) {
                requires.push(r);
            }
        }
        self.doc.requires = requires;
        let provides: BTreeSet<String> = parent_provides
            .into_iter()
            .chain(self.manifest.provides.iter().cloned())
            .chain(
                self.component_docs
                    .iter()
                    .flat_map(|d| d.provides.iter().cloned()),
            )
            .collect();
        self.doc.provides = provides.into_iter().collect();
    }

    /// The merged parameters and their traces. `stack_file` is the
    /// manifest's number in the provenance files; the parameters files
    /// follow it. `instances` gives each component instance's manifest in
    /// `files`.
    pub(super) fn merge_parameters(
        &mut self,
        stack_path: &Path,
        stack_file: usize,
        params_files: &[(PathBuf, ParamsFile)],
        (instances, files): (&HashMap<String, usize>, &[PathBuf]),
        options: &Options,
        warnings: &mut Warnings,
    ) -> (Vec<Parameter>, Vec<Trace>, HashMap<String, String>) {
        let ranks: HashMap<String, usize> = self
            .doc
            .components
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        let own: HashSet<&str> = self
            .manifest
            .components
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let own_docs = || {
            self.component_docs
                .iter()
                .filter(|d| own.contains(d.meta.name.as_str()))
        };
        // At most one entry per parameter of a source (a group's members
        // are more: the lists then grow); of the components' own, only
        // those that become user parameters of the stack enter.
        let becomes_user = |p: &&Parameter| {
            p.kind == "user"
                || (p.kind.is_empty() && (!p.from_env().is_empty() || !p.from_file().is_empty()))
        };
        let capacity = own_docs()
            .map(|d| d.parameters.iter().filter(becomes_user).count())
            .sum::<usize>()
            + self.parent.as_ref().map_or(0, |p| p.parameters.len())
            + self.manifest.parameters.len()
            + params_files
                .iter()
                .map(|(_, f)| f.parameters.len())
                .sum::<usize>();
        let mut table = ParamTable::with_capacity(capacity);
        for doc in own_docs() {
            let component_file = instances
                .get(&doc.meta.name)
                .and_then(|&i| files.get(i))
                .cloned()
                .unwrap_or_else(|| PathBuf::from(format!("{}/hub-component.yaml", doc.meta.name)));
            let origin = Origin::Component {
                instance: &doc.meta.name,
                file: &component_file,
            };
            // Every instance read has its file; a number past the end
            // would point nowhere.
            let traced = Traced::File(instances.get(&doc.meta.name).copied().unwrap_or(usize::MAX));
            table.add_source(&doc.parameters, origin, &ranks, traced, warnings);
        }
        if let Some(parent) = &self.parent {
            let traced = Traced::Parent(&parent.traces);
            table.add_source(&parent.parameters, Origin::Parent, &ranks, traced, warnings);
        }
        let application = self.manifest.kind == "application";
        let mut app_env = HashMap::new();
        let mut sources: Vec<(&Path, &[Parameter])> = vec![(stack_path, &self.manifest.parameters)];
        sources.extend(
            params_files
                .iter()
                .map(|(p, f)| (p.as_path(), &f.parameters[..])),
        );
        for (number, (file, params)) in sources.into_iter().enumerate() {
            if application {
                collect_env(params, &mut app_env);
            }
            table.add_source(
                params,
                Origin::Stack { file, application },
                &ranks,
                Traced::File(stack_file + number),
                warnings,
            );
        }
        table.apply_overrides(&options.overrides);
        let (parameters, traces) = table.into_sorted();
        (parameters, traces, app_env)
    }
}

pub(super) fn collect_env(params: &[Parameter], env: &mut HashMap<String, String>) {
    for p in params {
        if p.component.is_empty() && !p.env.is_empty() {
            env.insert(p.name.clone(), p.env.clone());
        }
    }
}

/// Makes a parent's component reference valid from the child's folder.
pub(super) fn rewrite_parent_ref(reference: &mut ComponentRef, from: &Path, has_base_dir: bool) {
    let source = &mut reference.source;
    if !source.dir.is_empty() {
        source.dir = rebase(from, &source.dir);
        return;
    }
    if has_base_dir {
        return;
    }
    if let Some(git) = &mut source.git {
        if !git.local_dir.is_empty() {
            git.local_dir = rebase(from, &git.local_dir);
        } else if !git.remote.is_empty() {
            git.local_dir = rebase(from, &reference.name);
        }
    }
}

/// The parent's references in its order, each replaced in place by the
/// child's reference of the same name; the child's new ones appended.
pub(super) fn merge_refs(parent: &[ComponentRef], child: &[ComponentRef]) -> Vec<ComponentRef> {
    let by_name: HashMap<&str, &ComponentRef> =
        child.iter().map(|c| (c.name.as_str(), c)).collect();
    let parent_names: HashSet<&str> = parent.iter().map(|c| c.name.as_str()).collect();
    parent
        .iter()
        .map(|p| {
            by_name
                .get(p.name.as_str())
                .map_or_else(|| p.clone(), |c| (*c).clone())
        })
        .chain(
            child
                .iter()
                .filter(|c| !parent_names.contains(c.name.as_str()))
                .cloned(),
        )
        .collect()
}

pub(super) fn merge_outputs_into(outputs: &mut Vec<Output>, incoming: &[Output]) {
    for o in incoming {
        match outputs.iter_mut().find(|e| e.name == o.name) {
            Some(existing) => existing.update_from(o),
            None => outputs.push(o.clone()),
        }
    }
}

pub(super) fn union(first: &[String], second: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(first.len() + second.len());
    for item in first.iter().chain(second) {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

pub(super) fn apply_platform_provides(doc: &mut Manifest, platform: &[String]) {
    if platform.is_empty() {
        return;
    }
    doc.requires
        .retain(|r| ENVIRONMENT_PROVIDED.contains(&r.as_str()) || !platform.contains(r));
    let mut sorted = platform.to_vec();
    sorted.sort();
    doc.platform.provides = union(&doc.platform.provides, &sorted);
}

pub(super) fn mark_secret_outputs(outputs: &mut [Output]) {
    for o in outputs
        .iter_mut()
        .filter(|o| o.kind.is_empty() && looks_secret(&o.name))
    {
        o.kind = "secret".into();
    }
}

/// A parent's policies, then the child's: a child's rule of the same name
/// takes the parent's place.
pub(super) fn merge_policies(parent: &[Policy], own: &[Policy]) -> Vec<Policy> {
    let mut out = parent.to_vec();
    for rule in own {
        match out.iter_mut().find(|p| p.name == rule.name) {
            Some(slot) => *slot = rule.clone(),
            None => out.push(rule.clone()),
        }
    }
    out
}
