//! Rules that say yes or no: a CEL expression evaluated over named JSON
//! documents (the policies on plans read `plan`, `change`, `stack` and
//! `now`), in today's CEL, not the reference's: `==` between values of
//! different types is `false`, not an error, and integer overflow is an
//! error. Timestamps come from `timestamp(TEXT)` (RFC 3339) and answer
//! `getDayOfWeek()` (0 = Sunday), `getHours()`, `getMinutes()`,
//! `getFullYear()`, `getMonth()` (0 = January) and `getDate()` (1-based), all
//! in UTC.

use super::budget::{self, Budget};
use super::{parse_in, CelFailure, Timestamp, TIMESTAMP};
use cel::common::ast::IdedExpr;
use cel::extractors::This;
use cel::objects::Key;
use cel::{Context, Env, ExecutionError, Value as CelValue};
use std::sync::Arc;

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Predicate {
    expression: IdedExpr,
}

/// The environment rules are parsed and evaluated in: the standard library,
/// `timestamp()` and the timestamp methods above.
pub struct Predicates {
    env: Arc<Env>,
    root: Context<'static, 'static>,
}

impl Default for Predicates {
    fn default() -> Self {
        let mut env = Env::stdlib();
        budget::declare(&mut env);
        let env = Arc::new(env);
        let mut root = Context::with_env(Arc::clone(&env));
        // The names are not the library's (it has no timestamps without
        // its `chrono` feature), so registering them cannot clash.
        let _ = root.add_function(TIMESTAMP, super::timestamp);
        for (name, part) in [
            ("getDayOfWeek", Part::DayOfWeek),
            ("getHours", Part::Hours),
            ("getMinutes", Part::Minutes),
            ("getFullYear", Part::FullYear),
            ("getMonth", Part::Month),
            ("getDate", Part::Date),
        ] {
            let method = move |This(this): This<CelValue>| part.of(&this);
            let _ = root.add_function(name, method);
        }
        Predicates { env, root }
    }
}

impl Predicates {
    /// Parses `source`; a syntax error, or an expression too deep for the
    /// parser, is a [`CelFailure::Parse`]. Every loop and copy of the
    /// expression is metered (see [`budget`]).
    pub fn compile(&self, source: &str) -> Result<Predicate, CelFailure> {
        let mut expression = parse_in(&self.env, source)?;
        budget::instrument(&mut expression);
        Ok(Predicate { expression })
    }

    /// Evaluates `predicate` with each name bound to its JSON document,
    /// within the budget of this process ([`Budget::current`]). A result
    /// that is not a boolean is a [`CelFailure::Eval`] naming its type; a
    /// budget spent, a [`CelFailure::Budget`] whatever the rule gave.
    pub fn evaluate(
        &self,
        predicate: &Predicate,
        variables: &[(&str, &serde_json::Value)],
    ) -> Result<bool, CelFailure> {
        let budget = Budget::current().map_err(CelFailure::Budget)?;
        self.evaluate_within(predicate, variables, budget)
    }

    /// [`Predicates::evaluate`] within `budget`.
    pub fn evaluate_within(
        &self,
        predicate: &Predicate,
        variables: &[(&str, &serde_json::Value)],
        budget: Budget,
    ) -> Result<bool, CelFailure> {
        let mut scope = self.root.new_inner_scope();
        for (name, value) in variables {
            scope.add_variable_from_value(*name, from_json(value));
        }
        let answer = budget::metered(budget, || scope.resolve(&predicate.expression))
            .map_err(CelFailure::Budget)?;
        match answer {
            Ok(CelValue::Bool(answer)) => Ok(answer),
            Ok(other) => Err(CelFailure::Eval(format!(
                "the rule gives {} `{}`, not true or false",
                super::type_name(&other),
                shortened(&super::render(&other))
            ))),
            Err(error) => Err(CelFailure::Eval(error.to_string())),
        }
    }
}

/// At most 200 characters of `text`, for a message.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// JSON values become CEL values of the same shape; integers stay
/// integers.
fn from_json(value: &serde_json::Value) -> CelValue {
    use serde_json::Value as Json;
    match value {
        Json::Null => CelValue::Null,
        Json::Bool(b) => CelValue::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => CelValue::Int(i),
            (None, Some(u)) => CelValue::UInt(u),
            _ => CelValue::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => CelValue::String(Arc::new(s.clone())),
        Json::Array(items) => CelValue::List(Arc::new(items.iter().map(from_json).collect())),
        Json::Object(map) => {
            let entries: std::collections::HashMap<Key, CelValue> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json(v)))
                .collect();
            CelValue::Map(entries.into())
        }
    }
}

