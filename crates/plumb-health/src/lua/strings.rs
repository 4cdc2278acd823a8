//! `string.find`, `match`, `gmatch` and `gsub` for scripts, on the bounded matcher of
//! [`super::patterns`]: every matching step is charged to the evaluation's budget (the same
//! instruction budget and deadline the hook checks), and what `gsub` builds counts against
//! the memory limit, so no pattern can hold a thread past the limits.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::budget::{Budget, LimitHit};
use super::patterns::{self, Capture, Found, PatternError};

/// Matching steps between two charges to the budget.
const CHARGE_EVERY: u32 = 1_000;

/// Charges matching steps to the evaluation's budget.
struct Charge<'a> {
    budget: &'a Budget,
    steps: u32,
}

impl patterns::Budget for Charge<'_> {
    fn step(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps >= CHARGE_EVERY {
            self.steps = 0;
            if let Some(hit) = self.budget.tick() {
                return Err(hit.message());
            }
        }
        Ok(())
    }
}

fn lua_error(e: PatternError) -> mlua::Error {
    match e {
        PatternError::Malformed(m) | PatternError::Stopped(m) => mlua::Error::runtime(m),
    }
}

/// A copy of the `string` library whose pattern functions are bounded.
pub(super) fn bounded_string_lib(
    lua: &Lua,
    original: &Table,
    budget: &Rc<Budget>,
) -> mlua::Result<Table> {
    let lib = lua.create_table()?;
    for pair in original.pairs::<Value, Value>() {
        let (k, v) = pair?;
        lib.raw_set(k, v)?;
    }
    let fail = lua.create_table()?;
    lib.raw_set("find", find_fn(lua, budget, &fail)?)?;
    lib.raw_set("match", match_fn(lua, budget, &fail)?)?;
    lib.raw_set("gmatch", gmatch_fn(lua, budget, &fail)?)?;
    lib.raw_set("gsub", gsub_fn(lua, budget, &fail)?)?;
    shim(lua, &lib, &fail)?;
    Ok(lib)
}

/// `string.find(s, pattern [, init [, plain]])`.
fn find_fn(lua: &Lua, budget: &Rc<Budget>, fail: &Table) -> mlua::Result<Function> {
    let (b, f) = (Rc::clone(budget), fail.clone());
    lua.create_function(
        move |lua, (s, p, init, plain): (mlua::LuaString, mlua::LuaString, Option<i64>, Value)| {
            or_fail(
                lua,
                &f,
                find(lua, &b, &s.as_bytes(), &p.as_bytes(), init, &plain),
            )
        },
    )
}

fn find(
    lua: &Lua,
    budget: &Budget,
    src: &[u8],
    pat: &[u8],
    init: Option<i64>,
    plain: &Value,
) -> mlua::Result<MultiValue> {
    let init = patterns::start_index(init.unwrap_or(1), src.len());
    let plain = plain.as_boolean().unwrap_or(!plain.is_nil()) || patterns::is_plain(pat);
    let mut charge = Charge { budget, steps: 0 };
    match patterns::find(src, pat, init, plain, &mut charge).map_err(lua_error)? {
        None => Ok(MultiValue::from_vec(vec![Value::Nil])),
        Some(found) => {
            let mut out = vec![
                Value::Integer(to_lua_int(found.start + 1)),
                Value::Integer(to_lua_int(found.end)),
            ];
            if found.explicit {
                out.extend(captures(lua, src, &found)?);
            }
            Ok(MultiValue::from_vec(out))
        }
    }
}

/// `string.match(s, pattern [, init])`.
fn match_fn(lua: &Lua, budget: &Rc<Budget>, fail: &Table) -> mlua::Result<Function> {
    let (b, f) = (Rc::clone(budget), fail.clone());
    lua.create_function(
        move |lua, (s, p, init): (mlua::LuaString, mlua::LuaString, Option<i64>)| {
            or_fail(lua, &f, match_(lua, &b, &s.as_bytes(), &p.as_bytes(), init))
        },
    )
}

fn match_(
    lua: &Lua,
    budget: &Budget,
    src: &[u8],
    pat: &[u8],
    init: Option<i64>,
) -> mlua::Result<MultiValue> {
    let init = patterns::start_index(init.unwrap_or(1), src.len());
    let mut charge = Charge { budget, steps: 0 };
    match patterns::find(src, pat, init, false, &mut charge).map_err(lua_error)? {
        None => Ok(MultiValue::from_vec(vec![Value::Nil])),
        Some(found) => Ok(MultiValue::from_vec(captures(lua, src, &found)?)),
    }
}

