//! Template values: the Go types Argo's templates see (data decoded by encoding/json into
//! `map[string]any`, and what sprig's functions return), with Go's printing rules.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// A function callable with `call` (or registered by name), over JSON values.
pub type ExtFn = Arc<dyn Fn(&[serde_json::Value]) -> Result<serde_json::Value, String> + Send + Sync>;

#[derive(Clone)]
pub(crate) enum Value {
    /// Go's invalid reflect.Value: a missing map key (prints `<no value>`).
    Invalid,
    /// A nil interface (JSON null).
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<Vec<Value>>),
    Map(Rc<BTreeMap<String, Value>>),
    Func(ExtFn),
    Time(Rc<jiff::Zoned>),
    /// A Go int64 (what sprig's arithmetic returns; Go refuses it where an `int` is expected).
    I64(i64),
    Semver(Rc<semver::Version>),
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", crate::gofmt::sprint_v(self))
    }
}

impl Value {
    pub(crate) fn str(s: impl Into<Rc<str>>) -> Value {
        Value::Str(s.into())
    }

    pub(crate) fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(v))
    }

    pub(crate) fn map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(m))
    }

    /// Whether the value is nil or missing.
    pub(crate) fn is_nil(&self) -> bool {
        matches!(self, Value::Invalid | Value::Nil)
    }

    /// Go's template truth (isTrue): zero values, empty collections and nil are false.
    pub(crate) fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::I64(i) => *i != 0,
            Value::Func(_) | Value::Time(_) | Value::Semver(_) => true,
        }
    }

    /// The Go type name, for error messages and `%T`.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Func(_) => "func(...interface {}) (interface {}, error)",
            Value::Time(_) => "time.Time",
            Value::I64(_) => "int64",
            Value::Semver(_) => "*semver.Version",
        }
    }

    /// Go's `%v` of the value (what `{{ . }}` prints, except that nil prints `<no value>`).
    pub(crate) fn to_go_string(&self) -> String {
        crate::gofmt::sprint_v(self)
    }

    /// From JSON, as encoding/json decodes into `any` (every number is a float64).
    pub(crate) fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::str(s.as_str()),
            serde_json::Value::Array(a) => Value::list(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => {
                Value::map(o.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
            }
        }
    }

    /// To JSON, as encoding/json marshals the Go value (integral floats without a fraction).
    pub(crate) fn to_json(&self) -> Result<serde_json::Value, String> {
        Ok(match self {
            Value::Invalid | Value::Nil => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => float_json(*f)?,
            Value::Str(s) => serde_json::Value::String(s.to_string()),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect::<Result<_, _>>()?),
            Value::Map(m) => serde_json::Value::Object(
                m.iter().map(|(k, v)| Ok((k.clone(), v.to_json()?))).collect::<Result<_, String>>()?,
            ),
            Value::Func(_) => return Err("json: unsupported type: func".into()),
            Value::Time(t) => serde_json::Value::String(crate::funcs::time::rfc3339_nano(t)),
            Value::I64(i) => serde_json::Value::from(*i),
            Value::Semver(v) => serde_json::Value::String(v.to_string()),
        })
    }
}

fn float_json(f: f64) -> Result<serde_json::Value, String> {
    if !f.is_finite() {
        return Err(format!("json: unsupported value: {}", crate::gofmt::format_float_v(f)));
    }
    if f.fract() == 0.0 && f.abs() < 1e15 {
        return Ok(serde_json::Value::from(f as i64));
    }
    Ok(serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number))
}
