//! Sprig's encoding, hashing and semver functions, and Argo's `toYaml`/`fromYaml`/`fromYamlArray`.

use std::collections::HashMap;

use base64::Engine;
use sha2::Digest;

use super::{FuncDef, add, arg_str, strval};
use crate::value::Value;

// length: a table of registrations, one line per function.
pub(super) fn register(t: &mut HashMap<&'static str, FuncDef>) {
    add(t, "b64enc", 1, Some(1), |a| {
        Ok(Value::str(base64::engine::general_purpose::STANDARD.encode(strval(&a[0]))))
    });
    add(t, "b64dec", 1, Some(1), |a| {
        Ok(Value::str(match base64::engine::general_purpose::STANDARD.decode(strval(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => go_b64_error(&e),
        }))
    });
    add(t, "b32enc", 1, Some(1), |a| Ok(Value::str(base32_encode(strval(&a[0]).as_bytes()))));
    add(t, "sha1sum", 1, Some(1), |a| Ok(Value::str(hex(&<sha1::Sha1 as sha1::Digest>::digest(arg_str(a, 0)?.as_bytes())))));
    add(t, "sha256sum", 1, Some(1), |a| Ok(Value::str(hex(&sha2::Sha256::digest(arg_str(a, 0)?.as_bytes())))));
    add(t, "sha512sum", 1, Some(1), |a| Ok(Value::str(hex(&sha2::Sha512::digest(arg_str(a, 0)?.as_bytes())))));
    add(t, "adler32sum", 1, Some(1), |a| Ok(Value::str(adler32(arg_str(a, 0)?.as_bytes()).to_string())));
    add(t, "toJson", 1, Some(1), |a| Ok(Value::str(to_json(&a[0], false, true).unwrap_or_default())));
    add(t, "mustToJson", 1, Some(1), |a| to_json(&a[0], false, true).map(Value::str));
    add(t, "toPrettyJson", 1, Some(1), |a| Ok(Value::str(to_json(&a[0], true, true).unwrap_or_default())));
    add(t, "mustToPrettyJson", 1, Some(1), |a| to_json(&a[0], true, true).map(Value::str));
    add(t, "toRawJson", 1, Some(1), |a| Ok(Value::str(to_json(&a[0], false, false).unwrap_or_default())));
    add(t, "mustToRawJson", 1, Some(1), |a| to_json(&a[0], false, false).map(Value::str));
    add(t, "fromJson", 1, Some(1), |a| Ok(from_json(arg_str(a, 0)?).unwrap_or(Value::Nil)));
    add(t, "mustFromJson", 1, Some(1), |a| from_json(arg_str(a, 0)?));
    add(t, "toYaml", 1, Some(1), |a| to_yaml(&a[0]));
    add(t, "fromYaml", 1, Some(1), |a| from_yaml(arg_str(a, 0)?, false));
    add(t, "fromYamlArray", 1, Some(1), |a| from_yaml(arg_str(a, 0)?, true));
    add(t, "semver", 1, Some(1), |a| parse_semver(arg_str(a, 0)?).map(|v| Value::Semver(std::rc::Rc::new(v))));
    add(t, "semverCompare", 2, Some(2), semver_compare);
}

fn go_b64_error(e: &base64::DecodeError) -> String {
    match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            format!("illegal base64 data at input byte {at}")
        }
        _ => "illegal base64 data at input byte 0".to_string(),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

fn base32_encode(data: &[u8]) -> String {
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = buf.iter().fold(0u64, |acc, b| acc << 8 | u64::from(*b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(ALPHA[((bits >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// encoding/json Marshal (HTML-escaped) or an Encoder without HTML escaping (toRawJson).
fn to_json(v: &Value, pretty: bool, escape_html: bool) -> Result<String, String> {
    let j = v.to_json()?;
    let s = if pretty { serde_json::to_string_pretty(&j) } else { serde_json::to_string(&j) };
    let s = s.map_err(|e| e.to_string())?;
    let s = s.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029");
    if !escape_html {
        return Ok(s);
    }
    Ok(s.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026"))
}

fn from_json(s: &str) -> Result<Value, String> {
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    Ok(Value::from_json(&v))
}

/// sigs.k8s.io/yaml Marshal: JSON first, then go-yaml v2 output; Argo trims the final newline.
fn to_yaml(v: &Value) -> Result<Value, String> {
    let j = v.to_json()?;
    let s = plumb_yaml::to_yaml_string(&j);
    Ok(Value::str(s.strip_suffix('\n').unwrap_or(&s)))
}

/// sigs.k8s.io/yaml Unmarshal into `map[string]any` or `[]any` (the first document).
fn from_yaml(s: &str, array: bool) -> Result<Value, String> {
    let docs = plumb_yaml::read_documents(s, "fromYaml").map_err(|e| e.to_string())?;
    let first = docs.into_iter().next().map(|d| d.value).unwrap_or(serde_json::Value::Null);
    match (&first, array) {
        (serde_json::Value::Null, false) => Ok(Value::map(Default::default())),
        (serde_json::Value::Null, true) => Ok(Value::list(Vec::new())),
        (serde_json::Value::Object(_), false) | (serde_json::Value::Array(_), true) => Ok(Value::from_json(&first)),
        (_, false) => Err("error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {}".into()),
        (_, true) => Err("error unmarshaling JSON: json: cannot unmarshal into Go value of type []interface {}".into()),
    }
}

/// Masterminds/semver v3 NewVersion (a leading `v`, missing minor/patch accepted).
fn parse_semver(s: &str) -> Result<semver::Version, String> {
    let body = s.strip_prefix('v').unwrap_or(s);
    let (core, rest) = match body.find(['-', '+']) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let mut parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return Err("invalid semantic version".into());
    }
    while parts.len() < 3 {
        parts.push("0");
    }
    let norm: Vec<String> = parts.iter().map(|p| p.parse::<u64>().map(|n| n.to_string())).collect::<Result<_, _>>().map_err(|_| "invalid semantic version".to_string())?;
    semver::Version::parse(&format!("{}{rest}", norm.join("."))).map_err(|_| "invalid semantic version".into())
}

/// Masterminds/semver constraints: comparisons, `~`, `^`, ranges, `||`, `,`/space as AND, `x` wildcards.
fn semver_compare(a: &[Value]) -> Result<Value, String> {
    let constraint = arg_str(a, 0)?;
    let v = parse_semver(arg_str(a, 1)?)?;
    let any_ok = constraint.split("||").map(str::trim).any(|group| {
        let group = group.replace(", ", ",").replace(' ', ",");
        let req = group.replace(",,", ",");
        let req = req.trim_matches(',');
        let req = if req.is_empty() { "*" } else { req };
        match semver::VersionReq::parse(&translate_req(req)) {
            Ok(r) => {
                // Masterminds excludes pre-releases unless the constraint has one, as the semver crate does.
                r.matches(&v)
            }
            Err(_) => false,
        }
    });
    let valid = constraint.split("||").all(|g| {
        let g = g.trim().replace(", ", ",").replace(' ', ",");
        let g = g.trim_matches(',');
        g.is_empty() || semver::VersionReq::parse(&translate_req(g)).is_ok()
    });
    if !valid {
        return Err(format!("improper constraint: {constraint}"));
    }
    Ok(Value::Bool(any_ok))
}

fn translate_req(req: &str) -> String {
    req.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let p = p.trim();
            let (op, ver) = split_op(p);
            let ver = ver.strip_prefix('v').unwrap_or(ver);
            let op = if op.is_empty() || op == "==" { "=" } else { op };
            // `=1.2` in Masterminds means any 1.2.x, as `1.2` does; the semver crate agrees for `=`.
            if ver.contains(['x', 'X', '*']) && op == "=" {
                return ver.replace(['x', 'X'], "*");
            }
            format!("{op}{ver}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn split_op(p: &str) -> (&str, &str) {
    for op in [">=", "<=", "!=", "==", "=>", "=<", ">", "<", "=", "~>", "~", "^"] {
        if let Some(rest) = p.strip_prefix(op) {
            let op = match op {
                "=>" => ">=",
                "=<" => "<=",
                "~>" => "~",
                o => o,
            };
            return (op, rest.trim());
        }
    }
    ("", p)
}