/// `string.gmatch(s, pattern)`: an iterator that resumes after the previous match.
fn gmatch_fn(lua: &Lua, budget: &Rc<Budget>, fail: &Table) -> mlua::Result<Function> {
    let (b, f) = (Rc::clone(budget), fail.clone());
    lua.create_function(move |lua, (s, p): (mlua::LuaString, mlua::LuaString)| {
        let src = s.as_bytes().to_vec();
        let pat = p.as_bytes().to_vec();
        let pos = Cell::new(0usize);
        let (b, f) = (Rc::clone(&b), f.clone());
        lua.create_function(move |lua, ()| or_fail(lua, &f, gmatch_next(lua, &b, &src, &pat, &pos)))
    })
}

/// The next match of a `gmatch` iterator at or after `pos`, which it moves past the match.
fn gmatch_next(
    lua: &Lua,
    budget: &Budget,
    src: &[u8],
    pat: &[u8],
    pos: &Cell<usize>,
) -> mlua::Result<MultiValue> {
    let mut charge = Charge { budget, steps: 0 };
    let mut s = pos.get();
    while s <= src.len() {
        if let Some(found) = patterns::match_at(src, pat, s, &mut charge).map_err(lua_error)? {
            pos.set(if found.end == s {
                found.end + 1
            } else {
                found.end
            });
            return Ok(MultiValue::from_vec(captures(lua, src, &found)?));
        }
        s += 1;
    }
    pos.set(src.len() + 1);
    Ok(MultiValue::from_vec(vec![Value::Nil]))
}

/// `string.gsub(s, pattern, repl [, n])`.
fn gsub_fn(lua: &Lua, budget: &Rc<Budget>, fail: &Table) -> mlua::Result<Function> {
    let (b, f) = (Rc::clone(budget), fail.clone());
    lua.create_function(
        move |lua, (s, p, repl, max_n): (mlua::LuaString, mlua::LuaString, Value, Option<i64>)| {
            or_fail(
                lua,
                &f,
                gsub(lua, &b, &s.as_bytes(), &p.as_bytes(), &repl, max_n),
            )
        },
    )
}

/// Errors raised from Rust reach scripts as userdata, where `pcall(string.find, ...)` in Lua
/// (and gopher-lua) gives the message string: the functions return a marker and the message
/// instead, and a Lua shim raises it with `error(message, 0)`, as Lua's own C functions do.
const ERROR_SHIM: &str = r#"
local lib, fail, error = ...
local function pass(first, ...)
  if first == fail then error((...), 0) end
  return first, ...
end
for _, name in ipairs({"find", "match", "gsub"}) do
  local raw = lib[name]
  lib[name] = function(...) return pass(raw(...)) end
end
local raw_gmatch = lib.gmatch
lib.gmatch = function(...)
  local it = pass(raw_gmatch(...))
  return function() return pass(it()) end
end
"#;

fn shim(lua: &Lua, lib: &Table, fail: &Table) -> mlua::Result<()> {
    lua.load(ERROR_SHIM).set_name("=plumb-strings").call::<()>((
        lib.clone(),
        fail.clone(),
        lua.globals().raw_get::<mlua::Function>("error")?,
    ))
}

/// The marker and message for an error, or the values.
fn or_fail(lua: &Lua, fail: &Table, r: mlua::Result<MultiValue>) -> mlua::Result<MultiValue> {
    match r {
        Ok(v) => Ok(v),
        Err(e) => Ok(MultiValue::from_vec(vec![
            Value::Table(fail.clone()),
            Value::String(lua.create_string(message(&e))?),
        ])),
    }
}

fn message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::WithContext { cause, .. } => message(cause),
        other => other.to_string(),
    }
}

fn to_lua_int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn capture_value(lua: &Lua, src: &[u8], c: Capture) -> mlua::Result<Value> {
    Ok(match c {
        Capture::Position(p) => Value::Integer(to_lua_int(p + 1)),
        Capture::Text(a, b) => Value::String(lua.create_string(&src[a..b])?),
    })
}

