//! Sprig's date functions over jiff, with Go's reference-time layouts ("2006-01-02") written
//! here: no Rust crate formats or parses Go layouts. "Local" is UTC, as in Argo's container.

use std::collections::HashMap;
use std::rc::Rc;

use jiff::Zoned;
use jiff::tz::TimeZone;

use super::{FuncDef, add, arg_str};
use crate::value::Value;

// length: a table of registrations, one line per function.
pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "now", 0, Some(0), |_| Ok(Value::Time(Rc::new(Zoned::now().with_time_zone(TimeZone::UTC)))));
    add(t, "date", 2, Some(2), |a| Ok(Value::str(format_go(&in_zone(&a[1], "UTC"), arg_str(a, 0)?))));
    for name in ["dateInZone", "date_in_zone"] {
        add(t, name, 3, Some(3), |a| Ok(Value::str(format_go(&in_zone(&a[1], arg_str(a, 2)?), arg_str(a, 0)?))));
    }
    add(t, "htmlDate", 1, Some(1), |a| Ok(Value::str(format_go(&in_zone(&a[0], "UTC"), "2006-01-02"))));
    add(t, "htmlDateInZone", 2, Some(2), |a| Ok(Value::str(format_go(&in_zone(&a[0], arg_str(a, 1)?), "2006-01-02"))));
    add(t, "toDate", 2, Some(2), |a| Ok(parse_go(arg_str(a, 0)?, arg_str(a, 1)?).map_or_else(|_| zero_time(), |z| Value::Time(Rc::new(z)))));
    add(t, "mustToDate", 2, Some(2), |a| parse_go(arg_str(a, 0)?, arg_str(a, 1)?).map(|z| Value::Time(Rc::new(z))));
    add(t, "unixEpoch", 1, Some(1), |a| match &a[0] {
        Value::Time(z) => Ok(Value::str(z.timestamp().as_second().to_string())),
        other => Err(super::wrong_type("time.Time", other)),
    });
    add(t, "duration", 1, Some(1), |a| {
        // sprig reads only an int64 or a decimal string; anything else (an int literal too) is 0.
        let secs = match &a[0] {
            Value::I64(i) => *i,
            Value::Str(s) => s.parse().unwrap_or(0),
            _ => 0,
        };
        Ok(Value::str(duration_string(secs.wrapping_mul(1_000_000_000))))
    });
    add(t, "ago", 1, Some(1), |a| {
        let then = in_zone(&a[0], "UTC");
        let ns = Zoned::now().timestamp().as_nanosecond() - then.timestamp().as_nanosecond();
        let secs = (ns as f64 / 1e9).round() as i64;
        Ok(Value::str(duration_string(secs.wrapping_mul(1_000_000_000))))
    });
}

fn zero_time() -> Value {
    let z = jiff::civil::date(1, 1, 1).at(0, 0, 0, 0).to_zoned(TimeZone::UTC);
    z.map_or(Value::Nil, |z| Value::Time(Rc::new(z)))
}

/// sprig's dateInZone argument: a time, unix seconds (int), anything else is now.
fn in_zone(v: &Value, zone: &str) -> Zoned {
    let tz = if zone == "Local" || zone.is_empty() { TimeZone::UTC } else { TimeZone::get(zone).unwrap_or(TimeZone::UTC) };
    let ts = match v {
        Value::Time(z) => z.timestamp(),
        Value::Int(secs) => jiff::Timestamp::from_second(*secs).unwrap_or_else(|_| jiff::Timestamp::now()),
        _ => jiff::Timestamp::now(),
    };
    ts.to_zoned(tz)
}

/// Go's time.Time.String (without the monotonic clock reading).
pub(crate) fn go_string(z: &Zoned) -> String {
    format_go(z, "2006-01-02 15:04:05.999999999 -0700 MST")
}

pub(crate) fn rfc3339_nano(z: &Zoned) -> String {
    format_go(z, "2006-01-02T15:04:05.999999999Z07:00")
}

/// Go's time.Duration.String.
pub(crate) fn duration_string(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let sign = if neg { "-" } else { "" };
    if u < 1_000_000_000 {
        let (unit, div) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", frac(u, div));
    }
    let h = u / 3_600_000_000_000;
    let m = (u / 60_000_000_000) % 60;
    let s = frac(u % 60_000_000_000, 1_000_000_000);
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}

