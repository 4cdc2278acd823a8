//! Go's text/template builtins (`text/template/funcs.go`); `slice` is sprig's, which replaces Go's
//! in Argo's FuncMap, and `and`/`or` are in the executor (their arguments are lazy).

use std::collections::HashMap;

use super::{FuncDef, add};
use crate::gofmt;
use crate::value::Value;

pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "not", 1, Some(1), |a| Ok(Value::Bool(!a[0].truth())));
    add(t, "len", 1, Some(1), len);
    add(t, "index", 1, None, index);
    add(t, "call", 1, None, call);
    add(t, "print", 0, None, |a| Ok(Value::str(gofmt::sprint(a))));
    add(t, "println", 0, None, |a| Ok(Value::str(gofmt::sprintln(a))));
    add(t, "printf", 1, None, |a| {
        let f = super::arg_str(a, 0)?;
        gofmt::sprintf(f, &a[1..]).map(Value::str)
    });
    add(t, "html", 0, None, |a| Ok(Value::str(html_escape(&eval_args(a)))));
    add(t, "js", 0, None, |a| Ok(Value::str(js_escape(&eval_args(a)))));
    add(t, "urlquery", 0, None, |a| Ok(Value::str(query_escape(&eval_args(a)))));
    add(t, "eq", 1, None, eq);
    add(t, "ne", 2, Some(2), |a| eq(a).map(|v| Value::Bool(!v.truth())));
    add(t, "lt", 2, Some(2), |a| compare(&a[0], &a[1]).map(|o| Value::Bool(o.is_lt())));
    add(t, "le", 2, Some(2), |a| compare(&a[0], &a[1]).map(|o| Value::Bool(o.is_le())));
    add(t, "gt", 2, Some(2), |a| compare(&a[0], &a[1]).map(|o| Value::Bool(o.is_gt())));
    add(t, "ge", 2, Some(2), |a| compare(&a[0], &a[1]).map(|o| Value::Bool(o.is_ge())));
}

/// Go's evalArgs for html/js/urlquery: one string as is, otherwise fmt.Sprint.
fn eval_args(a: &[Value]) -> String {
    if let [Value::Str(s)] = a {
        return s.to_string();
    }
    gofmt::sprint(a)
}

fn len(a: &[Value]) -> Result<Value, String> {
    match &a[0] {
        Value::Str(s) => Ok(Value::Int(s.len() as i64)),
        Value::List(l) => Ok(Value::Int(l.len() as i64)),
        Value::Map(m) => Ok(Value::Int(m.len() as i64)),
        Value::Invalid | Value::Nil => Err("len of nil pointer".into()),
        other => Err(format!("len of type {}", other.type_name())),
    }
}

fn index(a: &[Value]) -> Result<Value, String> {
    let mut item = a[0].clone();
    if item.is_nil() {
        return Err("index of untyped nil".into());
    }
    for key in &a[1..] {
        item = match &item {
            Value::List(l) => {
                let i = index_int(key, "slice/array")?;
                let Some(v) = usize::try_from(i).ok().and_then(|i| l.get(i)) else {
                    return Err(format!("error calling index: index out of range: {i}"));
                };
                v.clone()
            }
            Value::Str(s) => {
                let i = index_int(key, "string")?;
                let Some(b) = usize::try_from(i).ok().and_then(|i| s.as_bytes().get(i)) else {
                    return Err(format!("error calling index: index out of range: {i}"));
                };
                Value::Int(i64::from(*b))
            }
            Value::Map(m) => match key {
                Value::Str(k) => m.get(&**k).cloned().unwrap_or(Value::Nil),
                Value::Invalid | Value::Nil => return Err("value is nil; should be of type string".into()),
                other => return Err(format!("value has type {}; should be string", other.type_name())),
            },
            Value::Invalid | Value::Nil => return Err("index of nil pointer".into()),
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn index_int(key: &Value, what: &str) -> Result<i64, String> {
    match key {
        Value::Int(i) | Value::I64(i) => Ok(*i),
        Value::Invalid | Value::Nil => Err(format!("cannot index {what} with nil")),
        other => Err(format!("cannot index {what} with type {}", other.type_name())),
    }
}

fn call(a: &[Value]) -> Result<Value, String> {
    match &a[0] {
        Value::Func(f) => super::call_ext(f, &a[1..]),
        Value::Invalid | Value::Nil => Err("call of nil".into()),
        other => Err(format!("non-function {} of type {}", other.to_go_string(), other.type_name())),
    }
}

#[derive(PartialEq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Nil,
    Other,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::I64(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        Value::Invalid | Value::Nil => Kind::Nil,
        _ => Kind::Other,
    }
}

/// Go's eq: true when the first argument equals any of the others; mixed basic kinds are an error.
fn eq(a: &[Value]) -> Result<Value, String> {
    if a.len() < 2 {
        return Err("missing argument for comparison".into());
    }
    let k1 = kind(&a[0]);
    for b in &a[1..] {
        let k2 = kind(b);
        let truth = if k1 != k2 {
            if k1 != Kind::Nil && k2 != Kind::Nil {
                return Err("incompatible types for comparison".into());
            }
            false
        } else {
            match (&a[0], b) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Int(x) | Value::I64(x), Value::Int(y) | Value::I64(y)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::Str(x), Value::Str(y)) => x == y,
                (x, y) if x.is_nil() && y.is_nil() => true,
                (x, y) => {
                    return Err(format!("non-comparable types {}: {}, {}: {}", x.to_go_string(), x.type_name(), y.type_name(), y.to_go_string()));
                }
            }
        };
        if truth {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, String> {
    let (ka, kb) = (kind(a), kind(b));
    if !matches!(ka, Kind::Int | Kind::Float | Kind::Str) || !matches!(kb, Kind::Int | Kind::Float | Kind::Str) {
        return Err("invalid type for comparison".into());
    }
    if ka != kb {
        return Err("incompatible types for comparison".into());
    }
    Ok(match (a, b) {
        (Value::Int(x) | Value::I64(x), Value::Int(y) | Value::I64(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Greater),
        (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => return Err("invalid type for comparison".into()),
    })
}

/// Go's template.HTMLEscapeString.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's template.JSEscapeString.
fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Go's url.QueryEscape.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
