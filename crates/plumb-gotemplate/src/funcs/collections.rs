//! Sprig's list, dict, default and type functions.
//!
//! Sprig's `set`, `unset`, `merge`, `mergeOverwrite`, `append` on a variable change the Go value in
//! place; here they return the changed copy (the variable keeps its value), a documented difference.

use std::collections::{BTreeMap, HashMap};

use super::{FuncDef, add, arg_list, arg_str, empty, kind_name, strval};
use crate::value::Value;

/// Lists longer than this are refused (a hostile `until` or `concat` fails instead of eating memory).
pub(crate) const MAX_ITEMS: usize = 1_000_000;

// length: a table of registrations, one line per function.
pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "list", 0, None, |a| Ok(Value::list(a.to_vec())));
    add(t, "tuple", 0, None, |a| Ok(Value::list(a.to_vec())));
    for name in ["first", "mustFirst"] {
        add(t, name, 1, Some(1), |a| Ok(arg_list(a, 0, "find first")?.first().cloned().unwrap_or(Value::Nil)));
    }
    for name in ["last", "mustLast"] {
        add(t, name, 1, Some(1), |a| Ok(arg_list(a, 0, "find last")?.last().cloned().unwrap_or(Value::Nil)));
    }
    for name in ["rest", "mustRest"] {
        add(t, name, 1, Some(1), |a| {
            let l = arg_list(a, 0, "find rest")?;
            Ok(if l.is_empty() { Value::Nil } else { Value::list(l[1..].to_vec()) })
        });
    }
    for name in ["initial", "mustInitial"] {
        add(t, name, 1, Some(1), |a| {
            let l = arg_list(a, 0, "find initial")?;
            Ok(if l.is_empty() { Value::Nil } else { Value::list(l[..l.len() - 1].to_vec()) })
        });
    }
    for name in ["append", "push", "mustAppend", "mustPush"] {
        add(t, name, 2, Some(2), |a| {
            let mut l = arg_list(a, 0, "push")?.to_vec();
            l.push(a[1].clone());
            Ok(Value::list(l))
        });
    }
    for name in ["prepend", "mustPrepend"] {
        add(t, name, 2, Some(2), |a| {
            let mut l = vec![a[1].clone()];
            l.extend(arg_list(a, 0, "prepend")?.iter().cloned());
            Ok(Value::list(l))
        });
    }
    for name in ["reverse", "mustReverse"] {
        add(t, name, 1, Some(1), |a| Ok(Value::list(arg_list(a, 0, "find reverse")?.iter().rev().cloned().collect())));
    }
    for name in ["uniq", "mustUniq"] {
        add(t, name, 1, Some(1), uniq);
    }
    for name in ["compact", "mustCompact"] {
        add(t, name, 1, Some(1), |a| Ok(Value::list(arg_list(a, 0, "compact")?.iter().filter(|v| !empty(v)).cloned().collect())));
    }
    for name in ["without", "mustWithout"] {
        add(t, name, 1, None, |a| {
            let l = arg_list(a, 0, "find without")?;
            Ok(Value::list(l.iter().filter(|v| !a[1..].iter().any(|w| deep_equal(v, w))).cloned().collect()))
        });
    }
    for name in ["has", "mustHas"] {
        add(t, name, 2, Some(2), |a| match &a[1] {
            Value::Invalid | Value::Nil => Ok(Value::Bool(false)),
            Value::List(l) => Ok(Value::Bool(l.iter().any(|v| deep_equal(v, &a[0])))),
            other => Err(format!("Cannot find has on type {}", kind_name(other))),
        });
    }
    for name in ["slice", "mustSlice"] {
        add(t, name, 1, None, slice);
    }
    for name in ["chunk", "mustChunk"] {
        add(t, name, 2, Some(2), chunk);
    }
    add(t, "concat", 0, None, concat);
    add(t, "sortAlpha", 1, Some(1), |a| {
        let mut l: Vec<String> = to_strings(&a[0]);
        l.sort();
        Ok(Value::list(l.into_iter().map(Value::str).collect()))
    });
    add(t, "toStrings", 1, Some(1), |a| Ok(Value::list(to_strings(&a[0]).into_iter().map(Value::str).collect())));
    add(t, "join", 2, Some(2), |a| Ok(Value::str(to_strings(&a[1]).join(arg_str(a, 0)?))));
    add(t, "dict", 0, None, dict);
    add(t, "get", 2, Some(2), |a| Ok(map_arg(a, 0)?.get(arg_str(a, 1)?).cloned().unwrap_or_else(|| Value::str(""))));
    add(t, "set", 3, Some(3), |a| {
        let mut m = map_arg(a, 0)?.clone();
        m.insert(arg_str(a, 1)?.to_string(), a[2].clone());
        Ok(Value::map(m))
    });
    add(t, "unset", 2, Some(2), |a| {
        let mut m = map_arg(a, 0)?.clone();
        m.remove(arg_str(a, 1)?);
        Ok(Value::map(m))
    });
    add(t, "hasKey", 2, Some(2), |a| Ok(Value::Bool(map_arg(a, 0)?.contains_key(arg_str(a, 1)?))));
    add(t, "keys", 0, None, |a| {
        let mut keys = Vec::new();
        for i in 0..a.len() {
            keys.extend(map_arg(a, i)?.keys().map(|k| Value::str(k.as_str())));
        }
        Ok(Value::list(keys))
    });
    add(t, "values", 1, Some(1), |a| Ok(Value::list(map_arg(a, 0)?.values().cloned().collect())));
    add(t, "pick", 1, None, |a| {
        let m = map_arg(a, 0)?;
        let keep: Vec<String> = a[1..].iter().map(strval).collect();
        Ok(Value::map(m.iter().filter(|(k, _)| keep.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect()))
    });
    add(t, "omit", 1, None, |a| {
        let m = map_arg(a, 0)?;
        let drop: Vec<String> = a[1..].iter().map(strval).collect();
        Ok(Value::map(m.iter().filter(|(k, _)| !drop.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect()))
    });
    add(t, "pluck", 1, None, |a| {
        let key = arg_str(a, 0)?;
        let mut out = Vec::new();
        for i in 1..a.len() {
            if let Some(v) = map_arg(a, i)?.get(key) {
                out.push(v.clone());
            }
        }
        Ok(Value::list(out))
    });
    for (name, overwrite) in [("merge", false), ("mustMerge", false)] {
        let _ = overwrite;
        add(t, name, 1, None, |a| merge_all(a, false));
    }
    for name in ["mergeOverwrite", "mustMergeOverwrite"] {
        add(t, name, 1, None, |a| merge_all(a, true));
    }
    add(t, "dig", 2, None, dig);
    for name in ["deepCopy", "mustDeepCopy"] {
        add(t, name, 1, Some(1), |a| Ok(a[0].clone()));
    }
    add(t, "default", 1, None, |a| Ok(if a.len() < 2 || empty(&a[1]) { a[0].clone() } else { a[1].clone() }));
    add(t, "empty", 1, Some(1), |a| Ok(Value::Bool(empty(&a[0]))));
    add(t, "coalesce", 0, None, |a| Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil)));
    add(t, "all", 0, None, |a| Ok(Value::Bool(a.iter().all(|v| !empty(v)))));
    add(t, "any", 0, None, |a| Ok(Value::Bool(a.iter().any(|v| !empty(v)))));
    add(t, "ternary", 3, Some(3), |a| match &a[2] {
        Value::Bool(b) => Ok(if *b { a[0].clone() } else { a[1].clone() }),
        other => Err(super::wrong_type("bool", other)),
    });
    add(t, "typeOf", 1, Some(1), |a| Ok(Value::str(a[0].type_name())));
    add(t, "typeIs", 2, Some(2), |a| Ok(Value::Bool(arg_str(a, 0)? == a[1].type_name())));
    add(t, "kindOf", 1, Some(1), |a| Ok(Value::str(kind_name(&a[0]))));
    add(t, "kindIs", 2, Some(2), |a| Ok(Value::Bool(arg_str(a, 0)? == kind_name(&a[1]))));
    add(t, "deepEqual", 2, Some(2), |a| Ok(Value::Bool(deep_equal(&a[0], &a[1]))));
}

