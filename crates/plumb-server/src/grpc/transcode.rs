//! A request message as the REST request Argo's gateway makes for it (grpc-gateway's rules):
//! `{field}` and `{field=**}` of the path template filled from the message, then the rest of
//! the message as the JSON body (`body: "*"`) or as query parameters (no body; nested fields
//! dotted, repeated fields repeated).

use serde_json::{Map, Value as Json};

use super::served::Served;

/// The REST request: path with query, and the JSON body if any.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Rest {
    pub(crate) uri: String,
    pub(crate) body: Option<Vec<u8>>,
}

/// Builds the REST request for `served` from the request message's JSON; a template field the
/// message leaves empty is an error naming it.
pub(crate) fn rest(served: &Served, message: Json) -> Result<Rest, String> {
    let mut fields = match message {
        Json::Object(m) => m,
        _ => Map::new(),
    };
    let mut uri = String::new();
    let mut rest = served.template;
    while let Some(open) = rest.find('{') {
        uri.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| format!("bad path template {}", served.template))?;
        let var = &rest[open + 1..close];
        let (name, keep_slashes) = match var.split_once('=') {
            Some((name, _)) => (name, true),
            None => (var, false),
        };
        let value = take(&mut fields, name)
            .and_then(|v| scalar_text(&v))
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("missing parameter {name}"))?;
        uri.push_str(&escape(&value, keep_slashes));
        rest = &rest[close + 1..];
    }
    uri.push_str(rest);
    let body = match served.body {
        "" => None,
        "*" => Some(std::mem::take(&mut fields)),
        field => take(&mut fields, field).map(|v| match v {
            Json::Object(m) => m,
            _ => Map::new(),
        }),
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (key, value) in &fields {
        any |= append_query(&mut query, key, value);
    }
    if any {
        uri.push('?');
        uri.push_str(&query.finish());
    }
    let body = body
        .map(|b| serde_json::to_vec(&Json::Object(b)))
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(Rest { uri, body })
}

/// Removes the field at a dotted path.
fn take(fields: &mut Map<String, Json>, path: &str) -> Option<Json> {
    match path.split_once('.') {
        None => fields.remove(path),
        Some((head, tail)) => match fields.get_mut(head) {
            Some(Json::Object(inner)) => take(inner, tail),
            _ => None,
        },
    }
}

fn scalar_text(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Percent-encodes a path parameter (`/` kept for `{field=**}`).
fn escape(value: &str, keep_slashes: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slashes && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Adds one field to the query; whether anything was added.
fn append_query(
    query: &mut form_urlencoded::Serializer<'_, String>,
    key: &str,
    value: &Json,
) -> bool {
    match value {
        // Every item is appended: no short-circuit.
        Json::Array(items) => {
            let mut any = false;
            for item in items {
                any |= append_query(query, key, item);
            }
            any
        }
        Json::Object(inner) => {
            let mut any = false;
            for (k, v) in inner {
                any |= append_query(query, &format!("{key}.{k}"), v);
            }
            any
        }
        Json::Null => false,
        scalar => match scalar_text(scalar) {
            Some(text) => {
                query.append_pair(key, &text);
                true
            }
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn served(template: &'static str, body: &'static str) -> Served {
        Served {
            path: "/p.S/M",
            verb: "GET",
            template,
            body,
        }
    }

    #[test]
    fn fills_the_template_and_puts_the_rest_in_the_query() {
        let r = rest(
            &served(
                "/api/v1/account/can-i/{resource}/{action}/{subresource=**}",
                "",
            ),
            json!({"resource": "applications", "action": "get", "subresource": "default/my app"}),
        )
        .unwrap();
        assert_eq!(
            r.uri,
            "/api/v1/account/can-i/applications/get/default/my%20app"
        );
        let r = rest(
            &served("/api/v1/applications/{name}", ""),
            json!({"name": "a/b", "projects": ["x", "y"], "refresh": "hard", "sel": {"k": true}}),
        )
        .unwrap();
        assert_eq!(
            r.uri,
            "/api/v1/applications/a%2Fb?projects=x&projects=y&refresh=hard&sel.k=true"
        );
        assert_eq!(r.body, None);
    }

    #[test]
    fn whole_message_body_and_missing_parameters() {
        let r = rest(
            &served("/api/v1/account/{name}/token", "*"),
            json!({"name": "ci", "expiresIn": 60}),
        )
        .unwrap();
        assert_eq!(r.uri, "/api/v1/account/ci/token");
        assert_eq!(r.body.unwrap(), br#"{"expiresIn":60}"#);
        let err = rest(&served("/api/v1/account/{name}", ""), json!({})).unwrap_err();
        assert_eq!(err, "missing parameter name");
    }
}
