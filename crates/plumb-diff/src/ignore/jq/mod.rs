//! `jqPathExpressions`, run with jaq under a step, stack and time budget.
//!
//! Argo CD runs `del(<expr>)` with gojq. jaq's `del` errors on paths through missing fields
//! where gojq is a no-op (ecosystem notes §B6), so Plumb asks jaq for the paths instead
//! (`path(<expr>)`) and removes them itself: a path that does not exist removes nothing, and
//! an expression that fails is a no-op, as in Argo.
//!
//! An expression is untrusted code. It runs on the caller's thread under [`budget`]: every step
//! counts against fuel, recursion stops before the thread's stack does, and the deadline is a
//! real cancellation (the evaluation unwinds and is dropped; no thread is left running). Before
//! it runs, [`refuse`] turns away what the budget cannot bound (one step that allocates without
//! limit, builtins that exit the process, print or read the environment).

mod budget;
mod data;
mod failure;
mod refuse;

use std::time::Duration;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::{Fun, v};
use jaq_core::{Compiler, Ctx, Cv, DataT, Exn, Native, ValXs, Vars};
use jaq_json::Val;
use serde::Deserialize;
use serde_json::Value;

use super::json_pointer::Step;
pub(crate) use budget::Limits;
pub(crate) use data::Bounded;
use data::Counted;
pub(crate) use failure::JqFailure;

/// Most paths one expression may select in one object.
const MAX_PATHS: usize = 100_000;

/// Checks that `expr` is allowed and compiles (when rules are loaded, so a typo is reported at
/// once).
pub(crate) fn check(expr: &str) -> Result<(), JqFailure> {
    refuse::check(expr)?;
    let code = format!("path({expr})");
    compile_and_run(&code, None, default_limits(), false).map(|_| ())
}

/// The paths `expr` selects in `input`, within `limits`. Run-time error texts leave out the
/// values involved unless `reveal` (only for objects Plumb made up itself).
pub(crate) fn paths(
    expr: &str,
    input: &Value,
    limits: Limits,
    reveal: bool,
) -> Result<Vec<Vec<Step>>, JqFailure> {
    refuse::check(expr)?;
    let code = format!("path({expr})");
    compile_and_run(&code, Some(input), limits, reveal)
        .map(|paths| paths.into_iter().filter_map(to_steps).collect())
}

/// Limits used when only compiling (no input: nothing runs).
fn default_limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(1),
        fuel: 1_000_000,
        stack_reserve: 256 * 1024,
    }
}

fn funs() -> impl Iterator<Item = Fun<Bounded>> {
    jaq_core::funs::<Bounded>()
        .filter(|(name, _, _)| *name != "range")
        .chain(jaq_std::funs::<Bounded>().map(|(name, arity, native)| {
            if refuse::native_refused(name) {
                (name, arity, Native::<Bounded>::new(refuse::unavailable))
            } else {
                (name, arity, native)
            }
        }))
        .chain(jaq_json::funs::<Bounded>())
        .chain([("range", v(3), Native::<Bounded>::new(range))])
}

fn compile_and_run(
    code: &str,
    input: Option<&Value>,
    limits: Limits,
    reveal: bool,
) -> Result<Vec<Value>, JqFailure> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| JqFailure::Invalid(format!("{} parse error(s)", errs.len())))?;
    let filter = Compiler::default()
        .with_funs(funs())
        .compile(modules)
        .map_err(|errs| {
            let names: Vec<String> = errs
                .iter()
                .flat_map(|(_, e)| e.iter().map(|(name, _)| name.to_string()))
                .collect();
            JqFailure::Invalid(format!("undefined or refused: {}", names.join(", ")))
        })?;
    let Some(input) = input else {
        return Ok(Vec::new());
    };
    let input = Val::deserialize(input.clone())
        .map_err(|e| JqFailure::Runtime(format!("cannot read the object: {e}")))?;
    budget::run(limits, || {
        let ctx = Ctx::<Bounded>::new(Counted(&filter.lut), Vars::new([]));
        let mut out = Vec::new();
        for item in filter.id.run((ctx, input)) {
            match jaq_core::unwrap_valr(item) {
                Ok(v) => {
                    if out.len() >= MAX_PATHS {
                        return Err(JqFailure::Runtime(format!(
                            "it selects more than {MAX_PATHS} paths"
                        )));
                    }
                    out.push(v);
                }
                Err(e) if reveal => return Err(JqFailure::Runtime(e.to_string())),
                Err(_) => {
                    return Err(JqFailure::Runtime(
                        "run-time error (details left out: they may quote the object's values)"
                            .into(),
                    ));
                }
            }
        }
        Ok(out)
    })?
    .and_then(|vals| {
        vals.into_iter()
            .map(|v| {
                serde_json::from_str(&v.to_string())
                    .map_err(|e| JqFailure::Runtime(format!("unreadable path: {e}")))
            })
            .collect()
    })
}

/// `range($from; $to; $by)` as jaq has it, with one budget step per value: jaq's own yields
/// values without any step the budget sees, so `[range(1e12)]` would fill memory uncounted.
fn range<'a>(mut cv: Cv<'a, Bounded>) -> ValXs<'a, <Bounded as DataT>::V<'a>> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let by = cv.0.pop_var();
    let to = cv.0.pop_var();
    let from = cv.0.pop_var();
    let cmp = by.partial_cmp(&Val::from(0isize)).unwrap_or(Equal);
    let mut next: Result<Val, Exn<'a, Val>> = Ok(from);
    Box::new(std::iter::from_fn(move || {
        budget::tick();
        match next.clone() {
            Ok(x) => {
                let more = match cmp {
                    Greater => x < to,
                    Less => x > to,
                    Equal => x != to,
                };
                more.then(|| std::mem::replace(&mut next, (x + by.clone()).map_err(Exn::from)))
            }
            e @ Err(_) => {
                next = Ok(to.clone());
                Some(e)
            }
        }
    }))
}

fn to_steps(path: Value) -> Option<Vec<Step>> {
    let Value::Array(parts) = path else {
        return None;
    };
    parts
        .into_iter()
        .map(|part| match part {
            Value::String(s) => Some(Step::Token(s)),
            Value::Number(n) => n.as_i64().map(Step::Index),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
