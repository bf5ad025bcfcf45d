//! The budget of one evaluation: how many steps, how much memory and how
//! much time an expression may take before it fails.
//!
//! Rules and `#{...}` expressions come from the stack, which a pull request
//! controls, and the `cel` crate has no step limit, no hook and no way to
//! stop an evaluation: `[0,…,19].all(a, [0,…,19].all(b, …))` seven deep
//! runs for days, and a few nested `map`s over list literals copy gigabytes.
//! So hub meters the evaluation itself. Before an expression is evaluated,
//! [`instrument`] rewrites its syntax tree so that every place the crate
//! copies or loops goes through one of two functions of this module:
//!
//! - `hub@range(r)` around the range of every comprehension (`all`,
//!   `exists`, `exists_one`, `map`, `filter`): charges one step per element;
//! - `hub@copy(x)` around every element of a list or map literal and each
//!   operand of `+`: charges the size of what is about to be copied;
//! - `hub@tick(x)` on what each iteration evaluates (the loop condition, the
//!   guard of `filter`, the element of `map`): looks at the clock every few
//!   iterations, so that one loop over slow work stops in time too.
//!
//! The first two check the clock too. The charge is made before the crate copies, so
//! memory stays within about the budget; once it is spent, every later
//! charge fails at once, and the evaluation's result is a
//! [`CelFailure::Budget`](super::CelFailure::Budget) whatever the expression
//! made of the error (`all` and `||` may swallow one). Everything between
//! two charges is a bounded piece of work: the expression has at most a few
//! hundred nodes ([`super::depth`]) and holds no loop that does not charge.
//!
//! Sizes are estimates in bytes: [`NODE_BYTES`] a value plus the length of
//! strings and bytes. They count what is copied over the whole evaluation,
//! not what is alive at once, so they over-estimate the peak.
//!
//! This is an in-process meter rather than a child process with `setrlimit`:
//! it is deterministic (the same rule fails the same way on every machine),
//! costs nothing when rules are small, bounds the `#{...}` parameter
//! expressions too (thousands of them per plan, too many for a process
//! each) and gives the message that names the rule without interpreting a
//! killed process.

use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr};
use cel::common::types::{CelBytes, CelList, CelMap, CelString, DYN_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};
use std::cell::RefCell;
use std::time::Duration;

/// What one evaluation may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Loop iterations, over all the comprehensions of the expression.
    pub steps: u64,
    /// Estimated bytes copied.
    pub memory: u64,
    /// Processor time of the evaluating thread (not wall-clock time, so
    /// that a busy runner does not fail rules that fit).
    pub time: Duration,
}

/// Environment variables that set the budget.
pub const STEPS_VARIABLE: &str = "HUB_CEL_MAX_STEPS";
pub const MEMORY_VARIABLE: &str = "HUB_CEL_MAX_MEMORY";
pub const TIME_VARIABLE: &str = "HUB_CEL_MAX_TIME";

impl Default for Budget {
    /// Ten million steps, 256 MB, 5 seconds: rules over plans of thousands
    /// of components, even pairwise, stay far below.
    fn default() -> Self {
        Budget {
            steps: 10_000_000,
            memory: 256 << 20,
            time: Duration::from_secs(5),
        }
    }
}

impl Budget {
    /// The default budget, with what [`STEPS_VARIABLE`], [`MEMORY_VARIABLE`]
    /// and [`TIME_VARIABLE`] set instead; why one of them is not a number
    /// of steps, a size (`512MB`, `1GB`) or a duration (`10s`, `500ms`).
    pub fn from_env() -> Result<Budget, String> {
        let mut budget = Budget::default();
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if let Some(text) = read(STEPS_VARIABLE) {
            budget.steps = text.trim().parse().map_err(|_| {
                format!("{STEPS_VARIABLE}=`{text}` is not a number of steps, e.g. `10000000`")
            })?;
        }
        if let Some(text) = read(MEMORY_VARIABLE) {
            budget.memory = parse_size(&text).ok_or_else(|| {
                format!("{MEMORY_VARIABLE}=`{text}` is not a size, e.g. `256MB` or `1GB`")
            })?;
        }
        if let Some(text) = read(TIME_VARIABLE) {
            budget.time = parse_time(&text).ok_or_else(|| {
                format!("{TIME_VARIABLE}=`{text}` is not a duration, e.g. `5s` or `500ms`")
            })?;
        }
        Ok(budget)
    }

    /// The budget of this process: [`Budget::from_env`], read once.
    pub fn current() -> Result<Budget, String> {
        static CURRENT: std::sync::OnceLock<Result<Budget, String>> = std::sync::OnceLock::new();
        CURRENT.get_or_init(Budget::from_env).clone()
    }
}

fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits].parse().ok()?;
    let unit: u64 = match text[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(unit)
}

fn parse_time(text: &str) -> Option<Duration> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits].parse().ok()?;
    match text[digits..].trim() {
        "ms" => Some(Duration::from_millis(number)),
        "" | "s" => Some(Duration::from_secs(number)),
        "m" => Some(Duration::from_secs(number.checked_mul(60)?)),
        _ => None,
    }
}

/// The estimated size of one value, besides the text it holds.
pub const NODE_BYTES: u64 = 32;

const RANGE: &str = "hub@range";
const COPY: &str = "hub@copy";
const TICK: &str = "hub@tick";

/// How many iterations pass between two looks at the clock.
const TICKS_PER_CLOCK: u64 = 64;

/// What an evaluation spent, and whether it ran out.
struct Meter {
    budget: Budget,
    started: Duration,
    steps: u64,
    memory: u64,
    ticks: u64,
    exceeded: Option<String>,
}

thread_local! {
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Runs `evaluate` under `budget`; `Err` with what ran out when the budget
/// was spent, whatever `evaluate` returned.
pub fn metered<T>(budget: Budget, evaluate: impl FnOnce() -> T) -> Result<T, String> {
    let outer = METER.with(|m| {
        m.replace(Some(Meter {
            budget,
            started: thread_time(),
            steps: 0,
            memory: 0,
            ticks: 0,
            exceeded: None,
        }))
    });
    let result = evaluate();
    let meter = METER.with(|m| m.replace(outer));
    match meter.and_then(|m| m.exceeded) {
        Some(exceeded) => Err(exceeded),
        None => Ok(result),
    }
}

/// Charges `steps` and `memory`; the error that stops the evaluation when
/// the budget is spent. Without a meter (an evaluation not run through
/// [`metered`]) nothing is charged.
fn charge(steps: u64, memory: u64) -> Result<(), ExecutionError> {
    METER.with(|m| {
        let mut meter = m.borrow_mut();
        let Some(meter) = meter.as_mut() else {
            return Ok(());
        };
        if meter.exceeded.is_none() {
            meter.steps = meter.steps.saturating_add(steps);
            meter.memory = meter.memory.saturating_add(memory);
            let budget = meter.budget;
            meter.exceeded = if meter.steps > budget.steps {
                Some(format!(
                    "it ran over its budget of {} steps (loop iterations, {STEPS_VARIABLE})",
                    budget.steps
                ))
            } else if meter.memory > budget.memory {
                Some(format!(
                    "it ran over its budget of {} MB of memory ({MEMORY_VARIABLE})",
                    budget.memory >> 20
                ))
            } else if thread_time().saturating_sub(meter.started) > budget.time {
                Some(format!(
                    "it ran over its budget of {} ms ({TIME_VARIABLE})",
                    budget.time.as_millis()
                ))
            } else {
                None
            };
        }
        match &meter.exceeded {
            Some(exceeded) => Err(ExecutionError::function_error("budget", exceeded)),
            None => Ok(()),
        }
    })
}

/// The processor time this thread has used.
fn thread_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid `timespec` for the call to fill.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// The estimated bytes a copy of `value` takes, counted up to `limit`.
fn size_of(value: &dyn Val, limit: u64) -> u64 {
    let mut total = 0u64;
    let mut pending: Vec<&dyn Val> = vec![value];
    while let Some(value) = pending.pop() {
        total = total.saturating_add(NODE_BYTES);
        if total > limit {
            return total;
        }
        if let Some(text) = value.downcast_ref::<CelString>() {
            total = total.saturating_add(text.inner().len() as u64);
        } else if let Some(bytes) = value.downcast_ref::<CelBytes>() {
            total = total.saturating_add(bytes.inner().len() as u64);
        } else if let Some(list) = value.downcast_ref::<CelList>() {
            pending.extend(list.inner().iter().map(|item| item.as_ref()));
        } else if let Some(map) = value.downcast_ref::<CelMap>() {
            total = total.saturating_add(NODE_BYTES.saturating_mul(map.inner().len() as u64));
            pending.extend(map.inner().values().map(|item| item.as_ref()));
        }
    }
    total
}

/// What is left of the memory budget, the most a size needs counting to.
fn memory_left() -> u64 {
    METER
        .with(|m| {
            m.borrow()
                .as_ref()
                .map_or(u64::MAX, |m| m.budget.memory.saturating_sub(m.memory))
        })
        .saturating_add(1)
}

fn the_argument<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    match (args.pop(), args.is_empty()) {
        (Some(value), true) => Ok(value),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len() + 1)),
    }
}

