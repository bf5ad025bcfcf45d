//! `${...}` references and `#{...}` CEL expressions: parsing, the names a
//! template reads, and evaluation with a few bindings.
#![no_main]

use hub_params::{evaluate_template, expr, template_names, Cel};
use indexmap::IndexMap;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Long inputs only make each run slower, not the grammar richer.
    let Ok(text) = std::str::from_utf8(&data[..data.len().min(2048)]) else {
        return;
    };
    let pieces = expr::parse(text);
    let rebuilt: usize = pieces
        .iter()
        .map(|p| match p {
            expr::Piece::Text(t) => t.len(),
            expr::Piece::Reference(r) => r.len(),
            expr::Piece::Cel(c) => c.len(),
        })
        .sum();
    assert!(rebuilt <= text.len(), "pieces are parts of the text");
    let cel = Cel::default();
    let _ = template_names(&cel, text);
    let bindings: IndexMap<String, String> = [("a", "1"), ("b", "two"), ("c.d", "x,y")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let _ = evaluate_template(text, &bindings);
});
