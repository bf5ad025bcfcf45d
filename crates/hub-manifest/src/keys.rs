//! The keys each place of a Hub document knows, the keys real manifests
//! carry that hub knows but ignores, and which unknown key is a typo of a
//! known one.
//!
//! A *place* is the mapping an unknown key sits in: the document itself, or
//! one of the model's types (`Meta`, `Parameter`, `Output`, …, named as in
//! the JSON Schemas of `schemas/`). Its known keys come from the generated
//! schema, so they follow the model.

use super::locate::Segment;
use serde_json::Value as Json;

/// Where an unknown key was found: the name of the place and its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// `document`, or the model type of the mapping (`Meta`, `Parameter`…).
    pub name: String,
    pub keys: Vec<String>,
}

/// The place of the mapping at `parent` (the path of an unknown key without
/// its last segment) in a document of the given schema; `None` when the
/// path leaves the schema (inside a free-form value).
pub fn place(schema: &Json, parent: &[Segment]) -> Option<Place> {
    let mut name = "document".to_string();
    let mut node = resolve(schema, schema, &mut name);
    for segment in parent {
        let next = match segment {
            Segment::Key(key) => node
                .get("properties")
                .and_then(|p| p.get(key))
                .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))?,
            Segment::Index(_) => node.get("items")?,
        };
        node = resolve(schema, next, &mut name);
    }
    let keys = node
        .get("properties")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    Some(Place { name, keys })
}

/// Follows `$ref`, a lone `allOf` and the non-null branch of an `anyOf`
/// (an `Option`), noting the name of the last definition reached.
fn resolve<'s>(root: &'s Json, mut node: &'s Json, name: &mut String) -> &'s Json {
    loop {
        if let Some(reference) = node.get("$ref").and_then(Json::as_str) {
            let Some(definition) = reference.strip_prefix("#/definitions/") else {
                return node;
            };
            match root.pointer(&format!("/definitions/{definition}")) {
                Some(target) => {
                    *name = definition.to_string();
                    node = target;
                }
                None => return node,
            }
        } else if let Some(inner) = node
            .get("allOf")
            .or_else(|| node.get("anyOf"))
            .and_then(Json::as_array)
            .and_then(|branches| {
                branches
                    .iter()
                    .find(|b| b.get("type").and_then(Json::as_str) != Some("null"))
            })
        {
            node = inner;
        } else {
            return node;
        }
    }
}

/// Keys that real Hub manifests carry and that hub reads without using,
/// per place: the reference drops them too (they never reach an elaborated
/// file). Collected from the manifests of the shared corpus.
const KNOWN_IGNORED: &[(&str, &[&str])] = &[
    // `extensions` drives hubctl's shell extensions; `document` is a
    // SuperHub annotation.
    ("document", &["extensions", "document"]),
    // Catalogue data of the component and stack registries.
    ("Meta", &["category", "disabled", "keywords"]),
    ("Output", &["icon", "lifecycle"]),
    ("Parameter", &["type"]),
    // SuperHub application-wizard sources.
    ("Source", &["repoUrl", "repoPath", "branch", "fromEnv"]),
];

/// Whether `key` is one hub knows at `place` but ignores.
pub fn is_known_ignored(place: &str, key: &str) -> bool {
    KNOWN_IGNORED
        .iter()
        .any(|(p, keys)| *p == place && keys.contains(&key))
}

/// The known key an unknown one most likely stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suggestion<'k> {
    pub key: &'k str,
    /// Within a typo of `key` (see [`is_near_typo`]): an error unless
    /// `--lenient`.
    pub near_typo: bool,
}