/// `hub@range(r)`: a step for each element of `r`. The copy of each
/// element into the loop variable lives for one iteration, and whatever
/// keeps it (a list, a map, `+`) charges it then.
fn range<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = the_argument(args)?;
    let steps = match value.as_sizer() {
        Some(sizer) => u64::try_from(*sizer.size().inner()).unwrap_or(0),
        None => 0,
    };
    charge(steps, 0)?;
    Ok(value)
}

/// `hub@tick(x)`: one iteration of a loop, which looks at the clock now
/// and then; `x` as it is. Steps are charged by `hub@range`.
fn tick<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = the_argument(args)?;
    let look = METER.with(|m| {
        m.borrow_mut().as_mut().is_some_and(|meter| {
            meter.ticks += 1;
            meter.exceeded.is_some() || meter.ticks % TICKS_PER_CLOCK == 0
        })
    });
    if look {
        charge(0, 0)?;
    }
    Ok(value)
}

/// `hub@copy(x)`: the size of `x`.
fn copy<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = the_argument(args)?;
    charge(0, size_of(value.as_ref(), memory_left()))?;
    Ok(value)
}

/// Declares the two metering functions in `env`.
pub fn declare(env: &mut Env) {
    for (name, function) in [
        (RANGE, range as cel::common::functions::Function),
        (COPY, copy),
        (TICK, tick),
    ] {
        // The names hold `@`, which no expression can write: no clash.
        let _ = env.add_overload(name, name, vec![DYN_TYPE], function);
    }
}

/// Routes every copy and every loop of `root` through the metering
/// functions. Run it on the tree as parsed, before any operator is pointed
/// at another function.
pub fn instrument(root: &mut IdedExpr) {
    super::walk::edit_each(root, |node| match &mut node.expr {
        Expr::Comprehension(c) => {
            let c = c.as_mut();
            wrap(RANGE, &mut c.iter_range);
            tick_each_iteration(c);
        }
        Expr::List(list) => list.elements.iter_mut().for_each(|e| wrap(COPY, e)),
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let EntryExpr::MapEntry(e) = &mut entry.expr {
                    wrap(COPY, &mut e.value);
                }
            }
        }
        // The accumulator of `map` and `filter` is appended to in place,
        // not copied, and the crate sees that only in `@result + [x]` as
        // written (whose `x` is metered as an element of a list).
        Expr::Call(call)
            if call.target.is_none()
                && call.args.len() == 2
                && call.func_name == operators::ADD
                && !call.args.iter().any(is_accumulator) =>
        {
            call.args.iter_mut().for_each(|operand| wrap(COPY, operand));
        }
        _ => {}
    });
}

/// The accumulator of a macro: `@result`, a name no expression can write.
pub(super) fn is_accumulator(node: &IdedExpr) -> bool {
    matches!(&node.expr, Expr::Ident(name) if name.starts_with('@'))
}

/// Puts `hub@tick` where the comprehension evaluates something on every
/// iteration, without changing the shapes the crate runs faster: the loop
/// condition of `all` and `exists`; the guard of `filter`, of `map` with a
/// filter and of `exists_one`; the element `map` appends.
fn tick_each_iteration(c: &mut cel::common::ast::ComprehensionExpr) {
    if !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return call(TICK, &mut c.loop_cond);
    }
    match &mut c.loop_step.expr {
        Expr::Call(step) if step.func_name == operators::CONDITIONAL && step.args.len() == 3 => {
            call(TICK, &mut step.args[0]);
        }
        Expr::Call(step)
            if step.func_name == operators::ADD
                && step.args.len() == 2
                && is_accumulator(&step.args[0])
                && matches!(&step.args[1].expr, Expr::List(list) if !list.elements.is_empty()) =>
        {
            if let Expr::List(list) = &mut step.args[1].expr {
                list.elements.iter_mut().for_each(|e| call(TICK, e));
            }
        }
        _ => call(TICK, &mut c.loop_cond),
    }
}

/// `node` becomes `function(node)`; literals are left alone (their size is
/// the expression's own).
fn wrap(function: &str, node: &mut IdedExpr) {
    let skip = match &node.expr {
        Expr::Literal(_) | Expr::Unspecified => true,
        Expr::Call(call) => call.func_name == function,
        _ => false,
    };
    if !skip {
        call(function, node);
    }
}

/// `node` becomes `function(node)`.
fn call(function: &str, node: &mut IdedExpr) {
    let inner = std::mem::replace(&mut node.expr, Expr::Unspecified);
    let argument = IdedExpr {
        id: node.id,
        expr: inner,
    };
    node.expr = Expr::Call(cel::common::ast::CallExpr {
        func_name: function.to_string(),
        target: None,
        args: vec![argument],
    });
}

#[cfg(test)]
mod tests;
