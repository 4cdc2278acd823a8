//! Trigger conditions: expr-lang expressions over the Application (`app`), with Argo CD's
//! helpers (`time.Now()`, `time.Parse(...)`, `time.Minute`..., `strings.ReplaceAll`...,
//! `repo.RepoURLToHTTPS`...), evaluated as notifications-engine's `pkg/triggers` does: each
//! condition's key is `[i].<base64url(sha1(when))>`, `oncePer` is formatted with Go's `%v`.
//!
//! expr-lang has no methods on maps, so `time.Parse(x)` is rewritten to a function
//! (`__time_Parse(x)`) before compiling; the time values it returns carry Go's methods
//! (`Add`, `Before`, `Sub`, `Minutes`...).
//!
//! Bounds: an expression is at most [`MAX_EXPR_BYTES`] long and [`MAX_NESTING`] deep, and may
//! not use the range operator (`1..n`) or `repeat()`, the only constructs whose cost grows with
//! a number rather than with the Application; the caller runs a pass under a deadline
//! (see the controller).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use base64::Engine as _;
use expr::{Context, Environment, Program, Value};
use sha1::Digest as _;

use crate::config::Condition;
use crate::error::Error;

/// Longest condition accepted.
pub const MAX_EXPR_BYTES: usize = 4096;
/// Deepest nesting of brackets accepted.
pub const MAX_NESTING: usize = 32;

/// A condition's outcome (notifications-engine's `ConditionResult`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConditionResult {
    pub key: String,
    pub once_per: String,
    pub templates: Vec<String>,
    pub triggered: bool,
    /// Why `when` (or `oncePer`) could not be evaluated; the condition then did not trigger.
    pub error: Option<String>,
}

struct Compiled {
    condition: Condition,
    key: String,
    when: Result<Program, String>,
    once_per: Option<Result<Program, String>>,
}

/// Compiled triggers.
#[derive(Default)]
pub struct Triggers {
    triggers: BTreeMap<String, Vec<Compiled>>,
}

impl Triggers {
    /// Compiles every condition; the ones that do not compile are returned as errors (and
    /// report the same error, untriggered, when run).
    pub fn compile(triggers: &BTreeMap<String, Vec<Condition>>) -> (Triggers, Vec<Error>) {
        let mut errors = Vec::new();
        let mut out = BTreeMap::new();
        for (name, conditions) in triggers {
            let mut compiled = Vec::new();
            for (i, c) in conditions.iter().enumerate() {
                let when_text = if c.when.is_empty() { "false" } else { &c.when };
                let when = compile(when_text);
                let once_per = (!c.once_per.is_empty()).then(|| compile(&c.once_per));
                for e in [
                    when.as_ref().err(),
                    once_per.as_ref().and_then(|o| o.as_ref().err()),
                ]
                .into_iter()
                .flatten()
                {
                    errors.push(Error::Trigger {
                        trigger: name.clone(),
                        message: format!("condition {i}: {e}"),
                    });
                }
                compiled.push(Compiled {
                    condition: c.clone(),
                    key: format!("[{i}].{}", hash(&c.when)),
                    when,
                    once_per,
                });
            }
            out.insert(name.clone(), compiled);
        }
        (Triggers { triggers: out }, errors)
    }

    /// The trigger names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.triggers.keys().map(String::as_str)
    }

    /// The conditions of a trigger as configured.
    pub fn conditions(&self, name: &str) -> Option<Vec<&Condition>> {
        self.triggers
            .get(name)
            .map(|cs| cs.iter().map(|c| &c.condition).collect())
    }

    /// Runs the trigger `name` over the variables ([`vars`]).
    pub fn run(&self, name: &str, vars: &Context) -> Result<Vec<ConditionResult>, Error> {
        let conditions = self.triggers.get(name).ok_or_else(|| Error::Trigger {
            trigger: name.to_string(),
            message: format!("trigger '{name}' is not configured"),
        })?;
        Ok(conditions.iter().map(|c| run_condition(c, vars)).collect())
    }
}

