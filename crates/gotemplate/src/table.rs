//! Every function a template can call, kept in one place: each name with
//! the module that runs it. The parser asks [`exists`] and the executor
//! [`call`]s through the same table, so that no name is known to one and
//! not the other.

use super::funcs::{self, MISSING};
use super::sprig;
use super::value::Value;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Go's builtins, run by [`funcs::call`] (`and` and `or` are
/// short-circuited by the executor before they get here).
pub const BUILTINS: &[&str] = &[
    "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "len", "index", "slice", "print",
    "printf", "println", "html", "js", "urlquery", "call",
];

/// What a Sprig or hub function is: its name (for its errors) and its
/// arguments in, a value or an error message out.
pub(crate) type Func = fn(&str, &[Value]) -> Result<Value, String>;

/// The hub's own functions and Sprig v2.22's, each name with the function
/// in [`sprig`] that runs it; an alias names the same function twice.
pub(crate) const SPRIG: &[(&str, Func)] = &[
    // hub
    ("bcrypt", sprig::bcrypt),
    ("formatSubdomain", sprig::format_subdomain),
    ("unquote", sprig::unquote),
    ("uquote", sprig::unquote),
    // strings
    ("hello", sprig::hello),
    ("upper", sprig::upper),
    ("lower", sprig::lower),
    ("title", sprig::title),
    ("untitle", sprig::untitle),
    ("swapcase", sprig::swapcase),
    ("substr", sprig::substr),
    ("repeat", sprig::repeat),
    ("trim", sprig::trim),
    ("trimAll", sprig::trim_all),
    ("trimall", sprig::trim_all),
    ("trimSuffix", sprig::trim_suffix),
    ("trimPrefix", sprig::trim_prefix),
    ("nospace", sprig::nospace),
    ("initials", sprig::initials),
    ("randAlphaNum", sprig::rand_alpha_num),
    ("randAlpha", sprig::rand_alpha),
    ("randNumeric", sprig::rand_numeric),
    ("randAscii", sprig::rand_ascii),
    ("shuffle", sprig::shuffle),
    ("uuidv4", sprig::uuidv4),
    ("snakecase", sprig::snakecase),
    ("kebabcase", sprig::kebabcase),
    ("camelcase", sprig::camelcase),
    ("wrap", sprig::wrap),
    ("wrapWith", sprig::wrap_with),
    ("contains", sprig::contains),
    ("hasPrefix", sprig::has_prefix),
    ("hasSuffix", sprig::has_suffix),
    ("quote", sprig::quote),
    ("squote", sprig::squote),
    ("cat", sprig::cat),
    ("indent", sprig::indent),
    ("nindent", sprig::nindent),
    ("replace", sprig::replace),
    ("plural", sprig::plural),
    ("sha256sum", sprig::sha256sum),
    ("sha1sum", sprig::sha1sum),
    ("adler32sum", sprig::adler32sum),
    ("randBytes", sprig::rand_bytes),
    ("toString", sprig::to_string),
    ("toStrings", sprig::to_strings),
    ("atoi", sprig::atoi),
    ("int", sprig::to_int),
    ("int64", sprig::to_int),
    ("float64", sprig::float64),
    ("toDecimal", sprig::to_decimal),
    ("split", sprig::split),
    ("splitList", sprig::split_list),
    ("splitn", sprig::splitn),
    ("join", sprig::join),
    ("sortAlpha", sprig::sort_alpha),
    ("abbrev", sprig::abbrev),
    ("abbrevboth", sprig::abbrevboth),
    ("trunc", sprig::trunc),
    // defaults and encodings
    ("default", sprig::default),
    ("empty", sprig::is_empty),
    ("coalesce", sprig::coalesce),
    ("compact", sprig::compact),
    ("mustCompact", sprig::compact),
    ("toJson", sprig::to_json),
    ("mustToJson", sprig::to_json),
    ("toPrettyJson", sprig::to_pretty_json),
    ("mustToPrettyJson", sprig::to_pretty_json),
    ("toRawJson", sprig::to_raw_json),
    ("mustToRawJson", sprig::to_raw_json),
    ("fromJson", sprig::from_json),
    ("ternary", sprig::ternary),
    ("b64enc", sprig::b64enc),
    ("b64dec", sprig::b64dec),
    ("b32enc", sprig::b32enc),
    ("b32dec", sprig::b32dec),
    ("typeOf", sprig::type_of),
    ("kindOf", sprig::kind_of),
    ("typeIs", sprig::type_is),
    ("typeIsLike", sprig::type_is_like),
    ("kindIs", sprig::kind_is),
    ("deepEqual", sprig::deep_equal),
    ("env", sprig::env),
    ("expandenv", sprig::expandenv),
    ("base", sprig::base),
    ("dir", sprig::dir),
    ("clean", sprig::clean),
    ("ext", sprig::ext),
    ("isAbs", sprig::is_abs),
    ("fail", sprig::fail),
    // crypto
    ("derivePassword", sprig::derive_password),
    ("encryptAES", sprig::encrypt_a_e_s),
    ("decryptAES", sprig::decrypt_a_e_s),
    // dates
    ("toDate", sprig::to_date),
    ("mustToDate", sprig::to_date),
    ("now", sprig::now),
    ("date", sprig::date),
    ("htmlDate", sprig::date),
    ("dateInZone", sprig::date_in_zone),
    ("date_in_zone", sprig::date_in_zone),
    ("htmlDateInZone", sprig::date_in_zone),
    ("unixEpoch", sprig::unix_epoch),
    ("dateModify", sprig::date_modify),
    ("date_modify", sprig::date_modify),
    ("mustDateModify", sprig::date_modify),
    ("ago", sprig::ago),
    ("duration", sprig::duration),
    ("durationRound", sprig::duration_round),
    // numbers
    ("add", sprig::add),
    ("add1", sprig::add1),
    ("sub", sprig::sub),
    ("mul", sprig::mul),
    ("div", sprig::div),
    ("mod", sprig::div),
    ("max", sprig::max),
    ("biggest", sprig::max),
    ("min", sprig::min),
    ("ceil", sprig::ceil),
    ("floor", sprig::floor),
    ("round", sprig::round),
    ("until", sprig::until),
    ("untilStep", sprig::until_step),
    // lists
    ("list", sprig::list_of),
    ("tuple", sprig::list_of),
    ("push", sprig::push),
    ("append", sprig::push),
    ("prepend", sprig::prepend),
    ("first", sprig::first),
    ("rest", sprig::rest),
    ("last", sprig::last),
    ("initial", sprig::initial),
    ("reverse", sprig::reverse),
    ("uniq", sprig::uniq),
    ("without", sprig::without),
    ("has", sprig::has),
    ("concat", sprig::concat),
    // dicts
    ("dict", sprig::dict_of),
    ("get", sprig::get),
    ("set", sprig::set),
    ("unset", sprig::unset),
    ("hasKey", sprig::has_key),
    ("pluck", sprig::pluck),
    ("keys", sprig::keys),
    ("values", sprig::values),
    ("pick", sprig::pick),
    ("omit", sprig::pick),
    ("merge", sprig::merge),
    ("mergeOverwrite", sprig::merge),
    ("deepCopy", sprig::deep_copy),
    // regex, semver, urls
    ("regexMatch", sprig::regex_match),
    ("regexFind", sprig::regex_find),
    ("regexFindAll", sprig::regex_find_all),
    ("regexReplaceAll", sprig::regex_replace_all),
    ("regexReplaceAllLiteral", sprig::regex_replace_all_literal),
    ("regexSplit", sprig::regex_split),
    ("semver", sprig::semver),
    ("semverCompare", sprig::semver_compare),
    ("urlParse", sprig::url_parse),
    ("urlJoin", sprig::url_join),
];

/// [`SPRIG`] indexed by name, built on first use.
static SPRIG_INDEX: LazyLock<HashMap<&'static str, Func>> =
    LazyLock::new(|| SPRIG.iter().copied().collect());

/// The Sprig or hub function named `name`.
fn sprig_function(name: &str) -> Option<Func> {
    SPRIG_INDEX.get(name).copied()
}

/// Every function name known to the engine.
pub fn exists(name: &str) -> bool {
    BUILTINS.contains(&name) || sprig_function(name).is_some()
}

/// Calls function `name` with `args`.
pub fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    if BUILTINS.contains(&name) {
        funcs::call(name, args)
    } else if let Some(function) = sprig_function(name) {
        function(name, args)
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
        for (name, function) in SPRIG {
            assert!(!missing(function(name, &[]), name), "{name}");
        }
        let names = || BUILTINS.iter().chain(SPRIG.iter().map(|(name, _)| name));
        for name in names() {
            let duplicate = names().filter(|n| *n == name);
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
