//! The names of a stack file that reach generated pipelines, besides its
//! components' (checked with their entries): `meta.name`, and the runner
//! tags, images and environment variable names of `lifecycle.runners`.
//! Each is refused, with its line, when it holds a line break, a control
//! character or `${{` ([`hub_manifest::names::check_name`]).

use crate::ElaborateError;
use hub_manifest::diag::Location;
use hub_manifest::names::check_name;
use hub_manifest::{locate, Manifest, Segment, SourceFile};

/// Refuses the first name of `manifest` (read from `file`) that
/// [`check_name`] refuses.
pub(super) fn check_names(manifest: &Manifest, file: &SourceFile) -> Result<(), ElaborateError> {
    let key = |k: &str| Segment::Key(k.to_string());
    check(
        file,
        "the stack's `meta.name`",
        &manifest.meta.name,
        &[key("meta"), key("name")],
    )?;
    for (entry, runner) in &manifest.lifecycle.runners {
        let at = [key("lifecycle"), key("runners"), key(entry)];
        for (i, tag) in runner.tags.iter().enumerate() {
            let path = [at.as_slice(), &[key("tags"), Segment::Index(i)]].concat();
            check(file, "a runner tag", tag, &path)?;
        }
        let path = [at.as_slice(), &[key("image")]].concat();
        check(file, "a runner image", &runner.image, &path)?;
        for name in runner.env.keys() {
            let path = [at.as_slice(), &[key("env"), key(name)]].concat();
            check(file, "a runner environment variable's name", name, &path)?;
        }
    }
    Ok(())
}

fn check(
    file: &SourceFile,
    what: &'static str,
    name: &str,
    path: &[Segment],
) -> Result<(), ElaborateError> {
    check_name(name).map_err(|problem| {
        let location = match locate(&file.text, path) {
            Some((line, column)) => Location::at(&file.path, line, column),
            None => Location::file(&file.path),
        };
        ElaborateError::BadName {
            what,
            name: name.to_string(),
            problem,
            location,
        }
    })
}