fn map_arg(a: &[Value], i: usize) -> Result<&BTreeMap<String, Value>, String> {
    match &a[i] {
        Value::Map(m) => Ok(m),
        other => Err(super::wrong_type("map[string]interface {}", other)),
    }
}

/// sprig's strslice: `[]string` from a list (nil elements dropped), or the value as one string.
pub(crate) fn to_strings(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => l.iter().filter(|e| !e.is_nil()).map(strval).collect(),
        Value::Invalid | Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// Go's reflect.DeepEqual on template values (an int never equals a float64).
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Invalid | Value::Nil, Value::Invalid | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::I64(x), Value::I64(y)) => x == y,
        (Value::List(x), Value::List(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| deep_equal(p, q)),
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Time(x), Value::Time(y)) => x == y,
        (Value::Semver(x), Value::Semver(y)) => x == y,
        _ => false,
    }
}

fn uniq(a: &[Value]) -> Result<Value, String> {
    let l = arg_list(a, 0, "find uniq")?;
    let mut out: Vec<Value> = Vec::new();
    for v in l {
        if !out.iter().any(|o| deep_equal(o, v)) {
            out.push(v.clone());
        }
    }
    Ok(Value::list(out))
}

fn slice(a: &[Value]) -> Result<Value, String> {
    let l = arg_list(a, 0, "slice")?;
    let idx = |i: usize| -> Result<usize, String> {
        let v = super::cast_int(&a[i]);
        usize::try_from(v).map_err(|_| format!("runtime error: slice bounds out of range [{v}:]"))
    };
    let start = if a.len() > 1 { idx(1)? } else { 0 };
    let end = if a.len() > 2 { idx(2)? } else { l.len() };
    if start > end || end > l.len() {
        return Err(format!("runtime error: slice bounds out of range [{start}:{end}] with capacity {}", l.len()));
    }
    Ok(Value::list(l[start..end].to_vec()))
}