fn frac(v: u64, div: u64) -> String {
    let int = v / div;
    let rem = v % div;
    if rem == 0 {
        return int.to_string();
    }
    let width = div.to_string().len() - 1;
    let f = format!("{rem:0width$}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// A chunk of a Go layout.
enum Chunk {
    Lit(String),
    Std(&'static str),
    /// Fractional seconds: `.000` (fixed) or `.999` (trailing zeros trimmed), with the separator.
    Frac(char, usize, bool),
}

/// Splits a Go layout into literals and standard chunks (Go's nextStdChunk order).
fn chunks(layout: &str) -> Vec<Chunk> {
    const STD: &[&str] = &[
        "January", "Jan", "Monday", "Mon", "MST", "2006", "002", "01", "02", "03", "04", "05", "06", "15", "__2", "_2",
        "1", "2", "3", "4", "5", "PM", "pm", "Z07:00:00", "-07:00:00", "Z070000", "-070000", "Z07:00", "-07:00", "Z0700",
        "-0700", "Z07", "-07",
    ];
    let mut out = Vec::new();
    let mut lit = String::new();
    let b = layout.as_bytes();
    let mut i = 0;
    while i < layout.len() {
        let rest = &layout[i..];
        if (rest.starts_with('.') || rest.starts_with(',')) && b.get(i + 1).is_some_and(|c| *c == b'0' || *c == b'9') {
            let d = b[i + 1];
            let n = b[i + 1..].iter().take_while(|c| **c == d).count();
            if !b.get(i + 1 + n).is_some_and(u8::is_ascii_digit) {
                out.push(Chunk::Lit(std::mem::take(&mut lit)));
                out.push(Chunk::Frac(b[i] as char, n, d == b'9'));
                i += 1 + n;
                continue;
            }
        }
        if let Some(tok) = STD.iter().find(|t| std_at(rest, t)) {
            out.push(Chunk::Lit(std::mem::take(&mut lit)));
            out.push(Chunk::Std(tok));
            i += tok.len();
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        lit.push(c);
        i += c.len_utf8();
    }
    out.push(Chunk::Lit(lit));
    out
}

fn std_at(rest: &str, tok: &str) -> bool {
    if !rest.starts_with(tok) {
        return false;
    }
    // "Mon"/"Jan" followed by a lower-case letter are words, not chunks (Go's startsWithLowerCase).
    if matches!(tok, "Jan" | "Mon") {
        return !rest[tok.len()..].starts_with(|c: char| c.is_ascii_lowercase());
    }
    true
}

/// Go's time.Time.Format.
pub(crate) fn format_go(z: &Zoned, layout: &str) -> String {
    let mut out = String::new();
    let off = z.offset().seconds();
    for c in chunks(layout) {
        match c {
            Chunk::Lit(s) => out.push_str(&s),
            Chunk::Frac(sep, n, trim) => {
                let f = format!("{:09}", z.subsec_nanosecond());
                let digits = &f[..n.min(9)];
                let digits = if trim { digits.trim_end_matches('0') } else { digits };
                if !digits.is_empty() {
                    out.push(sep);
                    out.push_str(digits);
                }
            }
            Chunk::Std(tok) => out.push_str(&std_value(z, tok, off)),
        }
    }
    out
}

fn std_value(z: &Zoned, tok: &str, off: i32) -> String {
    let hour12 = match z.hour() % 12 {
        0 => 12,
        h => h,
    };
    match tok {
        "January" => MONTHS[z.month() as usize - 1].into(),
        "Jan" => MONTHS[z.month() as usize - 1][..3].into(),
        "Monday" => DAYS[z.weekday().to_sunday_zero_offset() as usize].into(),
        "Mon" => DAYS[z.weekday().to_sunday_zero_offset() as usize][..3].into(),
        "MST" => abbreviation(z),
        "2006" => format!("{:04}", z.year()),
        "06" => format!("{:02}", z.year().rem_euclid(100)),
        "002" => format!("{:03}", z.day_of_year()),
        "01" => format!("{:02}", z.month()),
        "1" => z.month().to_string(),
        "02" => format!("{:02}", z.day()),
        "_2" => format!("{:>2}", z.day()),
        "__2" => format!("{:>3}", z.day_of_year()),
        "2" => z.day().to_string(),
        "15" => format!("{:02}", z.hour()),
        "03" => format!("{hour12:02}"),
        "3" => hour12.to_string(),
        "04" => format!("{:02}", z.minute()),
        "4" => z.minute().to_string(),
        "05" => format!("{:02}", z.second()),
        "5" => z.second().to_string(),
        "PM" => (if z.hour() >= 12 { "PM" } else { "AM" }).into(),
        "pm" => (if z.hour() >= 12 { "pm" } else { "am" }).into(),
        t => offset(off, t),
    }
}

fn abbreviation(z: &Zoned) -> String {
    let info = z.time_zone().to_offset_info(z.timestamp());
    let abbr = info.abbreviation().to_string();
    if abbr.is_empty() || abbr.starts_with(['+', '-']) {
        let off = z.offset().seconds();
        return offset(off, "-0700").trim_end_matches("00").to_string();
    }
    abbr
}

fn offset(off: i32, tok: &str) -> String {
    if tok.starts_with('Z') && off == 0 {
        return "Z".into();
    }
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.unsigned_abs();
    let (h, m, s) = (a / 3600, (a / 60) % 60, a % 60);
    let body = tok.trim_start_matches(['Z', '-']);
    match body {
        "07:00:00" => format!("{sign}{h:02}:{m:02}:{s:02}"),
        "070000" => format!("{sign}{h:02}{m:02}{s:02}"),
        "07:00" => format!("{sign}{h:02}:{m:02}"),
        "0700" => format!("{sign}{h:02}{m:02}"),
        _ => format!("{sign}{h:02}"),
    }
}

/// Go's time.ParseInLocation with a layout (the common chunks; zone names other than UTC are refused).
pub(crate) fn parse_go(layout: &str, value: &str) -> Result<Zoned, String> {
    let err = || format!("parsing time {value:?} as {layout:?}: cannot parse");
    let mut rest = value;
    let (mut y, mut mo, mut d, mut h, mut mi, mut s, mut ns, mut off, mut pm) = (1i16, 1i8, 1i8, 0i8, 0i8, 0i8, 0i32, 0i32, None);
    for c in chunks(layout) {
        match c {
            Chunk::Lit(l) => rest = rest.strip_prefix(l.as_str()).ok_or_else(err)?,
            Chunk::Frac(sep, _, _) => {
                if let Some(r) = rest.strip_prefix(sep) {
                    let n = r.bytes().take_while(u8::is_ascii_digit).count();
                    let digits = format!("{:0<9}", &r[..n.min(9)]);
                    ns = digits.parse().map_err(|_| err())?;
                    rest = &r[n..];
                }
            }
            Chunk::Std(tok) => {
                let (v, r) = parse_std(tok, rest).ok_or_else(err)?;
                rest = r;
                match tok {
                    "2006" => y = v as i16,
                    "06" => y = (if v >= 69 { 1900 } else { 2000 } + v) as i16,
                    "01" | "1" | "Jan" | "January" => mo = v as i8,
                    "02" | "_2" | "2" => d = v as i8,
                    "15" | "03" | "3" => h = v as i8,
                    "04" | "4" => mi = v as i8,
                    "05" | "5" => s = v as i8,
                    "PM" | "pm" => pm = Some(v == 1),
                    t if t.contains("07") => off = v,
                    _ => {}
                }
            }
        }
    }
    if !rest.is_empty() {
        return Err(format!("parsing time {value:?}: extra text: {rest:?}"));
    }
    if let Some(p) = pm {
        h = (h % 12) + if p { 12 } else { 0 };
    }
    let tz = TimeZone::fixed(jiff::tz::Offset::from_seconds(off).map_err(|e| e.to_string())?);
    jiff::civil::DateTime::new(y, mo, d, h, mi, s, ns).and_then(|dt| dt.to_zoned(tz)).map_err(|e| format!("parsing time {value:?}: {e}"))
}

fn parse_std<'a>(tok: &str, s: &'a str) -> Option<(i32, &'a str)> {
    let num = |n: usize, exact: bool| -> Option<(i32, &'a str)> {
        let len = s.bytes().take_while(u8::is_ascii_digit).count().min(n);
        if len == 0 || exact && len != n {
            return None;
        }
        Some((s[..len].parse().ok()?, &s[len..]))
    };
    match tok {
        "2006" => num(4, true),
        "06" | "01" | "02" | "15" | "03" | "04" | "05" => num(2, true),
        "1" | "2" | "3" | "4" | "5" => num(2, false),
        "_2" => num(2, false).or_else(|| s.strip_prefix(' ').and_then(|r| parse_std("2", r))),
        "Jan" => MONTHS.iter().position(|m| s.starts_with(&m[..3])).map(|i| (i as i32 + 1, &s[3..])),
        "January" => MONTHS.iter().position(|m| s.starts_with(m)).map(|i| (i as i32 + 1, &s[MONTHS[i].len()..])),
        "Mon" => DAYS.iter().any(|d| s.starts_with(&d[..3])).then(|| (0, &s[3..])),
        "Monday" => DAYS.iter().find(|d| s.starts_with(*d)).map(|d| (0, &s[d.len()..])),
        "PM" | "pm" => {
            let p = s.get(..2)?.to_ascii_uppercase();
            Some((i32::from(p == "PM"), &s[2..]))
        }
        "MST" => s.starts_with("UTC").then(|| (0, &s[3..])),
        t => parse_offset(t, s),
    }
}

fn parse_offset<'a>(tok: &str, s: &'a str) -> Option<(i32, &'a str)> {
    if tok.starts_with('Z') && s.starts_with('Z') {
        return Some((0, &s[1..]));
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = tok.trim_start_matches(['Z', '-']);
    let want = body.len();
    let part = s.get(1..1 + want)?;
    let digits: String = part.chars().filter(char::is_ascii_digit).collect();
    let n = |i: usize| digits.get(i..i + 2).and_then(|x| x.parse::<i32>().ok());
    let secs = n(0)? * 3600 + n(2).unwrap_or(0) * 60 + n(4).unwrap_or(0);
    Some((sign * secs, &s[1 + want..]))
}
