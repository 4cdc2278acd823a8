//! GitHub's installation token endpoint as GitHub documents it (`POST
//! /app/installations/{id}/access_tokens`, "Create an installation access token for an app"),
//! served on 127.0.0.1 for testing GitHub App credentials. This is the documented contract, not
//! GitHub: the request's JWT is checked (RS256 signature with the App's public key, `iss` the App
//! ID, `iat` and `exp` present and at most ten minutes apart) and a valid one gets `201` with
//! `{"token", "expires_at"}`; anything else `401`. Fault modes answer with a hang, a 1 GB body or
//! garbage.
//!
//! It also lists the App's installations (`GET /app/installations`, "List installations for the
//! authenticated app": a JSON array of installations with `id` and `account.login`, paged with
//! `per_page`/`page` and a `Link: <…>; rel="next"` header), for installation-ID discovery. The
//! App is installed on the accounts given to [`GithubApi::start_installed`] (one page holds at
//! most two of them, so that paging is exercised), or on `octo-org` with the one installation of
//! [`GithubApi::start`].
//!
//! The App's RSA key is made by `openssl genrsa -traditional` (PKCS#1 PEM, as GitHub issues it).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::http_server::HttpServer;

/// How the endpoint answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// As GitHub does.
    #[default]
    Documented,
    /// Never answers.
    Hang,
    /// `201` and a body of 1 GB.
    Huge,
    /// `201` and bytes that are no JSON.
    Garbage,
}

/// The running endpoint; stops when dropped.
#[derive(Debug)]
pub struct GithubApi {
    shared: Arc<Shared>,
    server: HttpServer,
    private_key: String,
}

#[derive(Debug)]
struct Shared {
    app_id: u64,
    /// `(account login, installation id)`, in listing order.
    installations: Vec<(String, u64)>,
    token: String,
    modulus: String,
    mode: Mode,
    issued: AtomicUsize,
    refused: AtomicUsize,
}

impl GithubApi {
    /// An App `app_id` installed as `installation_id`, whose installation token is `token`.
    pub fn start(app_id: u64, installation_id: u64, token: &str, mode: Mode) -> Self {
        Self::start_installed(app_id, &[("octo-org", installation_id)], token, mode)
    }

