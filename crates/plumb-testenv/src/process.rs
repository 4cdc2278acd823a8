//! Helpers every test binary of the `plumb` crate uses to drive processes: a command with input
//! on stdin, `kubectl apply` of one object, the admin password of a control namespace, and the
//! address a `plumb server` child says it listens on. They panic with a message on failure, as a
//! test wants.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;

use crate::TestEnv;

/// Runs `cmd` with `input` on stdin and returns what it printed.
pub fn output_with_stdin(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        // A command that exits without reading its input is not an error here.
        let _ = stdin.write_all(input.as_bytes());
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for {cmd:?}: {e}"))
}

/// `kubectl apply -f -` of one object; panics with kubectl's error when it fails.
pub fn kubectl_apply(env: &TestEnv, obj: &serde_json::Value) {
    let out = output_with_stdin(env.kubectl().args(["apply", "-f", "-"]), &obj.to_string());
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `admin` password `plumb server` wrote to `argocd-initial-admin-secret` in `ns` (as Argo
/// CD does), waiting up to a minute for the server to write it.
pub fn initial_admin_password(env: &TestEnv, ns: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = env
            .kubectl()
            .args([
                "-n",
                ns,
                "get",
                "secret",
                "argocd-initial-admin-secret",
                "-o",
                "jsonpath={.data.password}",
            ])
            .output()
            .unwrap_or_else(|e| panic!("running kubectl: {e}"));
        if out.status.success() && !out.stdout.is_empty() {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(String::from_utf8_lossy(&out.stdout).trim())
                .unwrap_or_else(|e| panic!("argocd-initial-admin-secret is not base64: {e}"));
            return String::from_utf8(raw)
                .unwrap_or_else(|e| panic!("the admin password is not UTF-8: {e}"));
        }
        assert!(
            Instant::now() < deadline,
            "no argocd-initial-admin-secret in {ns}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a server child printed on stderr after it started listening, kept so a test can check
/// what it logged (and so the child never blocks on a full pipe).
#[derive(Debug, Clone, Default)]
pub struct LogTail(Arc<Mutex<String>>);

impl LogTail {
    /// Everything read so far.
    pub fn text(&self) -> String {
        self.0.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

/// Reads the piped stderr of a `plumb server` child until it prints `plumb server listening on
/// ADDR`; returns ADDR and the rest of its stderr as it comes.
pub fn listening_addr(child: &mut Child) -> (SocketAddr, LogTail) {
    let stderr = child
        .stderr
        .take()
        .unwrap_or_else(|| panic!("the server's stderr is not piped"));
    let mut lines = BufReader::new(stderr).lines();
    let mut before = String::new();
    let addr = loop {
        let line = match lines.next() {
            Some(Ok(line)) => line,
            _ => panic!("server exited before listening:\n{before}"),
        };
        if let Some(addr) = line.strip_prefix("plumb server listening on ") {
            break addr
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("listening address {addr}: {e}"));
        }
        before.push_str(&line);
        before.push('\n');
    };
    let tail = LogTail(Arc::new(Mutex::new(before)));
    let kept = tail.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Ok(mut t) = kept.0.lock() {
                t.push_str(&line);
                t.push('\n');
            }
        }
    });
    (addr, tail)
}
