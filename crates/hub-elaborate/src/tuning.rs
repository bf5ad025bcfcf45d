//! Merging `lifecycle.requires.optional` lists across `fromStack` levels.
//!
//! Entries: `req` (optional for everyone), `req:comp` (optional for one
//! component) and three erasers: `:` (forget everything older), `req:`
//! (forget every older tuning of `req`) and `:comp` (forget every older
//! tuning for `comp`). Erasers are never emitted.

/// Applies `newer` on top of `older`, oldest entry first.
pub fn merge(older: &[String], newer: &[String]) -> Vec<String> {
    let mut list: Vec<String> = Vec::new();
    for entry in older.iter().chain(newer) {
        apply(&mut list, entry);
    }
    list
}

fn apply(list: &mut Vec<String>, entry: &str) {
    match entry.split_once(':') {
        Some(("", "")) => list.clear(),
        Some((req, "")) => list.retain(|e| requirement(e) != req),
        Some(("", comp)) => {
            list.retain(|e| !matches!(e.split_once(':'), Some((_, c)) if c == comp))
        }
        Some((req, _)) => {
            list.retain(|e| e != req && e != entry);
            list.push(entry.to_string());
        }
        None => {
            list.retain(|e| requirement(e) != entry);
            list.push(entry.to_string());
        }
    }
}

fn requirement(entry: &str) -> &str {
    entry.split_once(':').map_or(entry, |(req, _)| req)
}

#[cfg(test)]
mod tests {
    use super::merge;

    fn list(s: &str) -> Vec<String> {
        s.split(' ')
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    }

    /// The table of the specification (§8.4), with the recommended results.
    #[test]
    fn specification_table() {
        let rows = [
            ("", "", ""),
            ("vault", "", "vault"),
            ("", "vault", "vault"),
            ("vault:a", "vault", "vault"),
            ("vault", "vault:a", "vault:a"),
            ("vault:a vault:b", "vault", "vault"),
            ("vault", "vault:a vault:b", "vault:a vault:b"),
            ("vault:a", "vault:b", "vault:a vault:b"),
            ("vault cdn:a", ":", ""),
            ("vault cdn:a", ": tls", "tls"),
            ("vault cdn:a", "tls :", ""),
            ("vault vault:a cdn", "vault:", "cdn"),
            ("vault:a vault:b", "vault: vault:c", "vault:c"),
            ("vault:a cdn:a cdn:b", ":a", "cdn:b"),
            ("vault:a cdn:a cdn:b", ":a tls:a", "cdn:b tls:a"),
            ("vault:a", ":a vault", "vault"),
            ("vault", "cdn", "vault cdn"),
            ("vault cdn", "vault", "cdn vault"),
            ("vault cdn:a", "cdn:a", "vault cdn:a"),
            ("", "vault:a vault", "vault"),
            ("", "vault vault:a", "vault:a"),
            ("", "vault:", ""),
            ("", ":a", ""),
            ("vault", "vault: vault:b", "vault:b"),
            ("x:a", "x: x", "x"),
            ("x", ":a x:a", "x:a"),
            (
                "vault cdn:control-plane component.ingress.ssl.enabled:acm",
                "",
                "vault cdn:control-plane component.ingress.ssl.enabled:acm",
            ),
            ("vault cdn:a tls:c", "cdn: tls:x", "vault tls:c tls:x"),
        ];
        for (n, (prior, new, expected)) in rows.iter().enumerate() {
            assert_eq!(
                merge(&list(prior), &list(new)),
                list(expected),
                "row {}",
                n + 1
            );
        }
    }
}
