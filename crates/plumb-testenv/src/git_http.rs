//! A smart-HTTP Git server for tests: `git http-backend` (CGI) behind an HTTP/1.1 server on
//! 127.0.0.1, on a free port, with optional Basic authentication.
//!
//! ```no_run
//! let repo = plumb_testenv::git::GitRepo::named("app");
//! repo.commit(&[("a.yaml", "a: 1\n")], "first");
//! let server = plumb_testenv::git_http::GitHttpServer::serve(&repo, Some(("bot", "s3cret")));
//! let url = server.url(); // http://127.0.0.1:PORT/app
//! # let _ = url;
//! ```

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header, request};
use axum::response::{IntoResponse, Response};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::git::GitRepo;
use crate::http_server::HttpServer;
pub use crate::http_server::basic_auth;

/// The running server; stops when dropped.
#[derive(Debug)]
pub struct GitHttpServer {
    name: String,
    backend: Arc<Backend>,
    server: HttpServer,
    tls: Option<(String, (String, String))>,
}

/// How [`GitHttpServer::start`] serves.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// The exact `Authorization` header asked for ([`basic_auth`] or `Bearer <token>`).
    pub authorization: Option<String>,
    /// Without the header, answer 403 and no challenge (servers that need credentials sent up
    /// front: Argo's `forceHttpBasicAuth`), instead of 401 with `WWW-Authenticate`.
    pub no_challenge: bool,
    /// Serve HTTPS with a certificate from a test CA ([`GitHttpServer::ca_pem`]).
    pub tls: bool,
    /// With `tls`, require a client certificate signed by that CA.
    pub client_certs: bool,
    /// Serve the repository under this first path segment (`/<owner>/<name>`, as GitHub's
    /// `org/repo` URLs), for credentials that read the organization from the URL.
    pub owner: Option<String>,
}

/// What every request needs: where the repositories are, the credentials asked for, counters.
#[derive(Debug)]
struct Backend {
    root: PathBuf,
    expected: Option<String>,
    no_challenge: bool,
    owner: Option<String>,
    requests: AtomicUsize,
    rejected: AtomicUsize,
}

impl GitHttpServer {
    /// Serves `repo` (read-only, every ref) at `http://127.0.0.1:PORT/<repo dir name>`. With
    /// `auth`, requests without exactly that Basic user and password get 401.
    pub fn serve(repo: &GitRepo, auth: Option<(&str, &str)>) -> Self {
        Self::serve_on(repo, auth, 0)
    }

    /// [`GitHttpServer::serve`] on a given port (0: a free one). Fault tests stop a server by
    /// dropping it and start it again on the same [`GitHttpServer::port`], so that the URL
    /// Applications use stays the same.
    pub fn serve_on(repo: &GitRepo, auth: Option<(&str, &str)>, port: u16) -> Self {
        let opts = Options {
            authorization: auth.map(|(u, p)| basic_auth(u, p)),
            ..Default::default()
        };
        Self::start_on(repo, opts, port)
    }

    /// Serves `repo` as `opts` say, on a free port.
    pub fn start(repo: &GitRepo, opts: Options) -> Self {
        Self::start_on(repo, opts, 0)
    }

    fn start_on(repo: &GitRepo, opts: Options, port: u16) -> Self {
        let root = repo
            .path()
            .parent()
            .expect("repository has a parent directory")
            .to_path_buf();
        let name = repo
            .path()
            .file_name()
            .expect("repository has a name")
            .to_string_lossy()
            .into_owned();
        let backend = Arc::new(Backend {
            root,
            expected: opts.authorization,
            no_challenge: opts.no_challenge,
            owner: opts.owner.clone(),
            requests: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
        });
        let router = Router::new()
            .fallback(git_request)
            .with_state(Arc::clone(&backend));
        let material = opts
            .tls
            .then(|| crate::chart_repo::tls_material(opts.client_certs));
        let (config, tls) = match material {
            Some((ca, config, client)) => (Some(config), Some((ca, client))),
            None => (None, None),
        };
        Self {
            name,
            backend,
            server: HttpServer::start(port, config, router),
            tls,
        }
    }

