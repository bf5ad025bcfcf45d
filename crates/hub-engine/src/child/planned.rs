//! The outputs a script or Makefile component's plan step (`plan.sh`,
//! `make plan`) prints: an `Outputs:` block read as a deploy's, where a
//! line `NAME (known after apply)` says that the output `NAME` is known
//! only once the component applies. A deploy's entry is always
//! `NAME = VALUE`, so that line can never be a value, whatever the value.

use super::capture::{read_outputs, stdout_lines, BlockLine, Blocks};
use hub_plan::plan::planned::PlannedOutput;

/// What marks an output as unknown, after its name.
pub const UNKNOWN_MARK: &str = "(known after apply)";

/// The planned outputs in a plan step's stdout: each `NAME = VALUE` of an
/// `Outputs:` block known, each `NAME (known after apply)` unknown (a
/// later line of either form wins).
pub fn parse_planned(stdout: &str) -> Vec<PlannedOutput> {
    let mut blocks = Blocks::default();
    let mut unknown: Vec<String> = Vec::new();
    let mut known_lines = String::new();
    for line in stdout_lines(stdout) {
        let step = blocks.step(line);
        if step == BlockLine::Entry {
            if let Some(name) = unknown_name(line) {
                unknown.retain(|n| n != name);
                unknown.push(name.to_string());
                continue;
            }
            // A value after the marker: known after all.
            if let Some((name, _)) = line.split_once('=') {
                unknown.retain(|n| n != name.trim());
            }
        }
        known_lines.push_str(line);
        known_lines.push('\n');
    }
    let printed = read_outputs(&known_lines);
    let mut planned: Vec<PlannedOutput> = printed
        .raw
        .iter()
        .filter(|(name, _)| !unknown.contains(name))
        .map(|(name, value)| PlannedOutput {
            name: name.clone(),
            // Terraform's `<sensitive>` placeholder is no value.
            value: (!printed.sensitive.contains(name))
                .then(|| yaml_serde::Value::String(value.clone())),
            secret: printed.sensitive.contains(name),
        })
        .collect();
    planned.extend(unknown.into_iter().map(|name| PlannedOutput {
        name,
        value: None,
        secret: false,
    }));
    planned
}

/// `NAME` of a line `NAME (known after apply)`.
fn unknown_name(line: &str) -> Option<&str> {
    let name = line.trim_end().strip_suffix(UNKNOWN_MARK)?.trim();
    let plain = !name.is_empty() && !name.contains(char::is_whitespace) && !name.contains('=');
    plain.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yaml_serde::Value;

    fn get<'p>(planned: &'p [PlannedOutput], name: &str) -> &'p PlannedOutput {
        planned.iter().find(|p| p.name == name).expect(name)
    }

    #[test]
    fn known_and_unknown_outputs_are_told_apart() {
        let stdout = "planning\nOutputs:\nval = v1\nid (known after apply)\nurl = \"(known after apply)\"\n\nafter (known after apply)\n";
        let planned = parse_planned(stdout);
        assert_eq!(get(&planned, "val").value, Some(Value::String("v1".into())));
        assert_eq!(get(&planned, "id").value, None);
        // A value that reads like the marker is a value: it follows ` = `.
        assert_eq!(
            get(&planned, "url").value,
            Some(Value::String("(known after apply)".into()))
        );
        // Outside a block, the line is no output.
        assert!(planned.iter().all(|p| p.name != "after"));
    }

    #[test]
    fn the_last_line_of_a_name_wins() {
        let planned = parse_planned("Outputs:\nid (known after apply)\nid = x\n");
        assert_eq!(planned.len(), 1);
        assert_eq!(get(&planned, "id").value, Some(Value::String("x".into())));
        let planned = parse_planned("Outputs:\nid = x\nid (known after apply)\n");
        assert_eq!(get(&planned, "id").value, None);
    }

    #[test]
    fn a_name_with_spaces_is_not_a_marker() {
        assert_eq!(unknown_name("a b (known after apply)"), None);
        assert_eq!(unknown_name(" (known after apply)"), None);
        assert_eq!(unknown_name("x = (known after apply)"), None);
        assert_eq!(
            unknown_name("db.host (known after apply)  "),
            Some("db.host")
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// No value printed as `NAME = VALUE` is ever read as unknown,
        /// whatever the value (the marker included); `NAME (known after
        /// apply)` always is.
        #[test]
        fn a_value_never_collides_with_the_marker(
            name in "[a-z][a-z0-9_.]{0,12}",
            value in "[ -~]{0,40}",
        ) {
            let planned = parse_planned(&format!("Outputs:\n{name} = {value}\n"));
            proptest::prop_assert!(planned.iter().all(|p| p.value.is_some()), "{planned:?}");
            let planned = parse_planned(&format!("Outputs:\n{name} {UNKNOWN_MARK}\n"));
            proptest::prop_assert_eq!(planned.len(), 1);
            proptest::prop_assert_eq!(planned[0].value.clone(), None);
        }
    }
}
