//! Sprig's numeric functions (spf13/cast conversions, int64 arithmetic with Go's wrapping).

use std::collections::HashMap;

use super::collections::MAX_ITEMS;
use super::{FuncDef, add, arg_int, arg_str, cast_float, cast_int};
use crate::value::Value;

fn div0() -> String {
    "runtime error: integer divide by zero".into()
}

// length: a table of registrations, one line per function.
pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "add1", 1, Some(1), |a| Ok(Value::I64(cast_int(&a[0]).wrapping_add(1))));
    add(t, "add", 0, None, |a| Ok(Value::I64(a.iter().fold(0i64, |s, v| s.wrapping_add(cast_int(v))))));
    add(t, "sub", 2, Some(2), |a| Ok(Value::I64(cast_int(&a[0]).wrapping_sub(cast_int(&a[1])))));
    add(t, "mul", 1, None, |a| Ok(Value::I64(a.iter().fold(1i64, |s, v| s.wrapping_mul(cast_int(v))))));
    add(t, "div", 2, Some(2), |a| {
        let d = cast_int(&a[1]);
        if d == 0 {
            return Err(div0());
        }
        Ok(Value::I64(cast_int(&a[0]).wrapping_div(d)))
    });
    add(t, "mod", 2, Some(2), |a| {
        let d = cast_int(&a[1]);
        if d == 0 {
            return Err(div0());
        }
        Ok(Value::I64(cast_int(&a[0]).wrapping_rem(d)))
    });
    for name in ["max", "biggest"] {
        add(t, name, 1, None, |a| Ok(Value::I64(a.iter().map(cast_int).fold(cast_int(&a[0]), i64::max))));
    }
    add(t, "min", 1, None, |a| Ok(Value::I64(a.iter().map(cast_int).fold(cast_int(&a[0]), i64::min))));
    add(t, "maxf", 1, None, |a| Ok(Value::Float(a.iter().map(cast_float).fold(cast_float(&a[0]), f64::max))));
    add(t, "minf", 1, None, |a| Ok(Value::Float(a.iter().map(cast_float).fold(cast_float(&a[0]), f64::min))));
    add(t, "add1f", 1, Some(1), |a| Ok(Value::Float(cast_float(&a[0]) + 1.0)));
    add(t, "addf", 0, None, |a| Ok(Value::Float(a.iter().map(cast_float).sum())));
    add(t, "subf", 1, None, |a| Ok(Value::Float(a[1..].iter().map(cast_float).fold(cast_float(&a[0]), |s, v| s - v))));
    add(t, "mulf", 1, None, |a| Ok(Value::Float(a[1..].iter().map(cast_float).fold(cast_float(&a[0]), |s, v| s * v))));
    add(t, "divf", 1, None, |a| Ok(Value::Float(a[1..].iter().map(cast_float).fold(cast_float(&a[0]), |s, v| s / v))));
    add(t, "floor", 1, Some(1), |a| Ok(Value::Float(cast_float(&a[0]).floor())));
    add(t, "ceil", 1, Some(1), |a| Ok(Value::Float(cast_float(&a[0]).ceil())));
    add(t, "round", 2, Some(3), round);
    add(t, "int", 1, Some(1), |a| Ok(Value::Int(cast_int(&a[0]))));
    add(t, "int64", 1, Some(1), |a| Ok(Value::I64(cast_int(&a[0]))));
    add(t, "float64", 1, Some(1), |a| Ok(Value::Float(cast_float(&a[0]))));
    add(t, "atoi", 1, Some(1), |a| Ok(Value::Int(arg_str(a, 0)?.parse::<i64>().unwrap_or(0))));
    add(t, "toDecimal", 1, Some(1), |a| {
        Ok(Value::I64(i64::from_str_radix(&super::strval(&a[0]), 8).unwrap_or(0)))
    });
    add(t, "until", 1, Some(1), |a| {
        let n = arg_int(a, 0)?;
        until_step(0, n, if n < 0 { -1 } else { 1 }).map(ints)
    });
    add(t, "untilStep", 3, Some(3), |a| until_step(arg_int(a, 0)?, arg_int(a, 1)?, arg_int(a, 2)?).map(ints));
    add(t, "seq", 0, None, seq);
    add(t, "randInt", 2, Some(2), |a| {
        let (lo, hi) = (arg_int(a, 0)?, arg_int(a, 1)?);
        if hi <= lo {
            return Err("invalid argument to Intn".into());
        }
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).map_err(|e| e.to_string())?;
        let span = (hi as i128 - lo as i128) as u128;
        Ok(Value::Int((lo as i128 + (u64::from_le_bytes(b) as u128 % span) as i128) as i64))
    });
}

fn ints(v: Vec<i64>) -> Value {
    Value::list(v.into_iter().map(Value::Int).collect())
}

/// sprig's untilStep, refusing more than [`MAX_ITEMS`] elements.
fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, String> {
    let count = if stop < start {
        if step >= 0 {
            return Ok(Vec::new());
        }
        (start as i128 - stop as i128 + (-step as i128) - 1) / (-step as i128)
    } else {
        if step <= 0 {
            return Ok(Vec::new());
        }
        (stop as i128 - start as i128 + step as i128 - 1) / step as i128
    };
    if count > MAX_ITEMS as i128 {
        return Err(format!("a list of {count} numbers is more than the {MAX_ITEMS} allowed"));
    }
    Ok((0..count as i64).map(|i| start + i * step).collect())
}

fn seq(a: &[Value]) -> Result<Value, String> {
    let p: Vec<i64> = (0..a.len()).map(|i| arg_int(a, i)).collect::<Result<_, _>>()?;
    let v = match p.as_slice() {
        [] => return Ok(Value::str("")),
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            until_step(1, end + inc, inc)?
        }
        [start, end] => {
            let inc = if end < start { -1 } else { 1 };
            until_step(*start, end + inc, inc)?
        }
        [start, step, end] => {
            let inc = if end < start { -1 } else { 1 };
            if end < start && *step > 0 {
                return Ok(Value::str(""));
            }
            until_step(*start, end + inc, *step)?
        }
        _ => return Ok(Value::str("")),
    };
    Ok(Value::str(v.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")))
}

fn round(a: &[Value]) -> Result<Value, String> {
    let val = cast_float(&a[0]);
    let places = arg_int(a, 1)? as f64;
    let round_on = match a.get(2) {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i) | Value::I64(i)) => *i as f64,
        Some(other) => return Err(super::wrong_type("float64", other)),
        None => 0.5,
    };
    let pow = 10f64.powf(places);
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on { digit.ceil() } else { digit.floor() };
    Ok(Value::Float(r / pow))
}