fn run_condition(c: &Compiled, vars: &Context) -> ConditionResult {
    let mut result = ConditionResult {
        key: c.key.clone(),
        templates: c.condition.send.clone(),
        ..ConditionResult::default()
    };
    match c
        .when
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|p| run(p, vars))
    {
        Ok(Value::Bool(b)) => result.triggered = b,
        Ok(_) => {}
        Err(e) => result.error = Some(format!("when: {e}")),
    }
    if result.triggered
        && let Some(once_per) = &c.once_per
    {
        match once_per
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|p| run(p, vars))
        {
            Ok(v) => result.once_per = go_format(&v),
            Err(e) => result.error = Some(format!("oncePer: {e}")),
        }
    }
    result
}

fn run(program: &Program, vars: &Context) -> Result<Value, String> {
    // expr-lang is tested panic-free; a panic would still only fail this condition.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ENV.run(program, vars)))
        .map_err(|_| "evaluation panicked".to_string())?
        .map_err(|e| e.to_string())
}

/// notifications-engine's `hash`: base64url (no padding) of the SHA-1 of `when`.
fn hash(input: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha1::Sha1::digest(input.as_bytes()))
}

/// Checks the bounds, rewrites Argo's helper calls and compiles.
pub fn compile(text: &str) -> Result<Program, String> {
    if text.len() > MAX_EXPR_BYTES {
        return Err(format!(
            "expression of {} bytes, more than {MAX_EXPR_BYTES}",
            text.len()
        ));
    }
    let rewritten = rewrite(text)?;
    expr::compile(&rewritten).map_err(|e| e.to_string())
}

/// The helper functions Argo CD puts under `time`, `strings` and `repo` that expressions call.
const HELPERS: &[(&str, &str)] = &[
    ("time", "Now"),
    ("time", "Parse"),
    ("strings", "ReplaceAll"),
    ("strings", "ToUpper"),
    ("strings", "ToLower"),
    ("repo", "RepoURLToHTTPS"),
    ("repo", "FullNameByRepoURL"),
    ("repo", "QueryEscape"),
];

/// Rewrites `ns.Fn(` to `__ns_Fn(` outside string literals, and refuses what is out of bounds.
fn rewrite(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut depth, mut quote) = (0usize, 0usize, None::<u8>);
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'#';
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' && q != b'`' && i + 1 < bytes.len() {
                out.push_str(&text[i..i + 2]);
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
        } else {
            match b {
                b'"' | b'\'' | b'`' => quote = Some(b),
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(format!("nested more than {MAX_NESTING} deep"));
                    }
                }
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'.' if bytes.get(i + 1) == Some(&b'.') => {
                    return Err(
                        "the range operator (..) is not allowed in notification conditions".into(),
                    );
                }
                _ => {}
            }
            let starts_word = i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b'.');
            if starts_word && b.is_ascii_alphabetic() {
                let end = i + bytes[i..].iter().take_while(|c| is_ident(**c)).count();
                let word = &text[i..end];
                if word == "repeat" && next_non_space(bytes, end) == Some(b'(') {
                    return Err("repeat() is not allowed in notification conditions".into());
                }
                if let Some((ns, f, len)) = helper_at(text, i) {
                    out.push_str(&format!("__{ns}_{f}"));
                    i += len;
                    continue;
                }
                out.push_str(word);
                i = end;
                continue;
            }
        }
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    Ok(out)
}

fn next_non_space(bytes: &[u8], from: usize) -> Option<u8> {
    bytes[from..]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
}

/// `ns.Fn` followed by `(` at `i`: the helper and the length of `ns.Fn`.
fn helper_at(text: &str, i: usize) -> Option<(&'static str, &'static str, usize)> {
    HELPERS.iter().find_map(|(ns, f)| {
        let call = format!("{ns}.{f}");
        let rest = text[i..].strip_prefix(call.as_str())?;
        rest.trim_start()
            .starts_with('(')
            .then_some((*ns, *f, call.len()))
    })
}

