//! A script's return value as JSON, with the rules of the JSON encoder Argo CD's actions use
//! (gopher-json): an empty table is `[]`, a table with keys 1..n is an array, a table with string
//! keys an object, anything else (mixed keys, functions) an error. Depth and size are bounded so
//! a script cannot hand back a structure that is cheap to build and huge to walk.

use mlua::Value as LuaValue;
use serde_json::{Map, Number, Value};

/// Deepest nesting accepted (Kubernetes objects are far shallower).
const MAX_DEPTH: usize = 100;
/// Most values (scalars and tables) one result may hold.
const MAX_VALUES: usize = 1_000_000;

/// Converts a Lua value; errors name what could not be encoded.
pub(crate) fn lua_to_json(value: LuaValue) -> Result<Value, String> {
    let mut count = 0;
    convert(value, 0, &mut count)
}

fn convert(value: LuaValue, depth: usize, count: &mut usize) -> Result<Value, String> {
    *count += 1;
    if *count > MAX_VALUES {
        return Err(format!(
            "the script's result holds more than {MAX_VALUES} values"
        ));
    }
    Ok(match value {
        LuaValue::Nil => Value::Null,
        LuaValue::Boolean(b) => Value::Bool(b),
        LuaValue::Integer(i) => Value::from(i),
        LuaValue::Number(n) => number(n)?,
        LuaValue::String(s) => Value::String(s.to_string_lossy()),
        LuaValue::Table(t) => {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "the script's result is nested deeper than {MAX_DEPTH} levels"
                ));
            }
            let mut pairs = Vec::new();
            for pair in t.pairs::<LuaValue, LuaValue>() {
                pairs.push(pair.map_err(|e| e.to_string())?);
                if pairs.len() > MAX_VALUES {
                    return Err(format!(
                        "the script's result holds more than {MAX_VALUES} values"
                    ));
                }
            }
            if pairs.is_empty() {
                return Ok(Value::Array(Vec::new()));
            }
            if pairs.iter().all(|(k, _)| k.is_string()) {
                let mut map = Map::new();
                for (k, v) in pairs {
                    if let LuaValue::String(key) = k {
                        map.insert(key.to_string_lossy(), convert(v, depth + 1, count)?);
                    }
                }
                return Ok(Value::Object(map));
            }
            let mut indexed = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                let index = match k {
                    LuaValue::Integer(i) => Some(i),
                    LuaValue::Number(n) if n.fract() == 0.0 => Some(n as i64),
                    _ => None,
                };
                match index {
                    Some(i) if i >= 1 => indexed.push((i, v)),
                    _ => return Err("cannot encode mixed or invalid key types".to_string()),
                }
            }
            indexed.sort_by_key(|(i, _)| *i);
            if indexed
                .iter()
                .enumerate()
                .any(|(pos, (i, _))| usize::try_from(*i).ok() != Some(pos + 1))
            {
                return Err("cannot encode sparse array".to_string());
            }
            let mut out = Vec::with_capacity(indexed.len());
            for (_, v) in indexed {
                out.push(convert(v, depth + 1, count)?);
            }
            Value::Array(out)
        }
        other => return Err(format!("cannot encode {} to JSON", other.type_name())),
    })
}

/// Lua numbers are doubles: whole ones become JSON integers, as Go's encoder prints them.
fn number(n: f64) -> Result<Value, String> {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return Ok(Value::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| format!("cannot encode the number {n} to JSON"))
}