fn chunk(a: &[Value]) -> Result<Value, String> {
    let size = super::arg_int(a, 0)?;
    let l = arg_list(a, 1, "chunk")?;
    if size <= 0 {
        return Err("runtime error: integer divide by zero".into());
    }
    Ok(Value::list(l.chunks(size as usize).map(|c| Value::list(c.to_vec())).collect()))
}

fn concat(a: &[Value]) -> Result<Value, String> {
    let mut out = Vec::new();
    for v in a {
        let l = match v {
            Value::List(l) => l,
            other => return Err(format!("Cannot concat type {} as list", kind_name(other))),
        };
        if out.len() + l.len() > MAX_ITEMS {
            return Err(format!("concat would build more than {MAX_ITEMS} items"));
        }
        out.extend(l.iter().cloned());
    }
    Ok(Value::list(out))
}

fn dict(a: &[Value]) -> Result<Value, String> {
    let mut m = BTreeMap::new();
    for pair in a.chunks(2) {
        let key = strval(&pair[0]);
        let val = pair.get(1).cloned().unwrap_or_else(|| Value::str(""));
        m.insert(key, val);
    }
    Ok(Value::map(m))
}

/// mergo's Merge / Merge WithOverride on maps: nested maps merge deeply.
fn merge_into(dst: &mut BTreeMap<String, Value>, src: &BTreeMap<String, Value>, overwrite: bool) {
    for (k, sv) in src {
        match dst.get_mut(k) {
            None => {
                dst.insert(k.clone(), sv.clone());
            }
            Some(dv) => {
                if let (Value::Map(dm), Value::Map(sm)) = (&*dv, sv) {
                    let mut merged = (**dm).clone();
                    merge_into(&mut merged, sm, overwrite);
                    *dv = Value::map(merged);
                } else if (overwrite && !empty(sv)) || empty(dv) {
                    *dv = sv.clone();
                }
            }
        }
    }
}

fn merge_all(a: &[Value], overwrite: bool) -> Result<Value, String> {
    let mut dst = map_arg(a, 0)?.clone();
    for i in 1..a.len() {
        let src = map_arg(a, i)?;
        merge_into(&mut dst, src, overwrite);
    }
    Ok(Value::map(dst))
}

fn dig(a: &[Value]) -> Result<Value, String> {
    let n = a.len();
    if n < 3 {
        return Err(format!("wrong number of args for dig: want at least 3 got {n}"));
    }
    let mut cur = map_arg(a, n - 1)?;
    let default = &a[n - 2];
    let keys = &a[..n - 2];
    for (i, k) in keys.iter().enumerate() {
        let k = match k {
            Value::Str(s) => s.to_string(),
            other => return Err(super::wrong_type("string", other)),
        };
        match cur.get(&k) {
            None => return Ok(default.clone()),
            Some(v) if i + 1 == keys.len() => return Ok(v.clone()),
            Some(Value::Map(m)) => cur = m,
            Some(other) => {
                return Err(format!("interface conversion: interface {{}} is {}, not map[string]interface {{}}", other.type_name()));
            }
        }
    }
    Ok(default.clone())
}
