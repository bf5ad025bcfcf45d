//! What `hub params` prints: the locked stack parameters, or one
//! component's expanded parameters, each with its value (secrets masked)
//! and where the value came from.

use crate::error::Error;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::redact::Redactor;
use hub_manifest::{parse_elaborated, SourceFile};
use hub_params::drift::{self, DriftUse};
use hub_params::state::StateView;
use hub_params::{
    expand_component, lock_owned, ComponentScope, ExpandedParam, LockOptions, Locked, LockedParam,
    Origin, ParamsError, Prompter,
};
use indexmap::IndexMap;
use std::path::Path;
use yaml_serde::{Mapping, Value};

/// The inputs of `hub params`, already parsed.
pub struct ReportOptions<'a> {
    pub elaborated: &'a Path,
    pub state: Option<&'a Path>,
    pub overrides: &'a IndexMap<String, String>,
    pub environment: &'a dyn Fn(&str) -> Option<String>,
    pub prompter: Option<&'a mut dyn Prompter>,
    pub component: Option<&'a str>,
    pub json: bool,
    pub redactor: Redactor,
}

/// Locks (and, with a component, expands) and renders the result.
pub fn params_report(options: ReportOptions<'_>, warnings: &mut Warnings) -> Result<String, Error> {
    let source = SourceFile::read(options.elaborated)?;
    let mut elaborated = parse_elaborated(&source, warnings)?;
    let state = options
        .state
        .map(|path| StateView::read(path, warnings))
        .transpose()?;
    let lock_options = LockOptions {
        source: Some(&source),
        scanned: None,
        declared: None,
        overrides: options.overrides,
        environment: options.environment,
        prompter: options.prompter.map(|p| p as &mut dyn Prompter),
        state: state.as_ref(),
        deployment_id: (options.environment)("HUB_DEPLOYMENT_ID").filter(|id| !id.is_empty()),
        stack_name: (options.environment)("HUB_STACK_NAME"),
    };
    // What is read of the stack's own parameter list is read before the
    // lock takes it (each value moved into the lock, not copied).
    let unread = Unread::of(&elaborated);
    if options.component.is_none() {
        // Nothing after the lock reads the component documents either.
        elaborated.components = Vec::new();
    }
    let parameters = std::mem::take(&mut elaborated.stack.parameters);
    let locked = lock_owned(&elaborated.stack, parameters, lock_options, warnings)?;
    if let Some(path) = options.state {
        let at = Some(Location::file(path));
        drift::warn(&locked.drift, DriftUse::Read, at, &|_| false, warnings);
    }
    if options.component.is_none() && !options.json && !locked.params.is_empty() {
        // The text reads the locked parameters only: the document and its
        // text (as large as the locked parameters at scale) go first.
        drop(elaborated);
        drop(source);
        return Ok(stack_text(&locked, &options.redactor, &unread));
    }
    let document = match options.component {
        None => stack_document(&locked, &options.redactor, &unread),
        Some(name) => {
            let reference = elaborated.stack.components.iter().find(|c| c.name == name);
            let position = elaborated
                .components
                .iter()
                .position(|c| c.meta.name == name);
            let (Some(reference), Some(position)) = (reference, position) else {
                return Err(ParamsError::UnknownComponent {
                    name: name.to_string(),
                    available: elaborated
                        .stack
                        .components
                        .iter()
                        .map(|c| c.name.clone())
                        .collect(),
                }
                .into());
            };
            let outputs = state
                .as_ref()
                .map(|s| s.outputs_before(name, &reference.depends, warnings))
                .unwrap_or_default();
            let scope = ComponentScope {
                name,
                depends: &reference.depends,
                manifest: &elaborated.components[position],
                outputs: &outputs,
                provides: state.as_ref().map(|s| s.provides()).unwrap_or_default(),
                source: Some((&source, position + 1)),
            };
            let expanded = expand_component(&locked, &scope, warnings)?;
            component_document(name, &expanded, &locked, &options.redactor)
        }
    };
    let text = if options.json {
        serde_json::to_string_pretty(&document).map_err(|e| Error::Write {
            path: "-".into(),
            source: std::io::Error::other(e),
        })? + "\n"
    } else {
        // hub's own writer: as the elaborated file is written, and faster
        // than a serializer on 100,000 parameters.
        hub_manifest::emit::document(&document)
    };
    Ok(text)
}