    /// An App `app_id` installed on these accounts (`(login, installation id)`), every
    /// installation's token being `token`.
    pub fn start_installed(
        app_id: u64,
        installations: &[(&str, u64)],
        token: &str,
        mode: Mode,
    ) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let key = dir.path().join("app.pem");
        run(Command::new("openssl")
            .args(["genrsa", "-traditional", "-out"])
            .arg(&key)
            .arg("2048"));
        let modulus = run(Command::new("openssl")
            .args(["rsa", "-noout", "-modulus", "-in"])
            .arg(&key));
        let modulus = modulus.trim().trim_start_matches("Modulus=").to_owned();
        let shared = Arc::new(Shared {
            app_id,
            installations: installations
                .iter()
                .map(|(l, i)| ((*l).to_owned(), *i))
                .collect(),
            token: token.to_owned(),
            modulus,
            mode,
            issued: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        let router = Router::new()
            .route("/api/v3/app/installations/{id}/access_tokens", post(issue))
            .route("/api/v3/app/installations", get(list_installations))
            .with_state(Arc::clone(&shared));
        Self {
            shared,
            server: HttpServer::start(0, None, router),
            private_key: std::fs::read_to_string(&key).expect("App key"),
        }
    }

    /// The base URL, as `githubAppEnterpriseBaseUrl` (`http://127.0.0.1:PORT/api/v3`).
    pub fn base_url(&self) -> String {
        format!("http://{}/api/v3", self.server.addr())
    }

    /// The App's private key (PKCS#1 PEM), as `githubAppPrivateKey`.
    pub fn private_key(&self) -> &str {
        &self.private_key
    }

    /// Tokens issued so far.
    pub fn issued(&self) -> usize {
        self.shared.issued.load(Ordering::Relaxed)
    }

    /// Requests refused (bad JWT, wrong installation) so far.
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::Relaxed)
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("running openssl");
    assert!(
        out.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[derive(serde::Deserialize)]
struct Claims {
    iat: u64,
    exp: u64,
}

/// `POST /app/installations/{id}/access_tokens`.
async fn issue(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Response {
    match shared.mode {
        Mode::Hang => std::future::pending::<()>().await,
        Mode::Garbage => return (StatusCode::CREATED, "\u{0}<html>not json").into_response(),
        Mode::Huge => {
            let chunk = axum::body::Bytes::from(vec![b'{'; 1 << 20]);
            let stream = futures::stream::iter(
                std::iter::repeat_n(chunk, 1024).map(Ok::<_, std::io::Error>),
            );
            return (StatusCode::CREATED, Body::from_stream(stream)).into_response();
        }
        Mode::Documented => {}
    }
    if !shared.installations.iter().any(|(_, i)| *i == id) || !shared.valid(&headers) {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(serde_json::json!({"message": "A JSON web token could not be decoded"})),
        )
            .into_response();
    }
    shared.issued.fetch_add(1, Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let expires =
        jiff::Timestamp::from_second(i64::try_from(now).expect("time") + 3600).expect("timestamp");
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        serde_json::json!({
            "token": shared.token,
            "expires_at": expires.to_string(),
            "permissions": {"contents": "read", "metadata": "read"},
            "repository_selection": "selected"
        })
        .to_string(),
    )
        .into_response()
}

/// The paging parameters GitHub documents.
#[derive(serde::Deserialize)]
struct Paging {
    per_page: Option<usize>,
    page: Option<usize>,
}

/// At most this many installations per page, whatever `per_page` asks (GitHub's own cap is 100).
const PAGE_CAP: usize = 2;

/// `GET /app/installations`.
async fn list_installations(
    State(shared): State<Arc<Shared>>,
    Query(paging): Query<Paging>,
    headers: HeaderMap,
) -> Response {
    match shared.mode {
        Mode::Hang => std::future::pending::<()>().await,
        Mode::Garbage => return (StatusCode::OK, "\u{0}<html>not json").into_response(),
        Mode::Huge => return huge(StatusCode::OK),
        Mode::Documented => {}
    }
    if !shared.valid(&headers) {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(serde_json::json!({"message": "A JSON web token could not be decoded"})),
        )
            .into_response();
    }
    let per_page = paging.per_page.unwrap_or(30).clamp(1, PAGE_CAP);
    let page = paging.page.unwrap_or(1).max(1);
    let items: Vec<serde_json::Value> = shared
        .installations
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|(login, id)| {
            serde_json::json!({"id": id, "app_id": shared.app_id, "target_type": "Organization",
                "account": {"login": login, "id": id + 1000, "type": "Organization"},
                "repository_selection": "all"})
        })
        .collect();
    let mut response = axum::Json(items).into_response();
    if page * per_page < shared.installations.len() {
        let link = format!(
            "</api/v3/app/installations?per_page={per_page}&page={}>; rel=\"next\"",
            page + 1
        );
        if let Ok(v) = header::HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, v);
        }
    }
    response
}

/// A 1 GB body.
fn huge(status: StatusCode) -> Response {
    let chunk = axum::body::Bytes::from(vec![b'{'; 1 << 20]);
    let stream =
        futures::stream::iter(std::iter::repeat_n(chunk, 1024).map(Ok::<_, std::io::Error>));
    (status, Body::from_stream(stream)).into_response()
}

impl Shared {
    /// The request's `Authorization: Bearer <JWT>` is signed by the App and well formed.
    fn valid(&self, headers: &HeaderMap) -> bool {
        use base64::Engine;
        let Some(jwt) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return false;
        };
        let n: Vec<u8> = (0..self.modulus.len() / 2)
            .filter_map(|i| u8::from_str_radix(&self.modulus[2 * i..2 * i + 2], 16).ok())
            .collect();
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let Ok(key) = jsonwebtoken::DecodingKey::from_rsa_components(
            &b64.encode(n),
            &b64.encode([1u8, 0, 1]),
        ) else {
            return false;
        };
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        validation.set_issuer(&[self.app_id.to_string()]);
        validation.set_required_spec_claims(&["iat", "exp", "iss"]);
        jsonwebtoken::decode::<Claims>(jwt, &key, &validation)
            .is_ok_and(|d| d.claims.exp > d.claims.iat && d.claims.exp - d.claims.iat <= 600)
    }
}