fn captures(lua: &Lua, src: &[u8], found: &Found) -> mlua::Result<Vec<Value>> {
    found
        .captures
        .iter()
        .map(|c| capture_value(lua, src, *c))
        .collect()
}

fn gsub(
    lua: &Lua,
    budget: &Budget,
    src: &[u8],
    pat: &[u8],
    repl: &Value,
    max_n: Option<i64>,
) -> mlua::Result<MultiValue> {
    match repl {
        Value::String(_)
        | Value::Integer(_)
        | Value::Number(_)
        | Value::Table(_)
        | Value::Function(_) => {}
        other => {
            return Err(mlua::Error::runtime(format!(
                "bad argument #3 to 'gsub' (string/function/table expected, got {})",
                other.type_name()
            )));
        }
    }
    let repl_text: Option<Vec<u8>> = match repl {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(repl.clone())?
            .map(|s| s.as_bytes().to_vec()),
        _ => None,
    };
    let (anchor, pat) = match pat.first() {
        Some(b'^') => (true, &pat[1..]),
        _ => (false, pat),
    };
    let max_n = max_n.unwrap_or_else(|| to_lua_int(src.len() + 1));
    let limit = budget.memory_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut charge = Charge { budget, steps: 0 };
    let mut n: i64 = 0;
    let mut s = 0usize;
    while n < max_n {
        let found = patterns::match_at(src, pat, s, &mut charge).map_err(lua_error)?;
        if let Some(found) = &found {
            n += 1;
            add_value(lua, src, found, repl, repl_text.as_deref(), &mut out)?;
        }
        match found {
            Some(f) if f.end > s => s = f.end,
            _ if s < src.len() => {
                out.push(src[s]);
                s += 1;
            }
            _ => break,
        }
        if out.len() > limit {
            return Err(budget.stop(LimitHit::Memory(limit)));
        }
        if anchor {
            break;
        }
    }
    out.extend_from_slice(&src[s.min(src.len())..]);
    if out.len() > limit {
        return Err(budget.stop(LimitHit::Memory(limit)));
    }
    Ok(MultiValue::from_vec(vec![
        Value::String(lua.create_string(&out)?),
        Value::Integer(n),
    ]))
}

fn add_value(
    lua: &Lua,
    src: &[u8],
    found: &Found,
    repl: &Value,
    repl_text: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> mlua::Result<()> {
    let whole = &src[found.start..found.end];
    let one = |i: usize| -> mlua::Result<Value> {
        if !found.explicit {
            if i == 0 {
                return Ok(Value::String(lua.create_string(whole)?));
            }
            return Err(mlua::Error::runtime("invalid capture index"));
        }
        match found.captures.get(i) {
            Some(c) => capture_value(lua, src, *c),
            None => Err(mlua::Error::runtime("invalid capture index")),
        }
    };
    if let Some(text) = repl_text {
        let mut i = 0;
        while i < text.len() {
            let c = text[i];
            if c == b'%' && i + 1 < text.len() {
                i += 1;
                let d = text[i];
                if !d.is_ascii_digit() {
                    out.push(d);
                } else if d == b'0' {
                    out.extend_from_slice(whole);
                } else {
                    let v = one(usize::from(d - b'1'))?;
                    match lua.coerce_string(v)? {
                        Some(s) => out.extend_from_slice(&s.as_bytes()),
                        None => return Err(mlua::Error::runtime("invalid capture value")),
                    }
                }
            } else {
                out.push(c);
            }
            i += 1;
        }
        return Ok(());
    }
    let value = match repl {
        Value::Table(t) => t.get::<Value>(one(0)?)?,
        Value::Function(f) => {
            let args: Vec<Value> = if found.explicit {
                captures(lua, src, found)?
            } else {
                vec![one(0)?]
            };
            f.call::<Value>(MultiValue::from_vec(args))?
        }
        _ => Value::Nil,
    };
    match value {
        Value::Nil | Value::Boolean(false) => out.extend_from_slice(whole),
        Value::String(s) => out.extend_from_slice(&s.as_bytes()),
        v @ (Value::Integer(_) | Value::Number(_)) => {
            if let Some(s) = lua.coerce_string(v)? {
                out.extend_from_slice(&s.as_bytes());
            }
        }
        other => {
            return Err(mlua::Error::runtime(format!(
                "invalid replacement value (a {})",
                other.type_name()
            )));
        }
    }
    Ok(())
}
