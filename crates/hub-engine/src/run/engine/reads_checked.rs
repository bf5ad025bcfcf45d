//! Issue 42, item 4: a deploy of a plan made with `--plan-steps` checks,
//! just before a component starts, that each planned output it read (the
//! plan's `reads`) is the output it is about to read. One that differs
//! fails the component (its dependents then fail as after any failure;
//! independent components go on), naming the output and its planned and
//! current values, masked when secret.

use super::Run;
use hub_manifest::redact::Redactor;
use hub_params::format::substitution_text;
use hub_plan::decide::known::View;
use std::collections::HashSet;

impl<'a> Run<'a> {
    /// `Err` (the component failed) when an output `name` read in the
    /// plan differs from what the run produced.
    pub(super) fn reads_unchanged(
        &mut self,
        name: &str,
        visible: &View,
    ) -> Result<(), super::Step> {
        let Some(reads) = self.planned(name).map(|c| c.through.reads.clone()) else {
            return Ok(());
        };
        if reads.is_empty() {
            return Ok(());
        }
        let wanted: HashSet<String> = reads
            .iter()
            .map(|r| format!("{}:{}", r.component, r.output))
            .collect();
        let found = self.known.read(visible, &wanted);
        let redactor = Redactor::new(self.options.reveal);
        let mut changed = Vec::new();
        for read in &reads {
            let now = found
                .iter()
                .rev()
                .find(|o| o.component == read.component && o.name == read.output);
            let text = now.map(|o| substitution_text(Some(&o.value)));
            if text.as_deref().map(hub_plan::plan::text_digest) == Some(read.digest.clone()) {
                continue;
            }
            let secret = now.is_some_and(|o| o.kind.starts_with("secret"))
                || read.planned == hub_manifest::redact::MASK;
            let current = match &text {
                Some(text) => redactor.text(&read.output, "", secret, text).into_owned(),
                None => "(none)".to_string(),
            };
            changed.push(format!(
                "`{}`'s output `{}` (planned `{}`, now `{current}`)",
                read.component, read.output, read.planned
            ));
        }
        if changed.is_empty() {
            return Ok(());
        }
        let reason = format!(
            "refused: what it reads changed since the plan: {}; plan again (`hub plan --plan-steps --out`) to review the new values",
            changed.join(", ")
        );
        Err(self.fail(name, &reason, None))
    }
}
