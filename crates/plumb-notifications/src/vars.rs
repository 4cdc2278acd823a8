//! What triggers and templates see, as Argo CD builds it (`util/notification/settings` and
//! `util/notification/expression`): `.app`, `.appProject`, `.context` (with
//! `notificationType`), `.secrets`, `.serviceType`, `.recipient`, and the helpers under `time`,
//! `strings` and `repo`.

use std::collections::BTreeMap;

use expr::{Context, Environment, Value};
use serde_json::json;

const NANOS: &[(&str, i64)] = &[
    ("Nanosecond", 1),
    ("Microsecond", 1_000),
    ("Millisecond", 1_000_000),
    ("Second", 1_000_000_000),
    ("Minute", 60_000_000_000),
    ("Hour", 3_600_000_000_000),
];

const LAYOUTS: &[(&str, &str)] = &[
    ("Layout", "01/02 03:04:05PM '06 -0700"),
    ("ANSIC", "Mon Jan _2 15:04:05 2006"),
    ("UnixDate", "Mon Jan _2 15:04:05 MST 2006"),
    ("RubyDate", "Mon Jan 02 15:04:05 -0700 2006"),
    ("RFC822", "02 Jan 06 15:04 MST"),
    ("RFC822Z", "02 Jan 06 15:04 -0700"),
    ("RFC850", "Monday, 02-Jan-06 15:04:05 MST"),
    ("RFC1123", "Mon, 02 Jan 2006 15:04:05 MST"),
    ("RFC1123Z", "Mon, 02 Jan 2006 15:04:05 -0700"),
    ("RFC3339", "2006-01-02T15:04:05Z07:00"),
    ("RFC3339Nano", "2006-01-02T15:04:05.999999999Z07:00"),
    ("Kitchen", "3:04PM"),
    ("Stamp", "Jan _2 15:04:05"),
    ("StampMilli", "Jan _2 15:04:05.000"),
    ("StampMicro", "Jan _2 15:04:05.000000"),
    ("StampNano", "Jan _2 15:04:05.000000000"),
];

/// The variables of a trigger condition: `app`, `appProject`, `context` (with an empty
/// `notificationType`, as Argo runs triggers for no destination), and `time`'s durations and
/// layouts. Argo also gives conditions `.secrets`; Plumb leaves them out (nothing in the catalog
/// reads them there, and it keeps a pass cheap).
pub fn expr_vars(
    app: &serde_json::Value,
    app_project: &serde_json::Value,
    context: &BTreeMap<String, String>,
) -> Context {
    let mut ctx = Context::default();
    ctx.insert("app", from_json(app));
    ctx.insert("appProject", from_json(app_project));
    let mut context_v = serde_json::Map::new();
    context_v.insert("notificationType".into(), json!(""));
    for (k, v) in context {
        context_v.insert(k.clone(), json!(v));
    }
    ctx.insert("context", from_json(&serde_json::Value::Object(context_v)));
    let mut time = expr::__private::IndexMap::new();
    for (name, n) in NANOS {
        time.insert(name.to_string(), Value::Duration(*n));
    }
    for (name, layout) in LAYOUTS {
        time.insert(name.to_string(), Value::String(layout.to_string()));
    }
    ctx.insert("time", Value::Map(time));
    ctx
}

