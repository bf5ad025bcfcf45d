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
    ("bcrypt", sprig::hub::bcrypt),
    ("formatSubdomain", sprig::hub::format_subdomain),
    ("unquote", sprig::hub::unquote),
    ("uquote", sprig::hub::unquote),
    // strings
    ("hello", sprig::strings::hello),
    ("upper", sprig::strings::upper),
    ("lower", sprig::strings::lower),
    ("title", sprig::strings::title),
    ("untitle", sprig::strings::untitle),
    ("swapcase", sprig::strings::swapcase),
    ("substr", sprig::strings::substr),
    ("repeat", sprig::strings::repeat),
    ("trim", sprig::strings::trim),
    ("trimAll", sprig::strings::trim_all),
    ("trimall", sprig::strings::trim_all),
    ("trimSuffix", sprig::strings::trim_suffix),
    ("trimPrefix", sprig::strings::trim_prefix),
    ("nospace", sprig::strings::nospace),
    ("initials", sprig::strings::initials),
    ("randAlphaNum", sprig::strings::rand_alpha_num),
    ("randAlpha", sprig::strings::rand_alpha),
    ("randNumeric", sprig::strings::rand_numeric),
    ("randAscii", sprig::strings::rand_ascii),
    ("shuffle", sprig::strings::shuffle),
    ("uuidv4", sprig::strings::uuidv4),
    ("snakecase", sprig::strings::snakecase),
    ("kebabcase", sprig::strings::kebabcase),
    ("camelcase", sprig::strings::camelcase),
    ("wrap", sprig::strings::wrap),
    ("wrapWith", sprig::strings::wrap_with),
    ("contains", sprig::strings::contains),
    ("hasPrefix", sprig::strings::has_prefix),
    ("hasSuffix", sprig::strings::has_suffix),
    ("quote", sprig::strings::quote),
    ("squote", sprig::strings::squote),
    ("cat", sprig::strings::cat),
    ("indent", sprig::strings::indent),
    ("nindent", sprig::strings::nindent),
    ("replace", sprig::strings::replace),
    ("plural", sprig::strings::plural),
    ("sha256sum", sprig::strings::sha256sum),
    ("sha1sum", sprig::strings::sha1sum),
    ("adler32sum", sprig::strings::adler32sum),
    ("randBytes", sprig::strings::rand_bytes),
    ("toString", sprig::strings::to_string),
    ("toStrings", sprig::strings::to_strings),
    ("atoi", sprig::strings::atoi),
    ("int", sprig::strings::to_int),
    ("int64", sprig::strings::to_int),
    ("float64", sprig::strings::float64),
    ("toDecimal", sprig::strings::to_decimal),
    ("split", sprig::hub::split),
    ("splitList", sprig::strings::split_list),
    ("splitn", sprig::strings::splitn),
    ("join", sprig::hub::join),
    ("sortAlpha", sprig::strings::sort_alpha),
    ("abbrev", sprig::strings::abbrev),
    ("abbrevboth", sprig::strings::abbrevboth),
    ("trunc", sprig::strings::trunc),
    // defaults and encodings
    ("default", sprig::encodings::default),
    ("empty", sprig::encodings::is_empty),
    ("coalesce", sprig::encodings::coalesce),
    ("compact", sprig::hub::compact),
    ("mustCompact", sprig::hub::compact),
    ("toJson", sprig::encodings::to_json),
    ("mustToJson", sprig::encodings::to_json),
    ("toPrettyJson", sprig::encodings::to_pretty_json),
    ("mustToPrettyJson", sprig::encodings::to_pretty_json),
    ("toRawJson", sprig::encodings::to_raw_json),
    ("mustToRawJson", sprig::encodings::to_raw_json),
    ("fromJson", sprig::encodings::from_json),
    ("ternary", sprig::encodings::ternary),
    ("b64enc", sprig::encodings::b64enc),
    ("b64dec", sprig::encodings::b64dec),
    ("b32enc", sprig::encodings::b32enc),
    ("b32dec", sprig::encodings::b32dec),
    ("typeOf", sprig::encodings::type_of),
    ("kindOf", sprig::encodings::kind_of),
    ("typeIs", sprig::encodings::type_is),
    ("typeIsLike", sprig::encodings::type_is_like),
    ("kindIs", sprig::encodings::kind_is),
    ("deepEqual", sprig::encodings::deep_equal),
    ("env", sprig::encodings::env),
    ("expandenv", sprig::encodings::expandenv),
    ("base", sprig::encodings::base),
    ("dir", sprig::encodings::dir),
    ("clean", sprig::encodings::clean),
    ("ext", sprig::encodings::ext),
    ("isAbs", sprig::encodings::is_abs),
    ("fail", sprig::encodings::fail),
    // crypto
    ("derivePassword", sprig::encodings::derive_password),
    ("encryptAES", sprig::encodings::encrypt_a_e_s),
    ("decryptAES", sprig::encodings::decrypt_a_e_s),
    // dates
    ("toDate", sprig::dates::to_date),
    ("mustToDate", sprig::dates::to_date),
    ("now", sprig::dates::now),
    ("date", sprig::dates::date),
    ("htmlDate", sprig::dates::date),
    ("dateInZone", sprig::dates::date_in_zone),
    ("date_in_zone", sprig::dates::date_in_zone),
    ("htmlDateInZone", sprig::dates::date_in_zone),
    ("unixEpoch", sprig::dates::unix_epoch),
    ("dateModify", sprig::dates::date_modify),
    ("date_modify", sprig::dates::date_modify),
    ("mustDateModify", sprig::dates::date_modify),
    ("ago", sprig::dates::ago),
    ("duration", sprig::dates::duration),
    ("durationRound", sprig::dates::duration_round),
    // numbers
    ("add", sprig::numbers::add),
    ("add1", sprig::numbers::add1),
    ("sub", sprig::numbers::sub),
    ("mul", sprig::numbers::mul),
    ("div", sprig::numbers::div),
    ("mod", sprig::numbers::div),
    ("max", sprig::numbers::max),
    ("biggest", sprig::numbers::max),
    ("min", sprig::numbers::min),
    ("ceil", sprig::numbers::ceil),
    ("floor", sprig::numbers::floor),
    ("round", sprig::numbers::round),
    ("until", sprig::numbers::until),
    ("untilStep", sprig::numbers::until_step),
    // lists
    ("list", sprig::lists::list_of),
    ("tuple", sprig::lists::list_of),
    ("push", sprig::lists::push),
    ("append", sprig::lists::push),
    ("prepend", sprig::lists::prepend),
    ("first", sprig::hub::first),
    ("rest", sprig::lists::rest),
    ("last", sprig::lists::last),
    ("initial", sprig::lists::initial),
    ("reverse", sprig::lists::reverse),
    ("uniq", sprig::lists::uniq),
    ("without", sprig::lists::without),
    ("has", sprig::lists::has),
    ("concat", sprig::lists::concat),
    // dicts
    ("dict", sprig::dicts::dict_of),
    ("get", sprig::dicts::get),
    ("set", sprig::dicts::set),
    ("unset", sprig::dicts::unset),
    ("hasKey", sprig::dicts::has_key),
    ("pluck", sprig::dicts::pluck),
    ("keys", sprig::dicts::keys),
    ("values", sprig::dicts::values),
    ("pick", sprig::dicts::pick),
    ("omit", sprig::dicts::pick),
    ("merge", sprig::dicts::merge),
    ("mergeOverwrite", sprig::dicts::merge),
    ("deepCopy", sprig::dicts::deep_copy),
    // regex, semver, urls
    ("regexMatch", sprig::patterns::regex_match),
    ("regexFind", sprig::patterns::regex_find),
    ("regexFindAll", sprig::patterns::regex_find_all),
    ("regexReplaceAll", sprig::patterns::regex_replace_all),
    (
        "regexReplaceAllLiteral",
        sprig::patterns::regex_replace_all_literal,
    ),
    ("regexSplit", sprig::patterns::regex_split),
    ("semver", sprig::patterns::semver),
    ("semverCompare", sprig::patterns::semver_compare),
    ("urlParse", sprig::patterns::url_parse),
    ("urlJoin", sprig::patterns::url_join),
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
