//! Sprig's string, regex, path and random functions, and Argo's `normalize` and `slugify`.

use std::collections::{BTreeMap, HashMap};

use super::{FuncDef, add, arg_bool, arg_int, arg_str, strval};
use crate::value::Value;

macro_rules! str1 {
    ($t:expr, $name:expr, $body:expr) => {
        add($t, $name, 1, Some(1), |a| {
            let f: fn(&str) -> String = $body;
            Ok(Value::str(f(arg_str(a, 0)?)))
        })
    };
}

macro_rules! str2 {
    ($t:expr, $name:expr, $body:expr) => {
        add($t, $name, 2, Some(2), |a| {
            let f: fn(&str, &str) -> Value = $body;
            Ok(f(arg_str(a, 0)?, arg_str(a, 1)?))
        })
    };
}

/// Go's unicode.IsSpace-based strings.TrimSpace.
fn trim_space(s: &str) -> String {
    s.trim_matches(|c: char| c.is_whitespace()).to_string()
}

// length: a table of registrations, one line per function.
pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    str1!(t, "trim", trim_space);
    str1!(t, "upper", |s| s.to_uppercase());
    str1!(t, "lower", |s| s.to_lowercase());
    str1!(t, "title", title);
    str1!(t, "untitle", untitle);
    str1!(t, "nospace", |s| s.chars().filter(|c| !c.is_whitespace()).collect());
    str1!(t, "initials", initials);
    str1!(t, "swapcase", swapcase);
    str1!(t, "snakecase", snakecase);
    str1!(t, "camelcase", camelcase);
    str1!(t, "kebabcase", |s| snakecase(s).replace('_', "-"));
    str1!(t, "normalize", normalize);
    str1!(t, "regexQuoteMeta", |s| regex::escape(s));
    str1!(t, "base", path_base);
    str1!(t, "dir", path_dir);
    str1!(t, "clean", path_clean);
    str1!(t, "ext", path_ext);
    str1!(t, "osBase", path_base);
    str1!(t, "osDir", path_dir);
    str1!(t, "osClean", path_clean);
    str1!(t, "osExt", path_ext);
    add(t, "isAbs", 1, Some(1), |a| Ok(Value::Bool(arg_str(a, 0)?.starts_with('/'))));
    add(t, "osIsAbs", 1, Some(1), |a| Ok(Value::Bool(arg_str(a, 0)?.starts_with('/'))));
    str2!(t, "trimAll", |a, b| Value::str(b.trim_matches(|c| a.contains(c))));
    str2!(t, "trimall", |a, b| Value::str(b.trim_matches(|c| a.contains(c))));
    str2!(t, "trimSuffix", |a, b| Value::str(b.strip_suffix(a).unwrap_or(b)));
    str2!(t, "trimPrefix", |a, b| Value::str(b.strip_prefix(a).unwrap_or(b)));
    str2!(t, "contains", |a, b| Value::Bool(b.contains(a)));
    str2!(t, "hasPrefix", |a, b| Value::Bool(b.starts_with(a)));
    str2!(t, "hasSuffix", |a, b| Value::Bool(b.ends_with(a)));
    str2!(t, "splitList", |sep, s| Value::list(go_split(s, sep, None).into_iter().map(Value::str).collect()));
    str2!(t, "split", |sep, s| split_map(go_split(s, sep, None)));
    add(t, "splitn", 3, Some(3), |a| {
        let n = arg_int(a, 1)?;
        let parts = if n == 0 { Vec::new() } else { go_split(arg_str(a, 2)?, arg_str(a, 0)?, usize::try_from(n).ok()) };
        Ok(split_map(parts))
    });
    add(t, "replace", 3, Some(3), |a| Ok(Value::str(go_replace(arg_str(a, 2)?, arg_str(a, 0)?, arg_str(a, 1)?))));
    add(t, "repeat", 2, Some(2), repeat);
    add(t, "substr", 3, Some(3), substr);
    add(t, "trunc", 2, Some(2), trunc);
    add(t, "abbrev", 2, Some(2), abbrev);
    add(t, "abbrevboth", 3, Some(3), abbrevboth);
    add(t, "indent", 2, Some(2), |a| Ok(Value::str(indent(arg_int(a, 0)?, arg_str(a, 1)?)?)));
    add(t, "nindent", 2, Some(2), |a| Ok(Value::str(format!("\n{}", indent(arg_int(a, 0)?, arg_str(a, 1)?)?))));
    add(t, "wrap", 2, Some(2), |a| Ok(Value::str(wrap(arg_str(a, 1)?, arg_int(a, 0)?, "\n"))));
    add(t, "wrapWith", 3, Some(3), |a| Ok(Value::str(wrap(arg_str(a, 2)?, arg_int(a, 0)?, arg_str(a, 1)?))));
    add(t, "plural", 3, Some(3), |a| {
        Ok(Value::str(if arg_int(a, 2)? == 1 { arg_str(a, 0)? } else { arg_str(a, 1)? }))
    });
    add(t, "quote", 0, None, |a| Ok(Value::str(quote_all(a, |s| crate::gofmt::go_quote(&strval(s), false)))));
    add(t, "squote", 0, None, |a| Ok(Value::str(quote_all(a, |s| format!("'{}'", s.to_go_string())))));
    add(t, "cat", 0, None, |a| {
        let parts: Vec<String> = a.iter().filter(|v| !v.is_nil()).map(Value::to_go_string).collect();
        Ok(Value::str(parts.join(" ")))
    });
    add(t, "toString", 1, Some(1), |a| Ok(Value::str(strval(&a[0]))));
    add(t, "slugify", 1, None, slugify);
    // sprig's regexMatch answers false for a bad pattern; mustRegexMatch fails.
    add(t, "regexMatch", 2, Some(2), |a| {
        let (p, s) = (arg_str(a, 0)?, arg_str(a, 1)?);
        Ok(Value::Bool(re(p).is_ok_and(|r| r.is_match(s))))
    });
    add(t, "mustRegexMatch", 2, Some(2), |a| Ok(Value::Bool(re(arg_str(a, 0)?)?.is_match(arg_str(a, 1)?))));
    add(t, "regexFind", 2, Some(2), regex_find);
    add(t, "mustRegexFind", 2, Some(2), regex_find);
    add(t, "regexFindAll", 3, Some(3), regex_find_all);
    add(t, "mustRegexFindAll", 3, Some(3), regex_find_all);
    add(t, "regexReplaceAll", 3, Some(3), |a| regex_replace(a, false));
    add(t, "mustRegexReplaceAll", 3, Some(3), |a| regex_replace(a, false));
    add(t, "regexReplaceAllLiteral", 3, Some(3), |a| regex_replace(a, true));
    add(t, "mustRegexReplaceAllLiteral", 3, Some(3), |a| regex_replace(a, true));
    add(t, "regexSplit", 3, Some(3), regex_split);
    add(t, "mustRegexSplit", 3, Some(3), regex_split);
    add(t, "randAlphaNum", 1, Some(1), |a| random(a, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"));
    add(t, "randAlpha", 1, Some(1), |a| random(a, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"));
    add(t, "randNumeric", 1, Some(1), |a| random(a, b"0123456789"));
    add(t, "randAscii", 1, Some(1), |a| {
        random(a, b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~")
    });
    add(t, "uuidv4", 0, Some(0), |_| uuidv4());
    add(t, "hello", 0, Some(0), |_| Ok(Value::str("Hello!")));
    add(t, "fail", 1, Some(1), |a| Err(arg_str(a, 0)?.to_string()));
}

fn quote_all(a: &[Value], f: impl Fn(&Value) -> String) -> String {
    a.iter().filter(|v| !v.is_nil()).map(f).collect::<Vec<_>>().join(" ")
}

/// Go's strings.Split / SplitN (n: None for all).
fn go_split<'a>(s: &'a str, sep: &str, n: Option<usize>) -> Vec<&'a str> {
    if sep.is_empty() {
        let mut out: Vec<&str> = Vec::new();
        let mut idx = s.char_indices().peekable();
        while let Some((i, c)) = idx.next() {
            if n.is_some_and(|n| out.len() + 1 == n) {
                out.push(&s[i..]);
                return out;
            }
            out.push(&s[i..i + c.len_utf8()]);
        }
        return out;
    }
    match n {
        Some(n) => s.splitn(n, sep).collect(),
        None => s.split(sep).collect(),
    }
}

fn split_map(parts: Vec<&str>) -> Value {
    let m: BTreeMap<String, Value> = parts.into_iter().enumerate().map(|(i, p)| (format!("_{i}"), Value::str(p))).collect();
    Value::map(m)
}

/// Go's strings.Replace(s, old, new, -1) (an empty `old` inserts between runes).
fn go_replace(s: &str, old: &str, new: &str) -> String {
    if !old.is_empty() {
        return s.replace(old, new);
    }
    let mut out = String::from(new);
    for c in s.chars() {
        out.push(c);
        out.push_str(new);
    }
    out
}

fn repeat(a: &[Value]) -> Result<Value, String> {
    let n = arg_int(a, 0)?;
    let s = arg_str(a, 1)?;
    if n < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let total = (n as u128) * (s.len() as u128);
    if total > crate::MAX_STRING as u128 {
        return Err(format!("repeat would build {total} bytes"));
    }
    Ok(Value::str(s.repeat(n as usize)))
}

/// Byte slicing as Go does it (a cut inside a UTF-8 sequence keeps replacement characters).
fn bytes_str(s: &str, from: usize, to: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[from..to]).into_owned()
}

fn substr(a: &[Value]) -> Result<Value, String> {
    let (start, end, s) = (arg_int(a, 0)?, arg_int(a, 1)?, arg_str(a, 2)?);
    let len = s.len() as i64;
    let oob = || Err(format!("runtime error: slice bounds out of range [{start}:{end}] with length {len}"));
    if start < 0 {
        if end < 0 || end > len {
            return oob();
        }
        return Ok(Value::str(bytes_str(s, 0, end as usize)));
    }
    if end < 0 || end > len {
        if start > len {
            return oob();
        }
        return Ok(Value::str(bytes_str(s, start as usize, s.len())));
    }
    if start > end {
        return oob();
    }
    Ok(Value::str(bytes_str(s, start as usize, end as usize)))
}

fn trunc(a: &[Value]) -> Result<Value, String> {
    let (c, s) = (arg_int(a, 0)?, arg_str(a, 1)?);
    let len = s.len() as i64;
    if c < 0 && len + c > 0 {
        return Ok(Value::str(bytes_str(s, (len + c) as usize, s.len())));
    }
    if c >= 0 && len > c {
        return Ok(Value::str(bytes_str(s, 0, c as usize)));
    }
    Ok(Value::str(s))
}

/// goutils.Abbreviate (rune-based since goutils 1.1.1).
fn abbreviate_full(s: &str, offset: i64, max: i64) -> String {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    if s.is_empty() || max < 4 || len <= max {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < max - 3 {
        offset = len - (max - 3);
    }
    let take = |from: i64, n: i64| -> String { chars.iter().skip(from.max(0) as usize).take(n.max(0) as usize).collect() };
    if offset <= 4 {
        return take(0, max - 3) + "...";
    }
    if max < 7 {
        return s.to_string();
    }
    if offset + max - 3 < len {
        return format!("...{}", abbreviate_full(&take(offset, len), 0, max - 3));
    }
    format!("...{}", take(len - (max - 3), len))
}

fn abbrev(a: &[Value]) -> Result<Value, String> {
    let (w, s) = (arg_int(a, 0)?, arg_str(a, 1)?);
    if w < 4 {
        return Ok(Value::str(s));
    }
    Ok(Value::str(abbreviate_full(s, 0, w)))
}

fn abbrevboth(a: &[Value]) -> Result<Value, String> {
    let (l, r, s) = (arg_int(a, 0)?, arg_int(a, 1)?, arg_str(a, 2)?);
    if r < 4 || l > 0 && r < 7 {
        return Ok(Value::str(s));
    }
    Ok(Value::str(abbreviate_full(s, l, r)))
}

fn indent(n: i64, s: &str) -> Result<String, String> {
    let n = usize::try_from(n).map_err(|_| "strings: negative Repeat count".to_string())?;
    let lines = s.matches('\n').count() + 1;
    if n.saturating_mul(lines).saturating_add(s.len()) > crate::MAX_STRING {
        return Err("indent would build too large a string".into());
    }
    let pad = " ".repeat(n);
    Ok(format!("{pad}{}", s.replace('\n', &format!("\n{pad}"))))
}

/// Go's deprecated strings.Title: the first letter of each word (after a separator) upper-cased.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = ' ';
    for c in s.chars() {
        if is_separator(prev) {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

fn is_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if c.is_alphanumeric() {
        return false;
    }
    c.is_whitespace()
}

/// goutils' Uncapitalize over words separated by whitespace.
fn untitle(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at_start = true;
    for c in s.chars() {
        if c.is_whitespace() {
            at_start = true;
            out.push(c);
        } else if at_start {
            out.extend(c.to_lowercase());
            at_start = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn initials(s: &str) -> String {
    let mut out = String::new();
    let mut at_start = true;
    for c in s.chars() {
        if c.is_whitespace() {
            at_start = true;
        } else if at_start {
            out.push(c);
            at_start = false;
        }
    }
    out
}

fn swapcase(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_uppercase() {
                c.to_lowercase().collect::<Vec<_>>()
            } else if c.is_lowercase() {
                c.to_uppercase().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Words as xstrings splits them for case conversions: runs of letters/digits, upper-case starts.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(char::is_lowercase)));
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn snakecase(s: &str) -> String {
    words(s).iter().map(|w| w.to_lowercase()).collect::<Vec<_>>().join("_")
}

fn camelcase(s: &str) -> String {
    // xstrings.ToPascalCase: split on `_`, `-`, space; capitalize the first letter of each part.
    s.split(['_', '-', ' ', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

fn wrap(s: &str, width: i64, sep: &str) -> String {
    let width = usize::try_from(width).unwrap_or(0).max(1);
    let mut out = Vec::new();
    for line in s.split('\n') {
        let mut cur = String::new();
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
                out.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        out.push(cur);
    }
    out.join(sep)
}

/// Argo's SanitizeName (applicationset/utils/template_functions.go).
pub(crate) fn normalize(name: &str) -> String {
    let lower = name.to_lowercase();
    let mut out: String =
        lower.chars().map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' { c } else { '-' }).collect();
    if out.len() > 253 {
        out.truncate(253);
    }
    out.trim_matches(['-', '.']).to_string()
}

/// Argo's SlugifyName: [maxSize int] [smartTruncate bool] name, then gosimple/slug's Make.
fn slugify(a: &[Value]) -> Result<Value, String> {
    let mut max = 50i64;
    let mut smart = true;
    let last = a.len() - 1;
    for (i, v) in a.iter().enumerate() {
        if i == last {
            continue;
        }
        match i {
            0 => max = arg_int(a, 0)?,
            1 => smart = arg_bool(a, 1)?,
            _ => {}
        }
        let _ = v;
    }
    let name = arg_str(a, last)?;
    Ok(Value::str(slug_make(&normalize(name), max, smart)))
}

/// gosimple/slug v1.15.0 Make on an already normalized name (ASCII `[-a-z0-9.]`).
fn slug_make(s: &str, max: i64, smart: bool) -> String {
    let mut slug = s.trim().to_lowercase();
    let max_len = usize::try_from(max).unwrap_or(0);
    if !smart && slug.len() >= max_len {
        slug.truncate(max_len);
    }
    let replaced: String = slug.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let mut collapsed = String::with_capacity(replaced.len());
    for c in replaced.chars() {
        if c == '-' && collapsed.ends_with('-') {
            continue;
        }
        collapsed.push(c);
    }
    let mut slug = collapsed.trim_matches(['-', '_']).to_string();
    if max > 0 && smart && slug.len() > max_len {
        let bytes = slug.as_bytes();
        let cut = (0..=max_len).rev().find(|&i| bytes[i] == b'-').unwrap_or(max_len);
        slug.truncate(cut);
    }
    slug
}

/// Compiles a Go RE2 pattern (Rust's regex has the same syntax for what templates use).
fn re(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("error parsing regexp: {}", e.to_string().lines().last().unwrap_or("invalid pattern")))
}

fn regex_find(a: &[Value]) -> Result<Value, String> {
    let r = re(arg_str(a, 0)?)?;
    Ok(Value::str(r.find(arg_str(a, 1)?).map_or("", |m| m.as_str())))
}

fn regex_find_all(a: &[Value]) -> Result<Value, String> {
    let r = re(arg_str(a, 0)?)?;
    let n = arg_int(a, 2)?;
    let s = arg_str(a, 1)?;
    let limit = if n < 0 { usize::MAX } else { n as usize };
    Ok(Value::list(r.find_iter(s).take(limit).map(|m| Value::str(m.as_str())).collect()))
}

fn regex_replace(a: &[Value], literal: bool) -> Result<Value, String> {
    let r = re(arg_str(a, 0)?)?;
    let (s, rep) = (arg_str(a, 1)?, arg_str(a, 2)?);
    let out = if literal { r.replace_all(s, regex::NoExpand(rep)) } else { r.replace_all(s, rep) };
    Ok(Value::str(out.into_owned()))
}

fn regex_split(a: &[Value]) -> Result<Value, String> {
    let r = re(arg_str(a, 0)?)?;
    let (s, n) = (arg_str(a, 1)?, arg_int(a, 2)?);
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    // Go's Regexp.Split: an empty pattern match splits between every character.
    let parts: Vec<Value> = if n < 0 {
        r.split(s).map(Value::str).collect()
    } else {
        r.splitn(s, n as usize).map(Value::str).collect()
    };
    Ok(Value::list(parts))
}

fn random(a: &[Value], alphabet: &[u8]) -> Result<Value, String> {
    let n = arg_int(a, 0)?;
    let n = usize::try_from(n).map_err(|_| "negative count".to_string())?;
    if n > 1 << 20 {
        return Err("random string too long".into());
    }
    let mut buf = vec![0u8; n * 2];
    getrandom::fill(&mut buf).map_err(|e| e.to_string())?;
    let out: String = buf
        .chunks(2)
        .map(|c| alphabet[(usize::from(c[0]) << 8 | usize::from(c[1])) % alphabet.len()] as char)
        .collect();
    Ok(Value::str(out))
}

fn uuidv4() -> Result<Value, String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| e.to_string())?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(Value::str(format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])))
}

/// Go's path.Clean.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}
