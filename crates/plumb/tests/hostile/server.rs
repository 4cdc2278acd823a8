//! Attacks on `plumb server`'s HTTP input (docs/security.md, "The API server"): object names that
//! would leave the API server's URL path, bodies above the limit (declared and streamed), JSON
//! nested to blow the stack, headers sent slowly (slow loris) and a flood of headers. Each is
//! refused with a clear status and the server keeps answering. Raw HTTP/1.1 over TCP, so the
//! requests are exactly what an attacker sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub(crate) struct Server {
    child: Child,
    pub addr: SocketAddr,
    _cache: tempfile::TempDir,
    _ns: Option<plumb_testenv::TestNamespace>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let ns = crate::running::env().namespace("hostile-server");
    let mut server = start_in(ns.name());
    server._ns = Some(ns);
    server
}

/// A `plumb server` (no auth) over the control namespace `ns`, with the test kustomize.
pub(crate) fn start_in(ns: &str) -> Server {
    let env = crate::running::env();
    let cache = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "server",
            "--disable-auth",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--max-body-bytes", "65536", "-n", ns])
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .arg("--kubeconfig")
        .arg(env.kubeconfig())
        .arg("--cache-dir")
        .arg(cache.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .unwrap();
        if let Some(addr) = line.strip_prefix("plumb server listening on ") {
            break addr.trim().parse().unwrap();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        addr,
        _cache: cache,
        _ns: None,
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
    s
}

/// Sends `request` and reads the answer until the server closes the connection.
pub(crate) fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = connect(addr);
    // The server may answer and close before reading all of a refused body.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn status(response: &str) -> u16 {
    response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

pub(crate) fn healthy(addr: SocketAddr) {
    let r = raw(
        addr,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status(&r), 200, "server not answering after an attack: {r}");
}

fn post(path: &str, body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

#[test]
fn server_refuses_hostile_requests_and_keeps_serving() {
    let server = start();
    let addr = server.addr;
    healthy(addr);

    // Names that would walk out of the Application URL into other resources (the server's
    // service account can read far more than Applications).
    for path in [
        "/api/v1/applications/..%2F..%2F..%2F..%2Fapi%2Fv1%2Fnamespaces%2Fdefault%2Fsecrets",
        "/api/v1/applications/..%2F..%2Fconfigmaps%2Fargocd-cm/managed-resources",
        "/api/v1/projects/..%2Fapplications",
        "/api/v1/applications/A%20B",
    ] {
        let r = raw(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        assert_eq!(status(&r), 400, "{path}: {r}");
        assert!(
            r.contains("not a valid Kubernetes object name"),
            "{path}: {r}"
        );
    }
    let r = raw(
        addr,
        &post(
            "/api/v1/applications",
            br#"{"metadata":{"name":"../../x"},"spec":{"destination":{},"project":"default"}}"#,
        ),
    );
    assert_eq!(status(&r), 400, "{r}");

    // A body declared above the limit is refused before it is read.
    let r = raw(
        addr,
        b"POST /api/v1/applications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\nConnection: close\r\n\r\n{",
    );
    assert_eq!(status(&r), 413, "{r}");
    // A streamed (chunked) body is cut at the limit too.
    let mut chunked = b"POST /api/v1/applications/x/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    let chunk = vec![b' '; 16384];
    for _ in 0..8 {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = raw(addr, &chunked);
    assert_eq!(status(&r), 413, "{r}");
    healthy(addr);

    // JSON nested far deeper than any Application: refused, no stack overflow.
    let deep = "[".repeat(60_000);
    let r = raw(addr, &post("/api/v1/applications", deep.as_bytes()));
    assert!(matches!(status(&r), 400 | 422), "{r}");
    let r = raw(addr, &post("/api/v1/applications/x/sync", deep.as_bytes()));
    assert!(matches!(status(&r), 400 | 422), "{r}");
    healthy(addr);

    // A flood of headers is refused (431) or the connection closed, and nothing else breaks.
    let mut flood = b"GET /api/version HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..2000 {
        flood.extend_from_slice(format!("X-Pad-{i}: {}\r\n", "a".repeat(100)).as_bytes());
    }
    flood.extend_from_slice(b"Connection: close\r\n\r\n");
    let r = raw(addr, &flood);
    assert!(r.is_empty() || status(&r) == 431, "{r}");
    healthy(addr);

    // Slow loris: half a request head, then silence; the server hangs up (header deadline)
    // instead of keeping the connection forever.
    let mut slow = connect(addr);
    slow.write_all(b"GET /api/version HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut out = Vec::new();
    let read = slow.read_to_end(&mut out);
    assert!(
        read.is_ok(),
        "the server kept a half-sent request open: {read:?}"
    );
    assert!(
        !String::from_utf8_lossy(&out).contains("\"Version\""),
        "answered a half-sent request"
    );
    healthy(addr);
}
