//! Output contracts: a deploy's plan in which a component that runs stops
//! producing an output another component reads fails before anything
//! runs, naming the output, the producer and every reader (component and
//! parameter, with the line that declares it).
//!
//! "Stops producing" is decided from what the plan knows:
//!
//! - the outputs the state recorded for the component at its last run
//!   that its manifest no longer declares (a component that declares no
//!   outputs at all produces none: each output recorded for it that is
//!   read breaks the contract the same way; hub's own `hub.*` outputs
//!   are not the manifest's);
//! - with `--plan-steps`, a declared output whose `fromTfVar` names an
//!   output its plan step no longer plans (a `*.tf` whose `output "val"`
//!   was removed).
//!
//! A former name the component's `moved` keeps ([`crate::source::renamed`])
//! is still produced: its readers read the new name, each warned to update.

use super::outputs::OutputsFailure;
use super::Walk;
use crate::order::edges::parameters_reading;
use crate::order::schedule::Verb;
use crate::plan::planned::PlannedOutput;
use hub_manifest::declared::Declarations;
use hub_manifest::diag::Location;
use hub_manifest::Manifest;

/// A parameter of another component that reads an output.
#[derive(Debug, Clone)]
pub(super) struct Reader {
    component: String,
    /// `None` when no parameter of its own reads it by name (a name only
    /// its stack parameters' values hold).
    parameter: Option<String>,
    at: Option<Location>,
}

impl Reader {
    fn short(&self) -> String {
        match &self.parameter {
            Some(parameter) => format!("`{}` (`{parameter}`)", self.component),
            None => format!("`{}`", self.component),
        }
    }

    fn line(&self) -> String {
        let what = match &self.parameter {
            Some(parameter) => format!("`{parameter}` of `{}`", self.component),
            None => format!("`{}`", self.component),
        };
        match &self.at {
            Some(at) => format!("{what} ({at})"),
            None => what,
        }
    }
}

/// An output a component stops producing, with its readers.
struct Broken {
    output: String,
    readers: Vec<Reader>,
}

