//! Go's fmt package for template values (`print`, `printf`, `println` and how `{{ . }}` prints):
//! own code because the output must match Go's verbs, padding and `%!verb(type=value)` errors.

use crate::value::Value;

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", crate::gofmt::sprint_v(self))
    }
}

impl Value {
    /// Go's `%v` of the value (what `{{ . }}` prints, except that nil prints `<no value>`).
    pub(crate) fn to_go_string(&self) -> String {
        crate::gofmt::sprint_v(self)
    }
}

/// Go's `fmt.Sprint(v)` (`%v`).
pub(crate) fn sprint_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v);
    out
}

fn write_v(out: &mut String, v: &Value) {
    match v {
        Value::Invalid | Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_float_v(*f)),
        Value::Str(s) => out.push_str(s),
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, e);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, e);
            }
            out.push(']');
        }
        Value::Func(_) => out.push_str("0x1"),
        Value::Time(t) => out.push_str(&crate::golayout::go_string(t)),
        Value::I64(i) => out.push_str(&i.to_string()),
        Value::Semver(s) => out.push_str(&s.to_string()),
    }
}

/// Shortest decimal digits and decimal exponent of a finite non-zero float: `1.5e3` gives ("15", 3).
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `%v` of a float64 (`%g` with the shortest digits: an exponent from 1e6 or below 1e-4).
pub(crate) fn format_float_v(f: f64) -> String {
    format_g(f, None, false)
}

fn special_float(f: f64) -> Option<String> {
    if f.is_nan() {
        return Some("NaN".into());
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        });
    }
    None
}

/// `%g`/`%G` with an optional precision.
fn format_g(f: f64, prec: Option<usize>, upper: bool) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0");
    }
    let (digits, exp) = match prec {
        None => shortest_digits(f),
        Some(p) => {
            let p = p.max(1);
            let s = format!("{:.*e}", p - 1, f.abs());
            let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
            let d: String = mant.chars().filter(|c| *c != '.').collect();
            (
                d.trim_end_matches('0').to_string().max("0".into()),
                e.parse().unwrap_or(0),
            )
        }
    };
    let eprec = match prec {
        None => 6,
        Some(p) => p.max(1) as i32,
    };
    let body = if exp < -4 || exp >= eprec {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        format!(
            "{m}{}{}{:02}",
            if upper { 'E' } else { 'e' },
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else if exp < 0 {
        format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{}{}", digits, "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    };
    format!("{sign}{body}")
}

fn format_e(f: f64, prec: usize, upper: bool) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let s = format!("{:.*e}", prec, f);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mant}{}{}{:02}",
        if upper { 'E' } else { 'e' },
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

/// Go's strconv.FormatFloat(f, 'x', -1, 64): `0x1.cp+01` (shortest mantissa, normalized).
fn hex_float(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0x0p+00");
    }
    let bits = f.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        // Subnormal: shift the first set bit into the implicit position.
        exp = 1;
        while mant & (1u64 << 52) == 0 {
            mant <<= 1;
            exp -= 1;
        }
        mant &= (1u64 << 52) - 1;
    }
    let exp = exp - 1023;
    let digits = format!("{mant:013x}");
    let digits = digits.trim_end_matches('0');
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}0x1{frac}p{esign}{:02}", exp.abs())
}

#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Widths and precisions above this are refused rather than allocated.
const MAX_WIDTH: usize = 1 << 20;

/// Go's `fmt.Sprintf`.
pub(crate) fn sprintf(format: &str, args: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut argi = 0;
    let mut chars = format.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&(_, f)) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        spec.width = number_or_star(&mut chars, args, &mut argi, &mut out, &mut spec)?;
        if chars.peek().map(|(_, c)| *c) == Some('.') {
            chars.next();
            spec.prec = Some(
                number_or_star(&mut chars, args, &mut argi, &mut out, &mut spec)?.unwrap_or(0),
            );
        }
        let Some((_, verb)) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(argi) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        argi += 1;
        format_one(&mut out, verb, spec, arg);
        if out.len() > crate::errors::MAX_STRING {
            return Err("printf result too large".into());
        }
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|a| format!("{}={}", a.type_name(), sprint_v(a)))
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    Ok(out)
}

fn number_or_star(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    args: &[Value],
    argi: &mut usize,
    out: &mut String,
    spec: &mut Spec,
) -> Result<Option<usize>, String> {
    if chars.peek().map(|(_, c)| *c) == Some('*') {
        chars.next();
        let v = args.get(*argi);
        *argi += 1;
        return match v {
            Some(Value::Int(i) | Value::I64(i)) => {
                if *i < 0 {
                    spec.minus = true;
                }
                let w = i.unsigned_abs() as usize;
                if w > MAX_WIDTH {
                    return Err("printf width too large".into());
                }
                Ok(Some(w))
            }
            _ => {
                out.push_str("%!(BADWIDTH)");
                Ok(None)
            }
        };
    }
    let mut n: Option<usize> = None;
    while let Some(&(_, d)) = chars.peek() {
        let Some(dv) = d.to_digit(10) else { break };
        let v = n.unwrap_or(0) * 10 + dv as usize;
        if v > MAX_WIDTH {
            return Err("printf width too large".into());
        }
        n = Some(v);
        chars.next();
    }
    Ok(n)
}

