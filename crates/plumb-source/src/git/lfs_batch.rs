//! The two requests of a Git LFS download (the Git LFS batch API): `POST objects/batch` for the
//! objects' download actions, then one `GET` per object, checked against its pointer.

use std::collections::HashMap;
use std::io::Read;

use std::path::PathBuf;

use reqwest::Url;
use reqwest::blocking::Client;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::credentials::{RepoCredentials, TlsCerts};
use crate::limits::Limits;

/// The batch answer, at most.
const MAX_BATCH_ANSWER: u64 = 8 << 20;
/// The media type of the batch API.
const LFS_JSON: &str = "application/vnd.git-lfs+json";

/// One pointer file: where it is (relative), and the object it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pointer {
    pub(crate) path: PathBuf,
    pub(crate) oid: String,
    pub(crate) size: u64,
}

/// What fetching needs besides the tree: the repository, its credentials, trust and limits.
pub(crate) struct Fetch<'a> {
    /// The repository URL, without credentials.
    pub(crate) repo_url: &'a str,
    pub(crate) creds: Option<&'a RepoCredentials>,
    pub(crate) certs: &'a TlsCerts,
    pub(crate) limits: &'a Limits,
}

/// Where to download one object, and the headers to send (the batch answer's).
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub(crate) href: Url,
    headers: Vec<(String, String)>,
}