impl Walk<'_> {
    /// Outputs the state recorded for `name` that its manifest no longer
    /// declares, when a component reads one (deploy only; `name` runs).
    pub(super) fn contract_failure(
        &self,
        name: &str,
        manifest: &Manifest,
    ) -> Option<OutputsFailure> {
        if self.plan.verb != Verb::Deploy {
            return None;
        }
        let entry = self.state?.components.get(name)?;
        if entry.captured_outputs.is_empty() {
            return None;
        }
        let broken: Vec<Broken> = entry
            .captured_outputs
            .output_names_of(name)
            .into_iter()
            .filter(|o| !o.starts_with("hub."))
            .filter(|o| !manifest.outputs.iter().any(|d| &d.name == o))
            .filter_map(|o| self.broken(name, o))
            .collect();
        if broken.is_empty() {
            return None;
        }
        let head = |b: &Broken| {
            format!(
                "it stops producing output `{}` (its last deploy recorded it; its manifest no longer declares it)",
                b.output
            )
        };
        let fix = |b: &Broken| {
            format!(
                "declare `{output}` again in `{name}`'s `outputs`{at}; to rename it, declare the new name and add `moved: [{{from: {output}, to: NEW}}]` to `{name}`'s manifest; or change the readers",
                output = b.output,
                at = self.manifest_at(name),
            )
        };
        Some(failure(&broken, head, fix))
    }

    /// With `--plan-steps`: declared outputs whose `fromTfVar` names an
    /// output the plan step (`said`) does not plan, when a component reads
    /// one.
    pub(super) fn step_contract_failure(
        &self,
        name: &str,
        manifest: &Manifest,
        said: &[PlannedOutput],
    ) -> Option<OutputsFailure> {
        let mut broken = Vec::new();
        let mut raws = Vec::new();
        for (index, declared) in manifest.outputs.iter().enumerate() {
            let raw = declared.from_tf_var.split('/').next().unwrap_or_default();
            if raw.is_empty() || said.iter().any(|o| o.name == raw) {
                continue;
            }
            if let Some(found) = self.broken(name, declared.name.clone()) {
                broken.push(found);
                raws.push((raw.to_string(), index));
            }
        }
        if broken.is_empty() {
            return None;
        }
        let raw_of = |b: &Broken| {
            let at = broken
                .iter()
                .position(|x| x.output == b.output)
                .unwrap_or(0);
            raws[at].clone()
        };
        let head = |b: &Broken| {
            format!(
                "its plan step no longer outputs `{}`, which its output `{}` reads (`fromTfVar`)",
                raw_of(b).0,
                b.output
            )
        };
        let fix = |b: &Broken| {
            let (raw, index) = raw_of(b);
            let at = self
                .stack
                .declarations(name)
                .and_then(|(file, document)| {
                    Declarations::scan(&file.path, &file.text).output(document, index)
                })
                .map(|at| format!(" ({at})"))
                .unwrap_or_default();
            format!(
                "make the component output `{raw}` again (`output \"{raw}\"` in its Terraform, `{raw} = …` in its plan step's `Outputs:`), or point `fromTfVar` of `{output}`{at} at the output it has now; to rename `{output}`, add `moved: [{{from: {output}, to: NEW}}]` to `{name}`'s manifest",
                output = b.output,
            )
        };
        Some(failure(&broken, head, fix))
    }

    /// Warns each reader of a former name `name` keeps readable with its
    /// `moved`: it reads the new name.
    pub(super) fn warn_renamed_readers(&mut self, name: &str, manifest: &Manifest) {
        let scan = self
            .stack
            .declarations(name)
            .map(|(file, document)| (Declarations::scan(&file.path, &file.text), document));
        for (index, moved) in manifest.moved.iter().enumerate() {
            let entry = scan
                .as_ref()
                .and_then(|(scan, document)| scan.moved(*document, index))
                .map(|at| format!(" at {at}"))
                .unwrap_or_default();
            for reader in self.readers_of(name, &moved.from) {
                let what = match &reader.parameter {
                    Some(parameter) => format!("`{parameter}` of `{}`", reader.component),
                    None => format!("`{}`", reader.component),
                };
                let message = format!(
                    "{what} reads output `{from}` of `{name}`, which `{name}` renamed `{to}` (`moved`{entry}): it reads `{to}`; update it to read `{to}` instead of `{from}`",
                    from = moved.from,
                    to = moved.to,
                );
                self.warnings.warn(reader.at.clone(), message);
            }
        }
    }

    /// `output` of `producer`, when a component reads it.
    fn broken(&self, producer: &str, output: String) -> Option<Broken> {
        let readers = self.readers_of(producer, &output);
        (!readers.is_empty()).then_some(Broken { output, readers })
    }

    /// The components after `producer` in the order that read its output
    /// `output`: by `producer:output`, or by the plain name when no other
    /// component before them declares it. A component of the producer's
    /// kind does not see its outputs.
    fn readers_of(&self, producer: &str, output: &str) -> Vec<Reader> {
        let order = &self.plan.order;
        let Some(at) = order.iter().position(|n| n == producer) else {
            return Vec::new();
        };
        let kind = |name: &str| {
            self.stack
                .elaborated
                .component(name)
                .map(|m| m.meta.kind.as_str())
                .unwrap_or_default()
        };
        let qualified = format!("{producer}:{output}");
        let mut readers = Vec::new();
        for (offset, reader) in order[at + 1..].iter().enumerate() {
            let Some(reads) = self.plan.reads(reader) else {
                continue;
            };
            let name = if reads.contains(&qualified) {
                qualified.as_str()
            } else if reads.contains(output)
                && !self.declared_before(output, producer, at + 1 + offset)
            {
                output
            } else {
                continue;
            };
            if !kind(reader).is_empty() && kind(reader) == kind(producer) {
                continue;
            }
            readers.extend(self.reading_parameters(reader, name));
        }
        readers
    }

    /// Whether a component other than `producer` before position `before`
    /// of the order declares `output`.
    fn declared_before(&self, output: &str, producer: &str, before: usize) -> bool {
        self.plan.order[..before]
            .iter()
            .filter(|n| *n != producer)
            .any(|n| self.declared(n).iter().any(|o| o.name == output))
    }

    fn reading_parameters(&self, reader: &str, name: &str) -> Vec<Reader> {
        let found = parameters_reading(&self.stack.elaborated, &self.plan.order, reader, name);
        let scan = self
            .stack
            .declarations(reader)
            .map(|(file, document)| (Declarations::scan(&file.path, &file.text), document));
        let mut readers: Vec<Reader> = found
            .into_iter()
            .map(|parameter| Reader {
                component: reader.to_string(),
                at: scan
                    .as_ref()
                    .and_then(|(scan, document)| scan.parameter(*document, parameter.index)),
                parameter: Some(parameter.name),
            })
            .collect();
        if readers.is_empty() {
            readers.push(Reader {
                component: reader.to_string(),
                parameter: None,
                at: None,
            });
        }
        readers
    }

    /// ` in FILE` for the file that declares component `name`.
    fn manifest_at(&self, name: &str) -> String {
        self.stack
            .declarations(name)
            .map(|(file, _)| format!(" in {}", file.path.display()))
            .unwrap_or_default()
    }
}

/// The plan's reason (one line) and the deploy's refusal (with each
/// reader on its line and the fix).
fn failure(
    broken: &[Broken],
    head: impl Fn(&Broken) -> String,
    fix: impl Fn(&Broken) -> String,
) -> OutputsFailure {
    let reason = broken
        .iter()
        .map(|b| {
            let readers: Vec<String> = b.readers.iter().map(Reader::short).collect();
            format!("{}, which {} read", head(b), readers.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let certain = broken
        .iter()
        .map(|b| {
            let lines: Vec<String> = b
                .readers
                .iter()
                .map(|r| format!("\n    - {}", r.line()))
                .collect();
            format!(
                "{}; read by:{}\n    help: {}",
                head(b),
                lines.concat(),
                fix(b)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    OutputsFailure { reason, certain }
}
