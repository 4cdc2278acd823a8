//! `jqPathExpressions`, run with jaq under a time limit.
//!
//! Argo CD runs `del(<expr>)` with gojq. jaq's `del` errors on paths through missing fields
//! where gojq is a no-op (ecosystem notes §B6), so Plumb asks jaq for the paths instead
//! (`[path(<expr>)]`) and removes them itself: a path that does not exist removes nothing, and
//! an expression that fails is a no-op, as in Argo. jaq has no cancellation, so each run happens
//! on a worker thread and is abandoned when the deadline passes (the thread finishes on its own;
//! an expression that never terminates keeps one thread busy, which is why the limit exists).

use std::sync::mpsc;
use std::time::Duration;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;
use serde::Deserialize;
use serde_json::Value;

use super::json_pointer::Step;

/// Why a jq expression produced no paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JqFailure {
    /// The expression does not parse or compile.
    Invalid(String),
    /// It ran past the time limit.
    Timeout,
    /// It failed at run time (treated as a no-op).
    Runtime(String),
}

/// Checks that `expr` compiles (used when rules are loaded, so a typo is reported at once).
pub(crate) fn check(expr: &str) -> Result<(), JqFailure> {
    let code = format!("[path({expr})]");
    compile_and_run(&code, None).map(|_| ())
}

/// The paths `expr` selects in `input`, with a deadline.
pub(crate) fn paths(
    expr: &str,
    input: &Value,
    limit: Duration,
) -> Result<Vec<Vec<Step>>, JqFailure> {
    let code = format!("[path({expr})]");
    let input = input.clone();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("plumb-jq".into())
        .spawn(move || {
            // The receiver may be gone after a timeout; nothing to do then.
            let _ = tx.send(compile_and_run(&code, Some(&input)));
        });
    if let Err(e) = spawned {
        return Err(JqFailure::Runtime(format!("cannot start jq worker: {e}")));
    }
    match rx.recv_timeout(limit) {
        Ok(result) => result.map(|v| v.map(to_paths).unwrap_or_default()),
        Err(_) => Err(JqFailure::Timeout),
    }
}

fn compile_and_run(code: &str, input: Option<&Value>) -> Result<Option<Value>, JqFailure> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| JqFailure::Invalid(format!("{} parse error(s)", errs.len())))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| JqFailure::Invalid(format!("{} compile error(s)", errs.len())))?;
    let Some(input) = input else { return Ok(None) };
    let input = Val::deserialize(input.clone()).map_err(|e| JqFailure::Runtime(e.to_string()))?;
    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let mut out = filter.id.run((ctx, input)).map(unwrap_valr);
    match out.next() {
        Some(Ok(v)) => serde_json::from_str(&v.to_string())
            .map(Some)
            .map_err(|e| JqFailure::Runtime(e.to_string())),
        Some(Err(e)) => Err(JqFailure::Runtime(format!("{e:?}"))),
        None => Ok(None),
    }
}

fn to_paths(v: Value) -> Vec<Vec<Step>> {
    let Value::Array(paths) = v else {
        return Vec::new();
    };
    paths
        .into_iter()
        .filter_map(|p| {
            let Value::Array(parts) = p else { return None };
            parts
                .into_iter()
                .map(|part| match part {
                    Value::String(s) => Some(Step::Token(s)),
                    Value::Number(n) => n.as_i64().map(Step::Index),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LIMIT: Duration = Duration::from_secs(5);

    #[test]
    fn select_paths() {
        let obj = json!({"spec": {"containers": [{"name": "app", "image": "a"}, {"name": "istio-proxy", "image": "b"}]}});
        let p = paths(
            r#".spec.containers[] | select(.name == "istio-proxy")"#,
            &obj,
            LIMIT,
        )
        .unwrap();
        assert_eq!(
            p,
            vec![vec![
                Step::Token("spec".into()),
                Step::Token("containers".into()),
                Step::Index(1)
            ]]
        );
    }

    #[test]
    fn missing_path_is_a_path_not_an_error() {
        let obj = json!({"spec": {}});
        let p = paths(".spec.missing.field", &obj, LIMIT).unwrap();
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn invalid_expression() {
        assert!(matches!(check(".spec[[["), Err(JqFailure::Invalid(_))));
        assert!(check(".metadata.annotations[\"a/b\"]").is_ok());
    }

    #[test]
    fn runaway_expression_times_out() {
        let obj = json!({});
        // Constant memory, effectively endless: counts to 10^15 before deciding.
        let r = paths(
            ".a | select(last(range(1e15)) < 0)",
            &obj,
            Duration::from_millis(200),
        );
        assert_eq!(r, Err(JqFailure::Timeout));
    }
}