/// The known key closest to `key`, when it is close enough to be meant:
/// a near typo, or at most two edits that change less than half of it.
pub fn suggest<'k>(key: &str, known: &'k [String]) -> Option<Suggestion<'k>> {
    let lower = key.to_lowercase();
    known
        .iter()
        .filter(|k| k.as_str() != key)
        .map(|k| (edit_distance(&lower, &k.to_lowercase()), k))
        .filter(|(d, k)| is_near_typo(key, k) || (*d <= 2 && *d * 2 < k.chars().count().max(2)))
        .min_by_key(|(d, k)| (!is_near_typo(key, k), *d))
        .map(|(_, k)| Suggestion {
            key: k.as_str(),
            near_typo: is_near_typo(key, k),
        })
}

/// `key` is within a typo of `known`: equal ignoring case, or, ignoring
/// case, one edit (insert, delete, replace, swap of neighbours) away from
/// a known key of up to 5 characters, two from one of 6 or more.
pub fn is_near_typo(key: &str, known: &str) -> bool {
    if key == known {
        return false;
    }
    let allowed = if known.chars().count() >= 6 { 2 } else { 1 };
    edit_distance(&key.to_lowercase(), &known.to_lowercase()) <= allowed
}

/// Optimal string alignment distance: inserts, deletes, replacements and
/// swaps of two neighbours, each one edit.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// What to say about an unknown key found at `path` of a document with the
/// given schema: nothing when it is known but ignored, else whether it
/// looks like a typo and of what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    KnownIgnored,
    Unknown {
        suggestion: Option<String>,
        near_typo: bool,
    },
}

pub fn judge(schema: Option<&Json>, path: &[Segment]) -> Verdict {
    let Some((Segment::Key(key), parent)) = path.split_last() else {
        return Verdict::unknown(None);
    };
    let Some(place) = schema.and_then(|s| place(s, parent)) else {
        return Verdict::unknown(None);
    };
    if is_known_ignored(&place.name, key) {
        return Verdict::KnownIgnored;
    }
    Verdict::unknown(suggest(key, &place.keys))
}

impl Verdict {
    fn unknown(suggestion: Option<Suggestion<'_>>) -> Self {
        Verdict::Unknown {
            suggestion: suggestion.map(|s| s.key.to_string()),
            near_typo: suggestion.is_some_and(|s| s.near_typo),
        }
    }
}

/// `unknown key `a.b` is ignored (did you mean `c`?)`
pub fn unknown_key_message(path: &[Segment], suggestion: Option<&str>) -> String {
    let key = Segment::display(path);
    match suggestion {
        Some(known) => format!("unknown key `{key}` is ignored (did you mean `{known}`?)"),
        None => format!("unknown key `{key}` is ignored"),
    }
}

/// The message of a near typo made an error: `unknown key `x` looks like
/// a typo (did you mean `y`?)`.
pub fn refused_message(warning_message: &str) -> String {
    warning_message.replacen(" is ignored", " looks like a typo", 1)
}

/// The hint of a near typo made an error.
pub fn refused_hint(origin: crate::diag::Origin) -> String {
    refused_hint_about(origin, crate::diag::Topic::General)
}

