//! The function table: Go's builtins, sprig v3.3.0's GenericFuncMap as Argo CD v3.6.1 trims it,
//! and Argo's own functions. Sprig is Go code, so it is rewritten here function by function.

mod builtins;
mod collections;
mod encoding;
mod math;
mod strings;
pub(crate) mod time;

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::value::{ExtFn, Value};

pub(crate) type NativeFn = fn(&[Value]) -> Result<Value, String>;

/// A function and its arity (`max: None` for variadic).
pub(crate) struct FuncDef {
    pub min: usize,
    pub max: Option<usize>,
    pub f: NativeFn,
}

/// Names handled by the executor itself (lazy arguments or access to the template).
const SPECIAL: &[&str] = &["and", "or", "tpl"];

/// Sprig functions Argo removes, and sprig functions not implemented here: both are refused at
/// parse time as "function not defined" (Argo refuses the first kind the same way).
pub const NOT_IMPLEMENTED: &[&str] = &[
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "shuffle",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
    "durationRound",
    "typeIsLike",
];

static TABLE: LazyLock<HashMap<&'static str, FuncDef>> = LazyLock::new(|| {
    let mut t = HashMap::new();
    builtins::register(&mut t);
    strings::register(&mut t);
    collections::register(&mut t);
    math::register(&mut t);
    encoding::register(&mut t);
    time::register(&mut t);
    t
});

pub(crate) fn add(t: &mut HashMap<&'static str, FuncDef>, name: &'static str, min: usize, max: Option<usize>, f: NativeFn) {
    t.insert(name, FuncDef { min, max, f });
}

pub(crate) fn builtin(name: &str) -> Option<&'static FuncDef> {
    TABLE.get(name)
}

pub(crate) fn is_defined(name: &str) -> bool {
    SPECIAL.contains(&name) || TABLE.contains_key(name)
}

/// Calls a caller-supplied function over JSON.
pub(crate) fn call_ext(f: &ExtFn, args: &[Value]) -> Result<Value, String> {
    let json = args.iter().map(Value::to_json).collect::<Result<Vec<_>, _>>()?;
    f(&json).map(|v| Value::from_json(&v))
}

/// Fields of a `*semver.Version` a template may read (`(semver "1.2.3").Major`).
pub(crate) fn semver_field(v: &semver::Version, name: &str) -> Option<Value> {
    Some(match name {
        "Major" => Value::Int(v.major as i64),
        "Minor" => Value::Int(v.minor as i64),
        "Patch" => Value::Int(v.patch as i64),
        "Prerelease" => Value::str(v.pre.as_str()),
        "Metadata" => Value::str(v.build.as_str()),
        "Original" | "String" => Value::str(v.to_string()),
        _ => return None,
    })
}

// ---- argument conversions, with Go's messages ----

pub(crate) fn wrong_type(expected: &str, got: &Value) -> String {
    if got.is_nil() {
        return format!("invalid value; expected {expected}");
    }
    format!("wrong type for value; expected {expected}; got {}", got.type_name())
}

/// A Go `string` parameter.
pub(crate) fn arg_str(args: &[Value], i: usize) -> Result<&str, String> {
    match &args[i] {
        Value::Str(s) => Ok(s),
        other => Err(wrong_type("string", other)),
    }
}

/// A Go `int` parameter (any integer value; a float64 is refused as Go refuses it).
pub(crate) fn arg_int(args: &[Value], i: usize) -> Result<i64, String> {
    match &args[i] {
        Value::Int(n) => Ok(*n),
        other => Err(wrong_type("int", other)),
    }
}

pub(crate) fn arg_bool(args: &[Value], i: usize) -> Result<bool, String> {
    match &args[i] {
        Value::Bool(b) => Ok(*b),
        other => Err(wrong_type("bool", other)),
    }
}

/// spf13/cast's ToInt64 (v1.7.1): errors become 0.
pub(crate) fn cast_int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::I64(i) => *i,
        Value::Float(f) => {
            if f.is_finite() {
                *f as i64
            } else {
                i64::MIN
            }
        }
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => parse_cast_int(s).unwrap_or(0),
        _ => 0,
    }
}

fn parse_cast_int(s: &str) -> Option<i64> {
    // cast trims a ".0..." decimal part, then strconv.ParseInt(s, 0, 0).
    let s = match s.split_once('.') {
        Some((int, frac)) if !int.is_empty() && frac.chars().all(|c| c == '0') => int,
        _ => s,
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let v = i64::from_str_radix(&digits.replace('_', ""), radix).ok()?;
    Some(if neg { -v } else { v })
}

/// spf13/cast's ToFloat64: errors become 0.
pub(crate) fn cast_float(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::I64(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => s.trim().parse::<f64>().ok().filter(|_| !s.contains(char::is_whitespace)).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// sprig's strval: strings as they are, everything else as `%v`.
pub(crate) fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => other.to_go_string(),
    }
}

/// sprig's empty: Go zero values, empty collections, nil.
pub(crate) fn empty(v: &Value) -> bool {
    match v {
        Value::Func(_) | Value::Time(_) | Value::Semver(_) => false,
        other => !other.truth(),
    }
}

/// A list argument (sprig's `[]interface{}` conversions); `what` names the function.
pub(crate) fn arg_list<'a>(args: &'a [Value], i: usize, what: &str) -> Result<&'a [Value], String> {
    match &args[i] {
        Value::List(l) => Ok(l),
        other => Err(format!("Cannot {what} on type {}", kind_name(other))),
    }
}

/// Go's reflect Kind name (sprig's kindOf).
pub(crate) fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Invalid | Value::Nil => "invalid",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::I64(_) => "int64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::List(_) => "slice",
        Value::Map(_) => "map",
        Value::Func(_) => "func",
        Value::Time(_) => "struct",
        Value::Semver(_) => "ptr",
    }
}
