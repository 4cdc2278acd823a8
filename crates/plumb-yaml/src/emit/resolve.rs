//! Would a string read back as something else if written unquoted? A port of go-yaml v2's
//! `resolve` (resolve.go) and `isBase60Float` as used by `encoder.stringv`: a string is only
//! written plain when a YAML 1.1 reader would read it back as the same string.

/// True when go-yaml v2 `stringv` allows the plain style for `s` (before the emitter's own
/// character analysis), i.e. `resolve("", s)` gives `!!str` and `s` is not a base-60 float.
pub(crate) fn plain_resolves_to_str(s: &str) -> bool {
    resolves_to_str(s) && !is_base60_float(s)
}

fn resolves_to_str(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        // "" resolves to null.
        return false;
    };
    let hint = match first {
        b'+' | b'-' => 'S',
        b'0'..=b'9' => 'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => 'M',
        b'.' => '.',
        _ => return true,
    };
    if IN_MAP.contains(&s) {
        return false;
    }
    match hint {
        '.' => parse_go_float(s).is_none(),
        'D' | 'S' => {
            if parse_timestamp(s) {
                return false;
            }
            let plain = s.replace('_', "");
            if parse_go_int(&plain) || is_yaml_style_float(&plain) {
                return false;
            }
            let bin = plain
                .strip_prefix("0b")
                .or_else(|| plain.strip_prefix("-0b"));
            !bin.is_some_and(|b| !b.is_empty() && b.bytes().all(|c| c == b'0' || c == b'1'))
        }
        _ => true,
    }
}

/// resolve.go's `resolveMapList`: YAML 1.1 booleans, nulls, infinities, NaN and the merge key.
const IN_MAP: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no", "No",
    "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null", "NULL", ".nan",
    ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
    "<<",
];

/// `strconv.ParseInt(s, 0, 64)` or `ParseUint(s, 0, 64)` succeeds (base prefixes `0x`, `0o`,
/// `0b`, a leading `0` for octal; underscores were already removed by the caller, as go-yaml
/// does, and Go only accepts them with base prefixes anyway).
fn parse_go_int(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (digits, radix) = if let Some(r) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        (r, 16)
    } else if let Some(r) = unsigned
        .strip_prefix("0o")
        .or_else(|| unsigned.strip_prefix("0O"))
    {
        (r, 8)
    } else if let Some(r) = unsigned
        .strip_prefix("0b")
        .or_else(|| unsigned.strip_prefix("0B"))
    {
        (r, 2)
    } else if unsigned.len() > 1 && unsigned.starts_with('0') {
        (&unsigned[1..], 8)
    } else {
        (unsigned, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    // Range: int64 for signed forms, uint64 otherwise (ParseUint rejects a sign).
    match u128::from_str_radix(digits, radix) {
        Ok(v) if s.starts_with('-') => v <= 1u128 << 63,
        Ok(v) if s.starts_with('+') => v < 1u128 << 63,
        Ok(v) => v <= u128::from(u64::MAX),
        Err(_) => false,
    }
}

/// resolve.go's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` accepts `s` (used for strings starting with `.`). Go accepts
/// decimal forms, hex floats, `inf`/`infinity`/`nan` and underscores only with a base prefix;
/// starting with `.` only the decimal form can apply.
fn parse_go_float(s: &str) -> Option<f64> {
    if is_yaml_style_float(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// go-yaml v2 `parseTimestamp`: the value starts with four digits and `-`, then matches one of
/// `2006-1-2T15:4:5.999999999Z07:00`, `2006-1-2t15:4:5.999999999Z07:00`,
/// `2006-1-2 15:4:5.999999999` or `2006-1-2` under Go's `time.Parse`.
pub(crate) fn parse_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = Parser { b, i: 5 };
    let year: u32 = s[..4].parse().unwrap_or(0);
    let Some(month) = p.num(1, 2) else {
        return false;
    };
    if !p.eat(b'-') {
        return false;
    }
    let Some(day) = p.num(1, 2) else { return false };
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, year) {
        return false;
    }
    if p.done() {
        return true;
    }
    let sep = b[p.i];
    let with_zone = sep == b'T' || sep == b't';
    if !with_zone && sep != b' ' {
        return false;
    }
    p.i += 1;
    let Some(hour) = p.num(1, 2) else {
        return false;
    };
    if !p.eat(b':') {
        return false;
    }
    let Some(min) = p.num(1, 2) else { return false };
    if !p.eat(b':') {
        return false;
    }
    let Some(sec) = p.num(1, 2) else { return false };
    if hour > 23 || min > 59 || sec > 59 {
        return false;
    }
    // Go accepts a fractional second after the seconds field ('.' or ',' then digits).
    if p.i < b.len()
        && (b[p.i] == b'.' || b[p.i] == b',')
        && p.i + 1 < b.len()
        && b[p.i + 1].is_ascii_digit()
    {
        p.i += 1;
        while p.i < b.len() && b[p.i].is_ascii_digit() {
            p.i += 1;
        }
    }
    if !with_zone {
        return p.done();
    }
    if p.eat(b'Z') {
        return p.done();
    }
    // Z07:00 also takes ±hh:mm.
    if p.i < b.len() && (b[p.i] == b'+' || b[p.i] == b'-') {
        p.i += 1;
        let ok = p.fixed(2).is_some_and(|h| h <= 24)
            && p.eat(b':')
            && p.fixed(2).is_some_and(|m| m <= 59);
        return ok && p.done();
    }
    false
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn num(&mut self, min: usize, max: usize) -> Option<u32> {
        let start = self.i;
        while self.i < self.b.len() && self.i - start < max && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        if self.i - start < min {
            return None;
        }
        std::str::from_utf8(&self.b[start..self.i])
            .ok()?
            .parse()
            .ok()
    }
    fn fixed(&mut self, n: usize) -> Option<u32> {
        let start = self.i;
        let v = self.num(n, n)?;
        (self.i - start == n).then_some(v)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.i < self.b.len() && self.b[self.i] == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$` (YAML 1.1 sexagesimal, e.g. `1:20`).
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() || !s.contains(':') {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        // [0-5]?[0-9]: one digit, or two digits whose first is 0-5.
        if i + 1 < b.len() && (b'0'..=b'5').contains(&b[i]) && b[i + 1].is_ascii_digit() {
            i += 2;
        } else if i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        } else {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_yaml_v2_resolution() {
        for s in [
            "yes", "on", "Off", "y", "N", "~", "null", "", ".inf", "-.Inf", ".nan",
        ] {
            assert!(!plain_resolves_to_str(s), "{s:?} is special");
        }
        for s in [
            "1", "-1", "+1", "0755", "0x1F", "0o17", "0b101", "1_000", "1.0", ".5", "1e3", "1.",
            "08", "1:20", "-0b11",
        ] {
            assert!(!plain_resolves_to_str(s), "{s:?} is a number");
        }
        for s in [
            "2026-07-20T10:12:03Z",
            "2026-07-20",
            "2026-7-2 1:2:3",
            "2026-07-20T10:12:03.5+02:00",
        ] {
            assert!(!plain_resolves_to_str(s), "{s:?} is a timestamp");
        }
        for s in [
            "abc",
            "yess",
            "nope",
            "1.2.3",
            "v1",
            "0x",
            "1e",
            "2026-13-01",
            "2026-02-30",
            "12:60",
            "8080:80",
            "+",
            "-",
            ".",
            "1:2:3x",
            "0b102",
            "ON2",
            "<<",
        ] {
            assert!(plain_resolves_to_str(s), "{s:?} is a plain string");
        }
    }
}