/// JSON as an expr value (integers stay integers, as Go's JSON decoding into `any` for
/// Kubernetes objects does).
pub fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        serde_json::Value::Object(m) => {
            Value::Map(m.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// The helpers conditions call (rewritten by [`crate::triggers`] to `__ns_Fn`).
pub(crate) fn add_expr_helpers(env: &mut Environment<'static>) {
    env.add_function("__time_Now", |_| {
        Ok(Value::DateTime(chrono::Utc::now().fixed_offset().into()))
    });
    env.add_function("__time_Parse", |c| {
        let s = string_arg(&c.args, "time.Parse")?;
        parse_rfc3339(&s)
            .map(|t| Value::DateTime(t.into()))
            .map_err(expr::Error::ExprError)
    });
    env.add_function("__strings_ReplaceAll", |c| match c.args.as_slice() {
        [Value::String(s), Value::String(old), Value::String(new)] => {
            Ok(Value::String(replace_all(s, old, new)))
        }
        _ => Err(expr::Error::ExprError(
            "strings.ReplaceAll: expects 3 strings".into(),
        )),
    });
    env.add_function("__strings_ToUpper", |c| {
        Ok(Value::String(
            string_arg(&c.args, "strings.ToUpper")?.to_uppercase(),
        ))
    });
    env.add_function("__strings_ToLower", |c| {
        Ok(Value::String(
            string_arg(&c.args, "strings.ToLower")?.to_lowercase(),
        ))
    });
    env.add_function("__repo_RepoURLToHTTPS", |c| {
        Ok(Value::String(repo_url_to_https(&string_arg(
            &c.args,
            "repo.RepoURLToHTTPS",
        )?)))
    });
    env.add_function("__repo_FullNameByRepoURL", |c| {
        Ok(Value::String(full_name_by_repo_url(&string_arg(
            &c.args,
            "repo.FullNameByRepoURL",
        )?)))
    });
    env.add_function("__repo_QueryEscape", |c| {
        Ok(Value::String(query_escape(&string_arg(
            &c.args,
            "repo.QueryEscape",
        )?)))
    });
}

fn string_arg(args: &[Value], f: &str) -> Result<String, expr::Error> {
    match args {
        [Value::String(s)] => Ok(s.clone()),
        _ => Err(expr::Error::ExprError(format!("{f}: expects one string"))),
    }
}

/// Go's `time.Parse(time.RFC3339, s)` (Argo panics on an error, which fails the condition).
pub fn parse_rfc3339(s: &str) -> Result<chrono::DateTime<chrono::FixedOffset>, String> {
    // Go's RFC 3339 layout wants the 'T' and a two-digit hour; chrono also takes a space.
    if s.as_bytes().get(10) != Some(&b'T') {
        return Err(format!(
            "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
        ));
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map_err(|e| format!("parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": {e}"))
}

/// Go's `time.Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`.
pub fn go_time_string(t: &chrono::DateTime<chrono::FixedOffset>) -> String {
    let frac = t.format("%.9f").to_string();
    let frac = frac.trim_end_matches('0');
    let frac = if frac == "." { "" } else { frac };
    let offset = t.format("%z").to_string();
    let zone = if t.offset().local_minus_utc() == 0 {
        "UTC".to_string()
    } else {
        offset.clone()
    };
    format!("{}{frac} {offset} {zone}", t.format("%Y-%m-%d %H:%M:%S"))
}

fn replace_all(s: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        // Go inserts `new` before every rune and at the end.
        let mut out = String::new();
        for c in s.chars() {
            out.push_str(new);
            out.push(c);
        }
        out.push_str(new);
        return out;
    }
    s.replace(old, new)
}

/// Go's `%v` of a float64 (strconv 'g' with the shortest precision, exponent from 1e21).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
        return format!("{m}e{sign}{digits:0>2}");
    }
    format!("{f}")
}

/// Argo's `repo.RepoURLToHTTPS` (giturls.Parse, then scheme https and no user).
pub fn repo_url_to_https(raw: &str) -> String {
    let (host, path) = split_repo_url(raw);
    let sep = if path.starts_with('/') || path.is_empty() {
        ""
    } else {
        "/"
    };
    format!("https://{host}{sep}{path}")
}

/// Argo's `repo.FullNameByRepoURL`: the first two path segments without `.git`.
pub fn full_name_by_repo_url(raw: &str) -> String {
    let (_, path) = split_repo_url(raw);
    let path = path.strip_suffix(".git").unwrap_or(path);
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() >= 2 {
        parts[..2].join("/")
    } else {
        path.to_string()
    }
}

/// Host (with port) and path of a Git URL, `scheme://[user@]host/path` or scp-like
/// `[user@]host:path`.
fn split_repo_url(raw: &str) -> (&str, &str) {
    let rest = match raw.split_once("://") {
        Some((_, rest)) => rest,
        None => {
            let no_user = raw.rsplit_once('@').map_or(raw, |(_, r)| r);
            return match no_user.split_once(':') {
                Some((host, path)) => (host, path),
                None => ("", no_user),
            };
        }
    };
    let (authority, path) = rest
        .find('/')
        .map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (host, path)
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The template functions reached with `call`: `.time.Parse`, `.time.Now`, `.strings.*`,
/// `.repo.RepoURLToHTTPS`, `.repo.FullNameByRepoURL`, `.repo.QueryEscape`. `.repo.GetCommitMetadata`
/// and `.repo.GetAppDetails` need the repository server and fail with a clear message.
pub fn template_functions() -> plumb_gotemplate::Functions {
    let mut f = plumb_gotemplate::Functions::new();
    let one = |args: &[serde_json::Value], name: &str| -> Result<String, String> {
        match args {
            [serde_json::Value::String(s)] => Ok(s.clone()),
            _ => Err(format!("{name}: expects one string")),
        }
    };
    f.add_data("time", "Parse", move |a| {
        let t = parse_rfc3339(&one(a, "time.Parse")?)?;
        Ok(json!(go_time_string(&t)))
    });
    f.add_data("time", "Now", |_| {
        Ok(json!(go_time_string(&chrono::Utc::now().fixed_offset())))
    });
    f.add_data("strings", "ReplaceAll", |a| match a {
        [
            serde_json::Value::String(s),
            serde_json::Value::String(o),
            serde_json::Value::String(n),
        ] => Ok(json!(replace_all(s, o, n))),
        _ => Err("strings.ReplaceAll: expects 3 strings".into()),
    });
    f.add_data("strings", "ToUpper", move |a| {
        Ok(json!(one(a, "strings.ToUpper")?.to_uppercase()))
    });
    f.add_data("strings", "ToLower", move |a| {
        Ok(json!(one(a, "strings.ToLower")?.to_lowercase()))
    });
    f.add_data("repo", "RepoURLToHTTPS", move |a| {
        Ok(json!(repo_url_to_https(&one(a, "repo.RepoURLToHTTPS")?)))
    });
    f.add_data("repo", "FullNameByRepoURL", move |a| {
        Ok(json!(full_name_by_repo_url(&one(
            a,
            "repo.FullNameByRepoURL"
        )?)))
    });
    f.add_data("repo", "QueryEscape", move |a| {
        Ok(json!(query_escape(&one(a, "repo.QueryEscape")?)))
    });
    for name in ["GetCommitMetadata", "GetAppDetails"] {
        f.add_data("repo", name, move |_| {
            Err(format!(
                "repo.{name} is not implemented in Plumb yet (it needs the repository server)"
            ))
        });
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_helpers_as_argo() {
        assert_eq!(
            repo_url_to_https("git@github.com:argoproj/argo-cd.git"),
            "https://github.com/argoproj/argo-cd.git"
        );
        assert_eq!(
            repo_url_to_https("https://user@gitlab.com/a/b"),
            "https://gitlab.com/a/b"
        );
        assert_eq!(
            repo_url_to_https("ssh://git@host:2222/a/b.git"),
            "https://host:2222/a/b.git"
        );
        assert_eq!(
            full_name_by_repo_url("https://github.com/argoproj/argo-cd.git"),
            "argoproj/argo-cd"
        );
        assert_eq!(
            full_name_by_repo_url("git@github.com:argoproj/argo-cd.git"),
            "argoproj/argo-cd"
        );
        assert_eq!(query_escape("a b/c*~"), "a+b%2Fc%2A~");
    }

    #[test]
    fn go_formats() {
        let t = parse_rfc3339("2024-05-01T10:00:00Z").unwrap();
        assert_eq!(go_time_string(&t), "2024-05-01 10:00:00 +0000 UTC");
        let t = parse_rfc3339("2024-05-01T10:00:00.5+02:00").unwrap();
        assert_eq!(go_time_string(&t), "2024-05-01 10:00:00.5 +0200 +0200");
        assert!(parse_rfc3339("2024-05-01 10:00:00Z").is_err());
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(3.0), "3");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(0.00001), "1e-05");
    }
}
