//! Every function a template can call, kept in one place: each name with
//! the module that runs it. The parser asks [`exists`] and the executor
//! [`call`]s through the same table, so that no name is known to one and
//! not the other.

use super::funcs::{self, MISSING};
use super::sprig;
use super::value::Value;

/// Go's builtins, run by [`funcs::call`] (`and` and `or` are
/// short-circuited by the executor before they get here).
pub const BUILTINS: &[&str] = &[
    "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "len", "index", "slice", "print",
    "printf", "println", "html", "js", "urlquery", "call",
];

/// The hub's own functions and Sprig v2.22's, run by [`sprig::call`].
pub const SPRIG: &[&str] = &[
    // hub
    "bcrypt",
    "formatSubdomain",
    "unquote",
    "uquote",
    // sprig strings
    "hello",
    "upper",
    "lower",
    "title",
    "untitle",
    "substr",
    "repeat",
    "trim",
    "trimAll",
    "trimall",
    "trimSuffix",
    "trimPrefix",
    "nospace",
    "initials",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "swapcase",
    "shuffle",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "sha256sum",
    "toString",
    "toStrings",
    "atoi",
    "int64",
    "int",
    "float64",
    "toDecimal",
    "split",
    "splitList",
    "splitn",
    "join",
    "sortAlpha",
    "abbrev",
    "abbrevboth",
    "trunc",
    // sprig defaults, encodings, reflection, os, paths
    "default",
    "empty",
    "coalesce",
    "compact",
    "mustCompact",
    "toJson",
    "toPrettyJson",
    "toRawJson",
    "mustToJson",
    "mustToPrettyJson",
    "mustToRawJson",
    "fromJson",
    "ternary",
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "env",
    "expandenv",
    "base",
    "dir",
    "clean",
    "ext",
    "isAbs",
    "fail",
    "uuidv4",
    // sprig crypto
    "derivePassword",
    "encryptAES",
    "decryptAES",
    "sha1sum",
    "adler32sum",
    "randBytes",
    "durationRound",
    // sprig dates
    "date",
    "dateInZone",
    "date_in_zone",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "now",
    "ago",
    "toDate",
    "mustToDate",
    "unixEpoch",
    "htmlDate",
    "htmlDateInZone",
    "duration",
    // sprig numbers
    "add",
    "add1",
    "sub",
    "div",
    "mod",
    "mul",
    "max",
    "min",
    "biggest",
    "ceil",
    "floor",
    "round",
    "until",
    "untilStep",
    // sprig lists and dicts
    "list",
    "tuple",
    "push",
    "append",
    "prepend",
    "first",
    "rest",
    "last",
    "initial",
    "reverse",
    "uniq",
    "without",
    "has",
    "concat",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "values",
    "pick",
    "omit",
    "merge",
    "mergeOverwrite",
    "deepCopy",
    // sprig regex, semver, urls
    "regexMatch",
    "regexFindAll",
    "regexFind",
    "regexReplaceAll",
    "regexReplaceAllLiteral",
    "regexSplit",
    "semver",
    "semverCompare",
    "urlParse",
    "urlJoin",
];

/// Every function name known to the engine.
pub fn exists(name: &str) -> bool {
    BUILTINS.contains(&name) || SPRIG.contains(&name)
}

/// Calls function `name` with `args`.
pub fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    if BUILTINS.contains(&name) {
        funcs::call(name, args)
    } else if SPRIG.contains(&name) {
        sprig::call(name, args)
    } else if MISSING.contains(&name) {
        Err(format!("function {name:?} is not supported by this hub"))
    } else {
        Err(format!("function {name:?} not defined"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name of the table is run by the module the table names: none
    /// falls through to "not defined" (an arity or type error is fine).
    #[test]
    fn every_name_is_run_by_its_module() {
        let missing = |out: Result<Value, String>, name: &str| matches!(out, Err(e) if e == format!("function {name:?} not defined"));
        for name in BUILTINS.iter().filter(|n| !["and", "or"].contains(n)) {
            assert!(!missing(funcs::call(name, &[]), name), "{name}");
        }
        for name in SPRIG {
            assert!(!missing(sprig::call(name, &[]), name), "{name}");
        }
        for name in BUILTINS.iter().chain(SPRIG) {
            let duplicate = BUILTINS.iter().chain(SPRIG).filter(|n| *n == name);
            assert_eq!(duplicate.count(), 1, "{name} is in the table once");
            assert!(!MISSING.contains(name), "{name}");
        }
    }

    #[test]
    fn unknown_and_missing_names_are_refused() {
        assert!(!exists("genCA"));
        assert_eq!(
            call("genCA", &[]),
            Err("function \"genCA\" is not supported by this hub".to_string())
        );
        assert_eq!(
            call("nope", &[]),
            Err("function \"nope\" not defined".to_string())
        );
        assert_eq!(call("upper", &[Value::str("a")]), Ok(Value::str("A")));
        assert_eq!(call("len", &[Value::str("ab")]), Ok(Value::Int(2)));
    }
}