/// Asks `endpoint` for every object of `found`: their download actions by oid. The
/// repository's credentials are sent only when `own_origin`.
pub(crate) fn batch(
    endpoint: &Url,
    found: &[Pointer],
    fetch: &Fetch<'_>,
    own_origin: bool,
) -> Result<HashMap<String, Action>, String> {
    let url = Url::parse(&format!(
        "{}/objects/batch",
        endpoint.as_str().trim_end_matches('/')
    ))
    .map_err(|e| e.to_string())?;
    let fail = |d: String| format!("Git LFS batch request to {url}: {d}");
    let mut seen = std::collections::BTreeSet::new();
    let objects: Vec<_> = found
        .iter()
        .filter(|p| seen.insert(p.oid.clone()))
        .map(|p| json!({"oid": p.oid, "size": p.size}))
        .collect();
    let body = json!({"operation": "download", "transfers": ["basic"], "objects": objects});
    let mut req = client(&url, fetch, own_origin)
        .map_err(fail)?
        .post(url.clone())
        .header("Accept", LFS_JSON)
        .header("Content-Type", LFS_JSON)
        .body(body.to_string());
    if own_origin {
        req = authorize(req, fetch);
    }
    let resp = req.send().map_err(|e| fail(chain(e)))?;
    let status = resp.status();
    let mut answer = Vec::new();
    resp.take(MAX_BATCH_ANSWER + 1)
        .read_to_end(&mut answer)
        .map_err(|e| fail(format!("reading the answer: {e}")))?;
    if answer.len() as u64 > MAX_BATCH_ANSWER {
        return Err(fail(format!(
            "the answer exceeds {} bytes",
            MAX_BATCH_ANSWER
        )));
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    parse_batch(&answer).map_err(fail)
}

/// The batch answer: `objects[]` with `actions.download.{href, header}` or an `error`.
fn parse_batch(answer: &[u8]) -> Result<HashMap<String, Action>, String> {
    let doc: serde_json::Value = serde_json::from_slice(answer)
        .map_err(|_| "the answer is not the batch API's JSON".to_owned())?;
    let mut out = HashMap::new();
    for o in doc["objects"].as_array().into_iter().flatten() {
        let oid = o["oid"].as_str().unwrap_or_default().to_ascii_lowercase();
        if let Some(e) = o.get("error") {
            return Err(format!(
                "object {oid}: {} (code {})",
                e["message"].as_str().unwrap_or("refused"),
                e["code"]
            ));
        }
        let download = &o["actions"]["download"];
        let Some(href) = download["href"].as_str() else {
            continue;
        };
        let href = Url::parse(href)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| format!("object {oid}: the download href is not an http(s) URL"))?;
        let headers = download["header"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        out.insert(oid, Action { href, headers });
    }
    Ok(out)
}

/// Downloads the object of `p`: at most its size, its SHA-256 checked.
pub(crate) fn download(
    action: &Action,
    p: &Pointer,
    fetch: &Fetch<'_>,
    own_origin: bool,
) -> Result<Vec<u8>, String> {
    let fail = |d: String| format!("the Git LFS object of {}: {d}", p.path.display());
    let mut req = client(&action.href, fetch, own_origin)
        .map_err(fail)?
        .get(action.href.clone());
    let given_auth = action
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    for (k, v) in &action.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    if own_origin && !given_auth {
        req = authorize(req, fetch);
    }
    let resp = req.send().map_err(|e| fail(chain(e)))?;
    if !resp.status().is_success() {
        return Err(fail(format!("HTTP {}", resp.status().as_u16())));
    }
    let mut body = Vec::new();
    resp.take(p.size.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| fail(format!("reading: {e}")))?;
    if body.len() as u64 != p.size {
        return Err(fail(format!(
            "the server sent {}{} bytes, the pointer says {}",
            body.len(),
            if body.len() as u64 > p.size { "+" } else { "" },
            p.size
        )));
    }
    if sha256_hex(&body) != p.oid {
        return Err(fail("its SHA-256 is not the pointer's oid".into()));
    }
    Ok(body)
}

/// A blocking client for `url`: the repository's TLS settings, its credentials' client
/// certificate only on its own origin, no redirects.
fn client(url: &Url, fetch: &Fetch<'_>, own_origin: bool) -> Result<Client, String> {
    let b = Client::builder()
        .timeout(fetch.limits.fetch_timeout)
        .connect_timeout(fetch.limits.fetch_timeout)
        .redirect(reqwest::redirect::Policy::none());
    let creds = fetch.creds.filter(|_| own_origin);
    crate::http_client::configure(b, url.host_str(), creds, fetch.certs)?
        .build()
        .map_err(|e| e.to_string())
}

/// The hex SHA-256 of `data`.
fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The repository's own credentials: Basic, or its bearer token.
fn authorize(
    req: reqwest::blocking::RequestBuilder,
    fetch: &Fetch<'_>,
) -> reqwest::blocking::RequestBuilder {
    let Some(c) = fetch.creds else {
        return req;
    };
    if let Some(token) = &c.bearer_token {
        return req.bearer_auth(token);
    }
    match (&c.username, &c.password) {
        (Some(u), p) => req.basic_auth(u, p.as_deref()),
        (None, Some(p)) => req.basic_auth("git", Some(p)),
        _ => req,
    }
}

/// `e` and its causes, without the URL's query (a download href may carry a signature).
fn chain(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut cur = std::error::Error::source(&e);
    while let Some(s) = cur {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_answers_are_read_as_the_api_documents_them() {
        let oid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
        let answer = json!({"transfer": "basic", "objects": [{"oid": oid, "size": 3,
            "actions": {"download": {"href": "https://lfs.example.com/o/1",
                "header": {"Authorization": "RemoteAuth x"}}}}]});
        let got = parse_batch(answer.to_string().as_bytes()).unwrap();
        assert_eq!(got[oid].href.as_str(), "https://lfs.example.com/o/1");
        assert_eq!(got[oid].headers.len(), 1);
        let refused = json!({"objects": [{"oid": oid, "size": 3,
            "error": {"code": 404, "message": "Object does not exist"}}]});
        let err = parse_batch(refused.to_string().as_bytes()).unwrap_err();
        assert!(err.contains("Object does not exist"), "{err}");
        let file = json!({"objects": [{"oid": oid, "size": 3,
            "actions": {"download": {"href": "file:///etc/passwd"}}}]});
        assert!(parse_batch(file.to_string().as_bytes()).is_err());
        assert!(parse_batch(b"<html>").is_err());
    }
}