/// A field of a timestamp, in UTC.
#[derive(Debug, Clone, Copy)]
enum Part {
    DayOfWeek,
    Hours,
    Minutes,
    FullYear,
    Month,
    Date,
}

impl Part {
    fn of(self, value: &CelValue) -> Result<CelValue, ExecutionError> {
        let Some(time) = (match value {
            CelValue::Opaque(opaque) => opaque.downcast_ref::<Timestamp>(),
            _ => None,
        }) else {
            return Err(ExecutionError::function_error(
                self.name(),
                format!(
                    "it is a method of a timestamp, not of {}: write `timestamp(now).{}()`",
                    super::type_name(value),
                    self.name()
                ),
            ));
        };
        let days = time.seconds.div_euclid(86_400);
        let second_of_day = time.seconds.rem_euclid(86_400);
        let (year, month, day) = civil(days);
        Ok(CelValue::Int(match self {
            // 1970-01-01 was a Thursday (4).
            Part::DayOfWeek => (days + 4).rem_euclid(7),
            Part::Hours => second_of_day / 3600,
            Part::Minutes => second_of_day % 3600 / 60,
            Part::FullYear => year,
            Part::Month => month - 1,
            Part::Date => day,
        }))
    }

    fn name(self) -> &'static str {
        match self {
            Part::DayOfWeek => "getDayOfWeek",
            Part::Hours => "getHours",
            Part::Minutes => "getMinutes",
            Part::FullYear => "getFullYear",
            Part::Month => "getMonth",
            Part::Date => "getDate",
        }
    }
}

/// The (year, month 1-12, day 1-31) of a day counted from 1970-01-01, in
/// the proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(source: &str, variables: &[(&str, &serde_json::Value)]) -> Result<bool, CelFailure> {
        let predicates = Predicates::default();
        let predicate = predicates.compile(source)?;
        predicates.evaluate(&predicate, variables)
    }

    #[test]
    fn a_rule_reads_its_documents() {
        let plan = json!({"components": [
            {"name": "db", "action": "delete"},
            {"name": "web", "action": "update"}
        ]});
        let rule = "plan.components.exists(c, c.name == 'db' && c.action in ['delete', 'replace'])";
        assert_eq!(check(rule, &[("plan", &plan)]), Ok(true));
        let count = "plan.components.filter(c, c.action != 'no-op').size() > 1";
        assert_eq!(check(count, &[("plan", &plan)]), Ok(true));
        assert_eq!(
            check("size(plan.components) > 2", &[("plan", &plan)]),
            Ok(false)
        );
    }

    #[test]
    fn values_of_different_types_are_unequal_not_an_error() {
        let change = json!({"id": ""});
        assert_eq!(check("change.id == 1", &[("change", &change)]), Ok(false));
    }

    #[test]
    fn timestamps_give_their_fields_in_utc() {
        // A Friday.
        let now = json!("2026-11-27T23:30:05Z");
        let cases = [
            ("timestamp(now).getDayOfWeek() == 5", true),
            ("timestamp(now).getHours() == 23", true),
            ("timestamp(now).getMinutes() == 30", true),
            ("timestamp(now).getFullYear() == 2026", true),
            ("timestamp(now).getMonth() == 10", true),
            ("timestamp(now).getDate() == 27", true),
            (
                "timestamp('2024-02-29T00:00:00+00:00').getDate() == 29",
                true,
            ),
            (
                "timestamp('1969-12-31T23:59:59Z').getDayOfWeek() == 3",
                true,
            ),
        ];
        for (rule, expected) in cases {
            assert_eq!(check(rule, &[("now", &now)]), Ok(expected), "{rule}");
        }
    }

    #[test]
    fn a_rule_that_is_not_a_yes_or_no_fails() {
        let plan = json!({"components": []});
        assert_eq!(
            check("size(plan.components)", &[("plan", &plan)]),
            Err(CelFailure::Eval(
                "the rule gives int `0`, not true or false".into()
            ))
        );
        assert!(matches!(
            check("plan.components.(", &[]),
            Err(CelFailure::Parse(_))
        ));
        assert!(matches!(
            check("now.getDayOfWeek() == 5", &[("now", &json!("x"))]),
            Err(CelFailure::Eval(message)) if message.contains("timestamp(now).getDayOfWeek()")
        ));
    }
}