/// Go's `badVerb`: the value is printed as `%v` with the verb's flags and width still set
/// (`%05d` of a float gives `%!d(float64=00003)`).
fn bad_verb(verb: char, spec: Spec, arg: &Value) -> String {
    match arg {
        Value::Invalid | Value::Nil => format!("%!{verb}(<nil>)"),
        Value::Int(_) | Value::I64(_) | Value::Float(_) => {
            let text = sprint_v(arg);
            let (sign, digits) = match text.strip_prefix('-') {
                Some(rest) => ("-", rest.to_string()),
                None if spec.plus => ("+", text),
                None if spec.space => (" ", text),
                None => ("", text),
            };
            let mut value = String::new();
            pad_number(&mut value, spec, sign, &digits, true);
            format!("%!{verb}({}={value})", arg.type_name())
        }
        _ => {
            let mut value = String::new();
            pad(&mut value, spec, &sprint_v(arg), false);
            format!("%!{verb}({}={value})", arg.type_name())
        }
    }
}

fn format_one(out: &mut String, verb: char, spec: Spec, arg: &Value) {
    match (verb, arg) {
        ('T', _) => pad(out, spec, arg.type_name(), false),
        ('v', _) => pad(out, spec, &sprint_v(arg), false),
        (_, Value::Map(m)) => {
            out.push_str("map[");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                format_one(out, verb, spec, &Value::str(k.as_str()));
                out.push(':');
                format_one(out, verb, spec, e);
            }
            out.push(']');
        }
        (_, Value::List(items)) => {
            out.push('[');
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                format_one(out, verb, spec, e);
            }
            out.push(']');
        }
        (_, Value::Bool(b)) if verb == 't' => {
            pad(out, spec, if *b { "true" } else { "false" }, false)
        }
        (_, Value::Int(i)) => format_int(out, verb, spec, *i, arg),
        (_, Value::Float(f)) => format_float(out, verb, spec, *f, arg),
        (_, Value::Str(s)) => format_str(out, verb, spec, s, arg),
        (_, Value::Time(_) | Value::Semver(_)) if matches!(verb, 's' | 'q') => {
            format_str(out, verb, spec, &sprint_v(arg), arg)
        }
        (_, Value::I64(d)) => format_int(out, verb, spec, *d, arg),
        _ => out.push_str(&bad_verb(verb, spec, arg)),
    }
}