/// The hint of a near typo about `topic` made an error.
pub fn refused_hint_about(origin: crate::diag::Origin, topic: crate::diag::Topic) -> String {
    use crate::diag::{Origin, Topic};
    match (topic, origin) {
        (Topic::UnreadParameter, Origin::Own) => return "correct the parameter's name where it is set (or remove it); `--lenient` turns this error into a warning (the value is then ignored)".into(),
        (Topic::UnreadParameter, Origin::Foreign) => return "correct the parameter's name in that file; without `--strict` this is a warning (the value is then ignored)".into(),
        (Topic::General, _) => {}
    }
    match origin {
        crate::diag::Origin::Own => "correct the key; `--lenient` turns this error into a warning (the key is then ignored)".into(),
        crate::diag::Origin::Foreign => "correct the key in the component's manifest; without `--strict` a typo there is a warning (the key is then ignored)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{cached_schema, DocumentType};

    fn key(k: &str) -> Segment {
        Segment::Key(k.to_string())
    }

    fn strings(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn near_typo_boundary_short_keys() {
        // Known keys of up to 5 characters allow one edit.
        assert!(is_near_typo("nmae", "name")); // swap
        assert!(is_near_typo("nam", "name")); // delete
        assert!(is_near_typo("names", "name")); // insert
        assert!(is_near_typo("nome", "name")); // replace
        assert!(!is_near_typo("nm", "name")); // two edits
        assert!(is_near_typo("brif", "brief")); // 5 characters, one edit
        assert!(!is_near_typo("brf", "brief")); // 5 characters, two edits
    }

    #[test]
    fn near_typo_boundary_long_keys() {
        // Known keys of 6 characters or more allow two edits.
        assert!(is_near_typo("paramters", "parameters"));
        assert!(is_near_typo("dependss", "depends"));
        assert!(is_near_typo("dpends", "depends"));
        assert!(is_near_typo("dpendss", "depends")); // two edits, 7 characters
        assert!(!is_near_typo("dpndss", "depends")); // three edits
        assert!(is_near_typo("oputs", "outputs")); // two edits, 7 characters
        assert!(!is_near_typo("outs", "outputs")); // three edits
    }

    #[test]
    fn near_typo_ignores_case_and_never_matches_itself() {
        assert!(is_near_typo("fromenv", "fromEnv"));
        assert!(is_near_typo("FROMENV", "fromEnv"));
        assert!(is_near_typo("Env", "env"));
        assert!(!is_near_typo("fromEnv", "fromEnv"));
    }

    #[test]
    fn suggestions_prefer_near_typos() {
        let known = strings(&["brief", "name", "kind", "description", "env", "fromEnv"]);
        assert_eq!(
            suggest("breif", &known),
            Some(Suggestion {
                key: "brief",
                near_typo: true
            })
        );
        assert_eq!(suggest("fromenv", &known).map(|s| s.key), Some("fromEnv"));
        let loose = suggest("descripton", &known).expect("close");
        assert_eq!(loose.key, "description");
        assert!(loose.near_typo);
        assert_eq!(suggest("category", &known), None);
        assert_eq!(suggest("x-owner", &known), None);
        assert_eq!(suggest("x", &known), None);
    }

    #[test]
    fn places_follow_the_model() {
        let stack = cached_schema(DocumentType::Stack);
        let root = place(stack, &[]).expect("root");
        assert_eq!(root.name, "document");
        assert!(root.keys.contains(&"components".to_string()));
        let nested = place(
            stack,
            &[
                key("parameters"),
                Segment::Index(0),
                key("parameters"),
                Segment::Index(3),
            ],
        )
        .expect("nested parameter");
        assert_eq!(nested.name, "Parameter");
        assert!(nested.keys.contains(&"fromEnv".to_string()));
        let git = place(
            stack,
            &[
                key("components"),
                Segment::Index(0),
                key("source"),
                key("git"),
            ],
        )
        .expect("git");
        assert_eq!(git.name, "GitSource");
        assert_eq!(place(stack, &[key("meta"), key("annotations")]), None);
        let params = place(cached_schema(DocumentType::Params), &[]).expect("params");
        assert_eq!(params.keys, strings(&["outputs", "parameters"]));
    }

    #[test]
    fn verdicts() {
        let stack = Some(cached_schema(DocumentType::Stack));
        assert_eq!(
            judge(stack, &[key("meta"), key("category")]),
            Verdict::KnownIgnored
        );
        assert_eq!(judge(stack, &[key("extensions")]), Verdict::KnownIgnored);
        assert_eq!(
            judge(
                stack,
                &[key("components"), Segment::Index(1), key("dependss")]
            ),
            Verdict::Unknown {
                suggestion: Some("depends".into()),
                near_typo: true
            }
        );
        assert_eq!(
            judge(stack, &[key("x-owner")]),
            Verdict::Unknown {
                suggestion: None,
                near_typo: false
            }
        );
        // `category` is ignored in `meta` only.
        assert!(matches!(
            judge(stack, &[key("category")]),
            Verdict::Unknown { .. }
        ));
    }
}