    /// `http(s)://127.0.0.1:PORT/<name>`.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let owner = self
            .backend
            .owner
            .as_ref()
            .map(|o| format!("{o}/"))
            .unwrap_or_default();
        format!("{scheme}://{}/{owner}{}", self.server.addr(), self.name)
    }

    /// The test CA's certificate (PEM), with `tls`.
    pub fn ca_pem(&self) -> &str {
        self.tls.as_ref().map(|t| t.0.as_str()).unwrap_or_default()
    }

    /// A client certificate and key (PEM) the server accepts, with `client_certs`.
    pub fn client_identity(&self) -> (&str, &str) {
        self.tls
            .as_ref()
            .map(|t| (t.1.0.as_str(), t.1.1.as_str()))
            .unwrap_or_default()
    }

    /// The same URL with credentials embedded (`http://user:pass@127.0.0.1:PORT/<name>`).
    pub fn url_with_credentials(&self, user: &str, password: &str) -> String {
        format!(
            "http://{user}:{password}@{}/{}",
            self.server.addr(),
            self.name
        )
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// HTTP requests received so far.
    pub fn requests(&self) -> usize {
        self.backend.requests.load(Ordering::Relaxed)
    }

    /// Requests answered 401 so far.
    pub fn rejected(&self) -> usize {
        self.backend.rejected.load(Ordering::Relaxed)
    }
}

/// Any request: 401 without the expected credentials, else what `git http-backend` answers.
async fn git_request(State(backend): State<Arc<Backend>>, request: Request) -> Response {
    backend.requests.fetch_add(1, Ordering::Relaxed);
    if let Some(expected) = &backend.expected
        && request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            != Some(expected.as_bytes())
    {
        backend.rejected.fetch_add(1, Ordering::Relaxed);
        if backend.no_challenge {
            return StatusCode::FORBIDDEN.into_response();
        }
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"plumb\"")],
        )
            .into_response();
    }
    let (head, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let path = match &backend.owner {
        None => head.uri.path().to_owned(),
        Some(o) => match head.uri.path().strip_prefix(&format!("/{o}")) {
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => return StatusCode::NOT_FOUND.into_response(),
        },
    };
    match run_backend(&backend.root, &head, &path, &body).await {
        Ok(output) => cgi_response(&output),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Runs `git http-backend` for one request (the CGI variables it reads, nothing from the
/// test's environment but `PATH`) and returns what it printed.
async fn run_backend(
    root: &std::path::Path,
    head: &request::Parts,
    path: &str,
    body: &[u8],
) -> std::io::Result<Vec<u8>> {
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", head.method.as_str())
        .env("PATH_INFO", path)
        .env("QUERY_STRING", head.uri.query().unwrap_or(""))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "test")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, variable) in [
        (header::CONTENT_TYPE, "CONTENT_TYPE"),
        (HeaderName::from_static("git-protocol"), "GIT_PROTOCOL"),
        (header::CONTENT_ENCODING, "HTTP_CONTENT_ENCODING"),
    ] {
        if let Some(value) = head.headers.get(&name) {
            cgi.env(variable, String::from_utf8_lossy(value.as_bytes()).as_ref());
        }
    }
    let mut child = cgi.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(body).await?;
    }
    Ok(child.wait_with_output().await?.stdout)
}

/// The HTTP response for a CGI's output: its `Status:` (200 without one), its other headers, and
/// what follows the blank line.
fn cgi_response(output: &[u8]) -> Response {
    let split = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| output.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let (head, payload) = match split {
        Some((i, n)) => (String::from_utf8_lossy(&output[..i]), &output[i + n..]),
        None => (Default::default(), output),
    };
    let mut status = StatusCode::OK;
    let mut headers = HeaderMap::new();
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            status = value
                .split_whitespace()
                .next()
                .and_then(|code| code.parse().ok())
                .unwrap_or(status);
        } else if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.trim()),
            HeaderValue::try_from(value),
        ) && name != header::CONTENT_LENGTH
        {
            // The length is the body's own, set once by the server.
            headers.append(name, value);
        }
    }
    (status, headers, Body::from(payload.to_vec())).into_response()
}