fn format_str(out: &mut String, verb: char, spec: Spec, s: &str, arg: &Value) {
    let s = match spec.prec {
        Some(p) if matches!(verb, 's' | 'q') => s.chars().take(p).collect::<String>(),
        _ => s.to_string(),
    };
    match verb {
        's' => pad(out, spec, &s, false),
        'q' => {
            let q = if spec.sharp && !s.contains('`') {
                format!("`{s}`")
            } else {
                go_quote(&s, spec.plus)
            };
            pad(out, spec, &q, false)
        }
        'x' | 'X' => {
            let mut h = String::new();
            for (i, b) in s.bytes().enumerate() {
                if spec.space && i > 0 {
                    h.push(' ');
                }
                if spec.sharp && (spec.space || i == 0) {
                    h.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                if verb == 'x' {
                    h.push_str(&format!("{b:02x}"));
                } else {
                    h.push_str(&format!("{b:02X}"));
                }
            }
            pad(out, spec, &h, false)
        }
        _ => out.push_str(&bad_verb(verb, spec, arg)),
    }
}

fn format_int(out: &mut String, verb: char, spec: Spec, i: i64, arg: &Value) {
    let abs = i.unsigned_abs();
    let digits = match verb {
        'd' => abs.to_string(),
        'b' => format!("{abs:b}"),
        'o' | 'O' => format!("{abs:o}"),
        'x' => format!("{abs:x}"),
        'X' => format!("{abs:X}"),
        'c' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return pad(out, spec, &c.to_string(), false);
        }
        'q' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return pad(out, spec, &go_quote_rune(c), false);
        }
        'U' => {
            let u = format!("U+{abs:04X}");
            return pad(out, spec, &u, false);
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => return out.push_str(&bad_verb(verb, spec, arg)),
        _ => return out.push_str(&bad_verb(verb, spec, arg)),
    };
    let digits = match spec.prec {
        Some(0) if i == 0 => String::new(),
        Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    };
    let prefix = match (verb, spec.sharp) {
        ('x', true) => "0x",
        ('X', true) => "0X",
        ('o', true) => "0",
        ('O', _) => "0o",
        ('b', true) => "0b",
        _ => "",
    };
    let sign = if i < 0 {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    pad_number(
        out,
        spec,
        sign,
        &format!("{prefix}{digits}"),
        spec.prec.is_none(),
    );
}

fn format_float(out: &mut String, verb: char, spec: Spec, f: f64, arg: &Value) {
    let body = match verb {
        'e' | 'E' => format_e(f, spec.prec.unwrap_or(6), verb == 'E'),
        'f' | 'F' => {
            if let Some(s) = special_float(f) {
                s
            } else {
                format!("{:.*}", spec.prec.unwrap_or(6), f)
            }
        }
        'g' | 'G' => format_g(f, spec.prec, verb == 'G'),
        'x' | 'X' if spec.prec.is_none() => {
            let h = hex_float(f);
            if verb == 'X' { h.to_uppercase() } else { h }
        }
        _ => return out.push_str(&bad_verb(verb, spec, arg)),
    };
    let (sign, digits) = match body.strip_prefix('-') {
        Some(rest) => ("-", rest.to_string()),
        None => match body.strip_prefix('+') {
            Some(rest) => ("+", rest.to_string()),
            None if spec.plus => ("+", body.clone()),
            None if spec.space => (" ", body.clone()),
            None => ("", body.clone()),
        },
    };
    pad_number(out, spec, sign, &digits, f.is_finite());
}

fn pad_number(out: &mut String, spec: Spec, sign: &str, digits: &str, zero_ok: bool) {
    let len = sign.chars().count() + digits.chars().count();
    let width = spec.width.unwrap_or(0);
    if len >= width {
        out.push_str(sign);
        out.push_str(digits);
    } else if spec.minus {
        out.push_str(sign);
        out.push_str(digits);
        out.push_str(&" ".repeat(width - len));
    } else if spec.zero && zero_ok {
        out.push_str(sign);
        out.push_str(&"0".repeat(width - len));
        out.push_str(digits);
    } else {
        out.push_str(&" ".repeat(width - len));
        out.push_str(sign);
        out.push_str(digits);
    }
}

fn pad(out: &mut String, spec: Spec, s: &str, _num: bool) {
    let len = s.chars().count();
    let width = spec.width.unwrap_or(0);
    if len >= width {
        out.push_str(s);
    } else if spec.minus {
        out.push_str(s);
        out.push_str(&" ".repeat(width - len));
    } else {
        let fill = if spec.zero { "0" } else { " " };
        out.push_str(&fill.repeat(width - len));
        out.push_str(s);
    }
}

/// Go's strconv.Quote (or QuoteToASCII with `plus`).
pub(crate) fn go_quote(s: &str, ascii: bool) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        push_escaped(&mut q, c, '"', ascii);
    }
    q.push('"');
    q
}

fn go_quote_rune(c: char) -> String {
    let mut q = String::from("'");
    push_escaped(&mut q, c, '\'', false);
    q.push('\'');
    q
}

fn push_escaped(q: &mut String, c: char, quote: char, ascii: bool) {
    match c {
        '\u{7}' => q.push_str("\\a"),
        '\u{8}' => q.push_str("\\b"),
        '\u{c}' => q.push_str("\\f"),
        '\n' => q.push_str("\\n"),
        '\r' => q.push_str("\\r"),
        '\t' => q.push_str("\\t"),
        '\u{b}' => q.push_str("\\v"),
        '\\' => q.push_str("\\\\"),
        c if c == quote => {
            q.push('\\');
            q.push(c);
        }
        c if (c as u32) < 0x20 || c as u32 == 0x7f => q.push_str(&format!("\\x{:02x}", c as u32)),
        c if ascii && !c.is_ascii() || !is_go_printable(c) => {
            if (c as u32) < 0x10000 {
                q.push_str(&format!("\\u{:04x}", c as u32));
            } else {
                q.push_str(&format!("\\U{:08x}", c as u32));
            }
        }
        c => q.push(c),
    }
}

fn is_go_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c as u32, 0x80..=0x9f | 0xad | 0x2028 | 0x2029 | 0xfeff | 0xfffe..=0xffff))
}

/// Go's `fmt.Sprint(args...)`: a space between operands when neither is a string.
pub(crate) fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let is_str = matches!(a, Value::Str(_));
        if i > 0 && !is_str && !matches!(args[i - 1], Value::Str(_)) {
            out.push(' ');
        }
        write_v(&mut out, a);
    }
    out
}

/// Go's `fmt.Sprintln(args...)`.
pub(crate) fn sprintln(args: &[Value]) -> String {
    let mut out = args.iter().map(sprint_v).collect::<Vec<_>>().join(" ");
    out.push('\n');
    out
}
