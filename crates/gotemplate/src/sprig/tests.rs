//! The helpers behind Sprig's string, path and hub functions.

use super::*;
use super::{encodings::*, hub::*, strings::*};

#[test]
fn successor_functions() {
    let subdomain =
        |args: &[Value]| format_subdomain("formatSubdomain", args).expect("formatSubdomain");
    assert_eq!(subdomain(&[Value::str("--a b c--")]), Value::str("a-b-c"));
    assert_eq!(subdomain(&[Value::str("12a3 b c4")]), Value::str("a3-b-c4"));
    assert_eq!(subdomain(&[Value::str("A B  c")]), Value::str("a-b-c"));
    assert_eq!(
        subdomain(&[Value::str("a b c"), Value::Int(3)]),
        Value::str("a-b")
    );
    assert_eq!(
        subdomain(&[Value::str("a b c"), Value::str("3"), Value::str("_")]),
        Value::str("a_b")
    );
    assert_eq!(
        subdomain(&[Value::str("orbitApi.corp")]),
        Value::str("orbit-api-corp")
    );
    assert_eq!(unquote_text("'a'"), "a");
    assert_eq!(unquote_text("\"a'b\""), "a'b");
    assert_eq!(unquote_text("a\""), "a\"");
    assert_eq!(unquote_text("plain"), "plain");
}

#[test]
fn words_and_paths() {
    assert_eq!(
        wrap_text("the quick brown fox jumped over lazy dogs", 10, "\n"),
        "the quick\nbrown fox\njumped\nover lazy\ndogs"
    );
    assert_eq!(delimited("OrbitApiServer2Go", '_'), "orbit_api_server2_go");
    assert_eq!(base32_encode(b"orbit-api"), "N5ZGE2LUFVQXA2I=");
    assert_eq!(
        path_clean("/srv/data/./logs/../archive"),
        "/srv/data/archive"
    );
    assert_eq!(
        abbrev_both("1234 5678 9123 4567 8912", 5, 14),
        "...5678 912..."
    );
}