fn entry(fields: Vec<(&str, Value)>) -> Value {
    let mut map = Mapping::new();
    for (key, value) in fields {
        map.insert(Value::String(key.to_string()), value);
    }
    Value::Mapping(map)
}

fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

fn location_text(location: &Option<Location>) -> Option<Value> {
    location.as_ref().map(|l| text(l.to_string()))
}

fn stack_document(locked: &Locked, redactor: &Redactor, unread: &Unread) -> Value {
    let params: Vec<Value> = locked
        .params
        .values()
        .map(|p| stack_entry(p, redactor, unread))
        .collect();
    entry(vec![("parameters", Value::Sequence(params))])
}

/// The text `emit::document(&stack_document(..))` writes, one entry at a
/// time: the document's value tree is about twenty times its text
/// (a gigabyte at 200,000 parameters).
fn stack_text(locked: &Locked, redactor: &Redactor, unread: &Unread) -> String {
    let mut out = String::from("parameters:\n");
    for p in locked.params.values() {
        hub_manifest::emit::item(&stack_entry(p, redactor, unread), 0, &mut out);
    }
    out
}

/// The stack parameters nothing reads, by qualified name, with what each
/// most likely stands for.
struct Unread(std::collections::HashMap<String, Option<String>>);

impl Unread {
    fn of(elaborated: &hub_manifest::Elaborated) -> Unread {
        let found = hub_elaborate::unread_in(elaborated)
            .into_iter()
            .map(|u| (u.qualified, u.close.map(|(name, _)| name)));
        Unread(found.collect())
    }

    /// `nothing reads it (did you mean `app.replicas`?)`, for a parameter
    /// nothing reads.
    fn note(&self, qualified: &str) -> Option<String> {
        let close = self.0.get(qualified)?;
        Some(match close {
            Some(name) => format!("nothing reads it (did you mean `{name}`?)"),
            None => "nothing reads it".to_string(),
        })
    }
}

fn stack_entry(p: &LockedParam, redactor: &Redactor, unread: &Unread) -> Value {
    let mut fields = vec![("name", text(p.name()))];
    if !p.component().is_empty() {
        fields.push(("component", text(p.component())));
    }
    fields.push((
        "value",
        redactor.value(p.name(), "", p.secret, p.value.as_ref()),
    ));
    if !p.env().is_empty() {
        fields.push(("env", text(p.env())));
    }
    let from = match (p.origin(), p.expression()) {
        (Origin::Value, Some(_)) => "expression".to_string(),
        (origin, _) => origin.to_string(),
    };
    fields.push(("from", text(from)));
    if let Some(expression) = p.expression() {
        fields.push((
            "expression",
            text(redactor.text(p.name(), "", false, expression)),
        ));
    }
    if let Some(declared) = location_text(&p.declared()) {
        fields.push(("declared", declared));
    }
    if let Some(note) = unread.note(p.key()) {
        fields.push(("unread", text(note)));
    }
    entry(fields)
}

fn component_document(
    name: &str,
    params: &[ExpandedParam],
    locked: &Locked,
    redactor: &Redactor,
) -> Value {
    let entries: Vec<Value> = params
        .iter()
        .map(|p| component_entry(p, locked, redactor))
        .collect();
    entry(vec![
        ("component", text(name)),
        ("parameters", Value::Sequence(entries)),
    ])
}

fn component_entry(p: &ExpandedParam, locked: &Locked, redactor: &Redactor) -> Value {
    let mut fields = vec![
        ("name", text(&p.name)),
        (
            "value",
            redactor.value(&p.name, "", p.secret, p.value.as_ref()),
        ),
    ];
    if !p.env.is_empty() {
        fields.push(("env", text(&p.env)));
    }
    let from = match &p.origin {
        Origin::Found { key } => match locked.get(key) {
            Some(stack) => match stack.declared() {
                Some(at) => format!("stack parameter {key} ({at})"),
                None => format!("stack parameter {key}"),
            },
            None if key == "hub.componentName" => "implicit".to_string(),
            None => format!("output {key}"),
        },
        Origin::Value if p.expression.is_some() => "expression".to_string(),
        other => other.to_string(),
    };
    fields.push(("from", text(from)));
    if let Some(expression) = &p.expression {
        fields.push((
            "expression",
            text(redactor.text(&p.name, "", false, expression)),
        ));
    }
    if let Some(declared) = location_text(&p.declared) {
        fields.push(("declared", declared));
    }
    entry(fields)
}