/// Go's `fmt.Sprintf("%v", v)` for the values an expression returns.
pub fn go_format(v: &Value) -> String {
    match v {
        Value::Nil => "<nil>".to_string(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => crate::vars::go_float(*f),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_format).collect::<Vec<_>>().join(" ")
        ),
        Value::Map(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_format(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
        other => other.to_string(),
    }
}

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    crate::vars::add_expr_helpers(&mut env);
    env
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(text: &str, app: serde_json::Value) -> Result<Value, String> {
        let vars = crate::vars::expr_vars(&app, &json!({}), &BTreeMap::new());
        run(&compile(text)?, &vars)
    }

    #[test]
    fn argo_expressions() {
        let app = json!({
            "metadata": {"name": "guestbook"},
            "status": {
                "health": {"status": "Healthy", "lastTransitionTime": "2024-05-01T10:00:00Z"},
                "operationState": {"phase": "Succeeded", "startedAt": "2024-05-01T10:01:00Z",
                    "finishedAt": "2024-05-01T10:02:30Z", "syncResult": {"revision": "abc"}},
            }
        });
        let ok = |t: &str| eval(t, app.clone());
        assert_eq!(
            ok("app.status.operationState.phase in ['Error', 'Failed']"),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            ok("app.metadata.deletionTimestamp != nil"),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            ok("app.status.operationState?.syncResult?.revision"),
            Ok(Value::String("abc".into()))
        );
        assert_eq!(ok("app.status.missing?.x"), Ok(Value::Nil));
        assert_eq!(
            ok(
                "time.Parse(app.status.operationState.finishedAt).Sub(time.Parse(app.status.operationState.startedAt)).Minutes()"
            ),
            Ok(Value::Float(1.5))
        );
        assert_eq!(
            ok(
                "time.Parse(app.status.health.lastTransitionTime).Add(1 * time.Minute).Before(time.Parse(app.status.operationState.finishedAt))"
            ),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            ok("time.Now().Sub(time.Parse('2020-01-01T00:00:00Z')).Hours() > 1000"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            ok("strings.ToUpper(app.metadata.name)"),
            Ok(Value::String("GUESTBOOK".into()))
        );
        // A string that looks like a helper call is left alone.
        assert_eq!(
            ok("'time.Parse(' + 'x'"),
            Ok(Value::String("time.Parse(x".into()))
        );
        assert!(ok("time.Parse('yesterday')").is_err());
    }

    #[test]
    fn bounds() {
        let app = json!({});
        assert!(
            compile(&"1+".repeat(3000))
                .unwrap_err()
                .contains("more than 4096")
        );
        assert!(
            compile(&format!("{}1{}", "(".repeat(40), ")".repeat(40)))
                .unwrap_err()
                .contains("nested")
        );
        assert!(
            compile("len(map(1..100000000, #)) > 0")
                .unwrap_err()
                .contains("range operator")
        );
        assert!(
            compile("len(repeat('x', 1000000000)) > 0")
                .unwrap_err()
                .contains("repeat()")
        );
        assert!(compile("app.x ==").is_err());
        assert_eq!(eval("1.5 + 1", app), Ok(Value::Float(2.5)));
    }

    #[test]
    fn condition_keys_and_once_per_as_notifications_engine() {
        let triggers = BTreeMap::from([(
            "on-sync-succeeded".to_string(),
            vec![Condition {
                when: "app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']".into(),
                once_per: "app.status.operationState?.syncResult?.revision".into(),
                send: vec!["app-sync-succeeded".into()],
                ..Condition::default()
            }],
        )]);
        let (t, errors) = Triggers::compile(&triggers);
        assert!(errors.is_empty());
        let app = json!({"status": {"operationState": {"phase": "Succeeded"}}});
        let vars = crate::vars::expr_vars(&app, &json!({}), &BTreeMap::new());
        let r = t.run("on-sync-succeeded", &vars).unwrap();
        // sha1 of the condition, base64url: the value Go's crypto/sha1 + RawURLEncoding give.
        assert_eq!(r[0].key, "[0].IwKhHw9Hu8IE3z5Y8CQE4vReLYs");
        assert!(r[0].triggered);
        // Go's %v of a nil interface.
        assert_eq!(r[0].once_per, "<nil>");
        assert!(
            t.run("nope", &vars)
                .unwrap_err()
                .to_string()
                .contains("'nope' is not configured")
        );
    }
}
