//! The web UI: the bundle embedded at build time (see `build.rs`) served at `/`, with Argo CD's
//! page paths (`/applications`, `/applications/<namespace>/<name>`, `/settings/projects`)
//! answered by `index.html` so the single-page application routes them itself.

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::error::Error;

include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// Shown when the binary was built without a bundle: what to run, never a blank page.
const NOT_BUILT: &str = "<!doctype html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Plumb: web UI not built</title></head>
<body style=\"font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5\">
<h1>The web UI is not built into this plumb binary</h1>
<p>This <code>plumb server</code> was compiled without the UI bundle (<code>ui/dist</code>).
The REST API under <code>/api/</code> works. To get the UI, build the bundle and then plumb:</p>
<pre>scripts/ui-build      # npm ci and the bundle build into ui/dist
cargo build -p plumb  # embeds ui/dist</pre>
</body></html>
";

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json" | "map") => "application/json",
        Some("woff2") => "font/woff2",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn find(path: &str) -> Option<&'static [u8]> {
    ASSETS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, bytes)| *bytes)
}

/// Whether `path` is a page or asset of the UI (not the API, webhooks or probes): such GET
/// requests need no token, the pages log in through the API themselves.
pub(crate) fn is_ui_path(method: &Method, path: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && !path.starts_with("/api/")
        && path != "/api"
        && !matches!(path, "/healthz" | "/readyz" | "/metrics")
}

fn page(
    status: StatusCode,
    ctype: &'static str,
    cache: &'static str,
    body: &'static [u8],
) -> Response {
    let mut resp = (status, Body::from(body)).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    // As argocd-server: the UI may not be framed by other sites (clickjacking).
    h.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static("sameorigin"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'self';"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// The fallback of the router: UI assets and pages for GET requests outside the API, Argo's
/// JSON 404 for everything else.
pub(crate) async fn fallback(method: Method, uri: Uri) -> Response {
    let path = uri.path();
    if !is_ui_path(&method, path) {
        return Error::NotFound("Not Found".into()).into_response();
    }
    let Some(index) = find("index.html") else {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/html; charset=utf-8",
            "no-store",
            NOT_BUILT.as_bytes(),
        );
    };
    let rel = path.trim_start_matches('/');
    if !rel.is_empty()
        && let Some(bytes) = find(rel)
    {
        // Vite names built assets by content hash: they never change under the same name.
        let cache = if rel.starts_with("assets/") {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        return page(StatusCode::OK, content_type(rel), cache, bytes);
    }
    if rel.starts_with("assets/") {
        // A missing hashed asset (an old page after an upgrade): a 404, not the index as script.
        return Error::NotFound(format!("{path} is not part of this UI bundle")).into_response();
    }
    page(
        StatusCode::OK,
        "text/html; charset=utf-8",
        "no-cache",
        index,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_probes_and_writes_are_not_ui_paths() {
        assert!(is_ui_path(&Method::GET, "/"));
        assert!(is_ui_path(&Method::GET, "/applications/argocd/web"));
        assert!(is_ui_path(&Method::HEAD, "/settings/projects"));
        assert!(!is_ui_path(&Method::GET, "/api/v1/applications"));
        assert!(!is_ui_path(&Method::GET, "/api"));
        assert!(!is_ui_path(&Method::GET, "/healthz"));
        assert!(!is_ui_path(&Method::POST, "/applications"));
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(
            content_type("assets/index-abc.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("assets/x.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("noext"), "application/octet-stream");
    }
}
