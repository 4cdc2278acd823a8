//! Sprig's date functions over jiff. "Local" is UTC, as in Argo's container.

use std::collections::HashMap;
use std::rc::Rc;

use jiff::Zoned;
use jiff::tz::TimeZone;

use super::args::{FuncDef, add, arg_str, wrong_type};
use crate::golayout::{duration_string, format_go, parse_go};
use crate::value::Value;

pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "now", 0, Some(0), |_| {
        Ok(Value::Time(Rc::new(
            Zoned::now().with_time_zone(TimeZone::UTC),
        )))
    });
    add(t, "date", 2, Some(2), |a| {
        Ok(Value::str(format_go(
            &in_zone(&a[1], "UTC"),
            arg_str(a, 0)?,
        )))
    });
    for name in ["dateInZone", "date_in_zone"] {
        add(t, name, 3, Some(3), |a| {
            Ok(Value::str(format_go(
                &in_zone(&a[1], arg_str(a, 2)?),
                arg_str(a, 0)?,
            )))
        });
    }
    add(t, "htmlDate", 1, Some(1), |a| {
        Ok(Value::str(format_go(&in_zone(&a[0], "UTC"), "2006-01-02")))
    });
    add(t, "htmlDateInZone", 2, Some(2), |a| {
        Ok(Value::str(format_go(
            &in_zone(&a[0], arg_str(a, 1)?),
            "2006-01-02",
        )))
    });
    add(t, "toDate", 2, Some(2), |a| {
        Ok(parse_go(arg_str(a, 0)?, arg_str(a, 1)?)
            .map_or_else(|_| zero_time(), |z| Value::Time(Rc::new(z))))
    });
    add(t, "mustToDate", 2, Some(2), |a| {
        parse_go(arg_str(a, 0)?, arg_str(a, 1)?).map(|z| Value::Time(Rc::new(z)))
    });
    add(t, "unixEpoch", 1, Some(1), |a| match &a[0] {
        Value::Time(z) => Ok(Value::str(z.timestamp().as_second().to_string())),
        other => Err(wrong_type("time.Time", other)),
    });
    add(t, "duration", 1, Some(1), |a| {
        // sprig reads only an int64 or a decimal string; anything else (an int literal too) is 0.
        let secs = match &a[0] {
            Value::I64(i) => *i,
            Value::Str(s) => s.parse().unwrap_or(0),
            _ => 0,
        };
        Ok(Value::str(duration_string(
            secs.wrapping_mul(1_000_000_000),
        )))
    });
    add(t, "ago", 1, Some(1), |a| {
        let then = in_zone(&a[0], "UTC");
        let ns = Zoned::now().timestamp().as_nanosecond() - then.timestamp().as_nanosecond();
        let secs = (ns as f64 / 1e9).round() as i64;
        Ok(Value::str(duration_string(
            secs.wrapping_mul(1_000_000_000),
        )))
    });
}

fn zero_time() -> Value {
    let z = jiff::civil::date(1, 1, 1)
        .at(0, 0, 0, 0)
        .to_zoned(TimeZone::UTC);
    z.map_or(Value::Nil, |z| Value::Time(Rc::new(z)))
}

/// sprig's dateInZone argument: a time, unix seconds (int), anything else is now.
fn in_zone(v: &Value, zone: &str) -> Zoned {
    let tz = if zone == "Local" || zone.is_empty() {
        TimeZone::UTC
    } else {
        TimeZone::get(zone).unwrap_or(TimeZone::UTC)
    };
    let ts = match v {
        Value::Time(z) => z.timestamp(),
        Value::Int(secs) => {
            jiff::Timestamp::from_second(*secs).unwrap_or_else(|_| jiff::Timestamp::now())
        }
        _ => jiff::Timestamp::now(),
    };
    ts.to_zoned(tz)
}
