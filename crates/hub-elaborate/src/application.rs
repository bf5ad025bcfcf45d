//! `kind: application`: a stack manifest that is also a component of its own.

use super::ElaborateError;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{value_is_empty, ComponentRef, Lifecycle, Manifest, Output, Parameter};
use std::collections::HashMap;

/// Turns the application into an extra component appended to the stack and
/// returns that component's document.
pub fn split_off(
    doc: &mut Manifest,
    env: &HashMap<String, String>,
    at: &dyn Fn(&[&str]) -> Location,
    warnings: &mut Warnings,
) -> Result<Manifest, ElaborateError> {
    let name = doc
        .meta
        .name
        .split(':')
        .next()
        .unwrap_or_default()
        .to_string();
    if doc.lifecycle.order.contains(&name) {
        return Err(ElaborateError::ApplicationNameClash {
            name,
            location: at(&["meta", "name"]),
        });
    }
    warn_without_bare(doc, &name, at, warnings);
    doc.components.push(ComponentRef {
        name: name.clone(),
        source: doc.meta.source.clone(),
        ..ComponentRef::default()
    });
    doc.lifecycle.order.push(name.clone());

    let mut meta = doc.meta.clone();
    meta.name = name.clone();
    let lifecycle = Lifecycle {
        bare: doc.lifecycle.bare.clone(),
        verbs: doc.lifecycle.verbs.clone(),
        ready_conditions: doc.lifecycle.ready_conditions.clone(),
        requires: doc.lifecycle.requires.clone(),
        options: doc.lifecycle.options.clone(),
        ..Lifecycle::default()
    };
    let parameters = doc
        .parameters
        .iter()
        .filter(|p| p.component.is_empty() || p.component == name)
        .map(|p| Parameter {
            name: p.name.clone(),
            env: env.get(&p.name).cloned().unwrap_or_default(),
            ..Parameter::default()
        })
        .collect();
    let outputs = take_outputs(doc, &name);
    let templates = std::mem::take(&mut doc.templates);
    Ok(Manifest {
        version: doc.version,
        kind: "component".into(),
        meta,
        requires: doc.requires.clone(),
        provides: doc.provides.clone(),
        lifecycle,
        outputs,
        parameters,
        templates,
        ..Manifest::default()
    })
}

/// An application should say `lifecycle.bare: allow`: warns when it says
/// nothing or something else.
fn warn_without_bare(
    doc: &Manifest,
    name: &str,
    at: &dyn Fn(&[&str]) -> Location,
    warnings: &mut Warnings,
) {
    match doc.lifecycle.bare.as_str() {
        "allow" => {}
        "" => {
            // The line of `lifecycle`, else of `kind: application`.
            let mut location = at(&["lifecycle"]);
            if location.line.is_none() {
                location = at(&["kind"]);
            }
            warnings.warn(
                Some(location),
                format!("application `{name}` does not set `lifecycle.bare`; an application should set `lifecycle.bare: allow`"),
            );
        }
        other => warnings.warn(
            Some(at(&["lifecycle", "bare"])),
            format!("application `{name}` should set `lifecycle.bare: allow`, found `{other}`"),
        ),
    }
}

/// The outputs the application produces itself, for its component; the
/// stack's own become references to them (`${NAME:OUTPUT}`).
fn take_outputs(doc: &mut Manifest, name: &str) -> Vec<Output> {
    let produced = |o: &Output| !value_is_empty(&o.value) || !o.from_tf_var.is_empty();
    let outputs: Vec<Output> = doc
        .outputs
        .iter()
        .filter(|o| produced(o))
        .cloned()
        .collect();
    for o in doc.outputs.iter_mut().filter(|o| produced(o)) {
        *o = Output {
            name: o.name.clone(),
            brief: std::mem::take(&mut o.brief),
            description: std::mem::take(&mut o.description),
            value: Some(format!("${{{name}:{}}}", o.name).into()),
            ..Output::default()
        };
    }
    outputs
}
