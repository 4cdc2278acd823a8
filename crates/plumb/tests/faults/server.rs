//! kube-apiserver restarted while a client holds `plumb server`'s watch stream open
//! (`/api/v1/stream/applications`): the stream carries on with the Applications changed after
//! the restart (or ends cleanly), and the server keeps serving new requests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use crate::*;
use plumb_testenv::Component;

/// `plumb server` as its own process, plain HTTP, no authentication (the fault is the API
/// server, not who calls).
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(ctl: &str, cache: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args([
                "server",
                "--insecure",
                "--disable-auth",
                "--listen",
                "127.0.0.1:0",
            ])
            .args(["--metrics-addr", "off", "-n", ctl])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .env("PLUMB_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (addr, _log) = plumb_testenv::process::listening_addr(&mut child);
        Self { child, addr }
    }

    /// A plain GET on a new connection: (status line, body as text).
    fn get(&self, path: &str) -> (String, String) {
        let mut tcp = TcpStream::connect(self.addr).unwrap();
        tcp.set_read_timeout(Some(DEADLINE)).unwrap();
        write!(
            tcp,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        tcp.read_to_string(&mut text).unwrap();
        let status = text.lines().next().unwrap_or_default().to_string();
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .unwrap_or_default();
        (status, body.to_string())
    }
}

/// An open watch stream, read as raw bytes (each event is one chunk holding one JSON line).
struct Stream {
    tcp: TcpStream,
    seen: String,
}

enum Next {
    Found,
    /// The server ended the stream properly (the last chunk of a chunked body).
    EndedCleanly,
}

impl Stream {
    fn open(addr: SocketAddr, path: &str) -> Self {
        let mut tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(tcp, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        Self {
            tcp,
            seen: String::new(),
        }
    }

    /// Reads until `needle` was sent (after `from`), or the stream ended.
    fn until(&mut self, needle: &str, from: usize) -> Next {
        let start = Instant::now();
        let mut buf = [0u8; 16 * 1024];
        loop {
            if self.seen[from.min(self.seen.len())..].contains(needle) {
                return Next::Found;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{needle} not seen on the stream within {DEADLINE:?}; it carried:\n{}",
                self.seen
            );
            match self.tcp.read(&mut buf) {
                Ok(0) => {
                    assert!(
                        self.seen.ends_with("0\r\n\r\n"),
                        "the stream broke off instead of ending:\n{}",
                        self.seen
                    );
                    return Next::EndedCleanly;
                }
                Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("reading the stream: {e}\n{}", self.seen),
            }
        }
    }
}

#[test]
fn the_watch_stream_survives_a_kube_apiserver_restart() {
    let _serial = serial();
    let ctl = control_namespace("ctl-srv-restart");
    let dest = env().namespace("dest-srv-restart");
    let url = "https://git.invalid/none.git";
    create_app(
        ctl.name(),
        "before",
        url,
        ".",
        "main",
        dest.name(),
        json!({}),
    );
    let cache = tempfile::tempdir().unwrap();
    let server = Server::start(ctl.name(), cache.path());

    let mut stream = Stream::open(server.addr, "/api/v1/stream/applications");
    assert!(matches!(
        stream.until("\"name\":\"before\"", 0),
        Next::Found
    ));
    assert!(stream.seen.starts_with("HTTP/1.1 200"), "{}", stream.seen);

    env()
        .restart(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    let mark = stream.seen.len();
    create_app(
        ctl.name(),
        "after",
        url,
        ".",
        "main",
        dest.name(),
        json!({}),
    );

    match stream.until("\"name\":\"after\"", mark) {
        Next::Found => {
            // Recovered: the watch resumed and carried the Application created after the
            // restart, as ADDED (it was not seen before).
            let tail = &stream.seen[mark..];
            let line = tail
                .lines()
                .find(|l| l.contains("\"name\":\"after\""))
                .unwrap_or_default();
            assert!(line.contains("\"type\":\"ADDED\""), "{line}");
        }
        Next::EndedCleanly => {}
    }

    // The server keeps serving: a new request lists both Applications. The list comes from
    // the server's watch-fed cache (from the API server while that watch is down), which may
    // take a moment to carry a change made directly in the cluster: bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, body) = server.get("/api/v1/applications");
        assert!(status.contains(" 200 "), "{status}\n{body}");
        if body.contains("\"name\":\"before\"") && body.contains("\"name\":\"after\"") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{body}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let (status, _) = server.get("/readyz");
    assert!(status.contains(" 200 "), "{status}");
    // And a new stream starts with both.
    let mut again = Stream::open(server.addr, "/api/v1/stream/applications?name=after");
    assert!(matches!(again.until("\"name\":\"after\"", 0), Next::Found));
}
