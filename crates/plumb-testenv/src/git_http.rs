//! A smart-HTTP Git server for tests: `git http-backend` (CGI) behind a tiny HTTP/1.1 server on
//! 127.0.0.1, on a free port, with optional Basic authentication.
//!
//! ```no_run
//! let repo = plumb_testenv::git::GitRepo::named("app");
//! repo.commit(&[("a.yaml", "a: 1\n")], "first");
//! let server = plumb_testenv::git_http::GitHttpServer::serve(&repo, Some(("bot", "s3cret")));
//! let url = server.url(); // http://127.0.0.1:PORT/app
//! # let _ = url;
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use crate::git::GitRepo;

/// The running server; stops when dropped.
#[derive(Debug)]
pub struct GitHttpServer {
    addr: SocketAddr,
    name: String,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    rejected: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
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
        let listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("binding 127.0.0.1:{port}: {e}"));
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let rejected = Arc::new(AtomicUsize::new(0));
        let expected = auth.map(|(u, p)| basic_auth(u, p));
        let (s, r, j) = (
            Arc::clone(&stop),
            Arc::clone(&requests),
            Arc::clone(&rejected),
        );
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if s.load(Ordering::Relaxed) {
                            break;
                        }
                        r.fetch_add(1, Ordering::Relaxed);
                        let (root, expected, j) = (root.clone(), expected.clone(), Arc::clone(&j));
                        std::thread::spawn(move || {
                            let _ = handle(stream, &root, expected.as_deref(), &j);
                        });
                    }
                    Err(_) => break,
                }
            }
        });
        Self {
            addr,
            name,
            stop,
            requests,
            rejected,
            handle: Some(handle),
        }
    }

    /// `http://127.0.0.1:PORT/<name>`.
    pub fn url(&self) -> String {
        format!("http://{}/{}", self.addr, self.name)
    }

    /// The same URL with credentials embedded (`http://user:pass@127.0.0.1:PORT/<name>`).
    pub fn url_with_credentials(&self, user: &str, password: &str) -> String {
        format!("http://{user}:{password}@{}/{}", self.addr, self.name)
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// HTTP requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Requests answered 401 so far.
    pub fn rejected(&self) -> usize {
        self.rejected.load(Ordering::Relaxed)
    }
}

impl Drop for GitHttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the blocking accept so the loop sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn handle(
    stream: TcpStream,
    root: &std::path::Path,
    expected: Option<&str>,
    rejected: &AtomicUsize,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut out = stream;
    if let Some(expected) = expected
        && header("authorization").as_deref() != Some(expected)
    {
        rejected.fetch_add(1, Ordering::Relaxed);
        return out.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"plumb\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let body = read_body(
        &mut reader,
        header("content-length"),
        header("transfer-encoding"),
    )?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", PathBuf::from(root))
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "test")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(ct) = header("content-type") {
        cgi.env("CONTENT_TYPE", ct);
    }
    if let Some(p) = header("git-protocol") {
        cgi.env("GIT_PROTOCOL", p);
    }
    if let Some(enc) = header("content-encoding") {
        cgi.env("HTTP_CONTENT_ENCODING", enc);
    }
    let mut child = cgi.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&body)?;
    }
    let mut output = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_end(&mut output)?;
    }
    child.wait()?;
    let split = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| output.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let (head, payload) = match split {
        Some((i, n)) => (
            String::from_utf8_lossy(&output[..i]).into_owned(),
            &output[i + n..],
        ),
        None => (String::new(), &output[..]),
    };
    let mut status = "200 OK".to_owned();
    let mut response = String::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            Some(_) => {
                response.push_str(h.trim_end());
                response.push_str("\r\n");
            }
            None => {}
        }
    }
    let head = format!(
        "HTTP/1.1 {status}\r\n{response}Content-Length: {}\r\nConnection: close\r\n\r\n",
        payload.len()
    );
    out.write_all(head.as_bytes())?;
    out.write_all(payload)?;
    out.flush()
}

fn read_body(
    reader: &mut impl BufRead,
    length: Option<String>,
    encoding: Option<String>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if encoding.is_some_and(|e| e.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length.and_then(|l| l.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(body)
}

/// The `Authorization` value of Basic credentials (RFC 7617).
pub(crate) fn basic_auth(user: &str, password: &str) -> String {
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_auth_matches_rfc_4648_vectors() {
        assert_eq!(super::basic_auth("f", ""), "Basic Zjo=");
        assert_eq!(super::basic_auth("bot", "s3cret"), "Basic Ym90OnMzY3JldA==");
    }
}
