//! The words of the run's messages that several of its parts use.

use hub_plan::source::discover::Implementation;

pub(super) fn describe(implementation: &Implementation) -> String {
    format!("`{implementation}`")
}

pub(super) fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn or_none(text: &str) -> &str {
    if text.is_empty() {
        "nothing"
    } else {
        text
    }
}
