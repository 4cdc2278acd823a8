//! Pod logs on the test control plane (docs/testing.md, "Pod logs").
//!
//! kwok plays the fake node's kubelet API: the apiserver's `pods/log` reaches it, and it serves the
//! file that a kwok `Logs` object (named and namespaced like the Pod) names for the container, in
//! the CRI log format the kubelet reads (`<RFC 3339 time> <stdout|stderr> F <text>`). A test writes
//! such a file ([`LogFile`]), points the Pod's containers at it ([`TestEnv::set_pod_logs`]), and
//! may append to it while a reader follows the stream.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::TestEnv;

/// Which stream a log line was written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One line of a container's log: when it was written, on which stream, and its text.
#[derive(Debug, Clone, Copy)]
pub struct LogLine<'a> {
    /// RFC 3339 time with nanoseconds, UTC (`2026-12-01T10:00:00.000000000Z`).
    pub time: &'a str,
    /// Stdout or stderr.
    pub stream: Stream,
    /// The line's text, without the newline.
    pub text: &'a str,
}

impl LogLine<'_> {
    /// The line in the CRI log format (`F`: a full line).
    pub fn to_cri(&self) -> String {
        let stream = match self.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        format!("{} {stream} F {}\n", self.time, self.text)
    }
}

/// A container log file in the CRI format, in a directory the caller owns.
#[derive(Debug, Clone)]
pub struct LogFile {
    path: PathBuf,
}

impl LogFile {
    /// Creates (or empties) `dir/name` holding `lines`.
    ///
    /// # Panics
    /// When the file cannot be written.
    pub fn create(dir: &Path, name: &str, lines: &[LogLine<'_>]) -> Self {
        let path = dir.join(name);
        let text: String = lines.iter().map(LogLine::to_cri).collect();
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("writing log file {}: {e}", path.display()));
        Self { path }
    }

    /// Appends lines, as a running container would (a follower sees them arrive).
    ///
    /// # Panics
    /// When the file cannot be written.
    pub fn append(&self, lines: &[LogLine<'_>]) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap_or_else(|e| panic!("opening log file {}: {e}", self.path.display()));
        let text: String = lines.iter().map(LogLine::to_cri).collect();
        file.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("appending to log file {}: {e}", self.path.display()));
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl TestEnv {
    /// Serves these log files as the logs of Pod `namespace/pod`: one entry per file, with the
    /// containers it is for (an empty list: every container without an entry of its own). Creates
    /// or replaces kwok's `Logs` object of the Pod (deleted with the namespace), then waits until
    /// kwok serves it (kwok reads `Logs` objects through a watch).
    ///
    /// # Panics
    /// When the object cannot be applied, or kwok does not serve the first entry within 30 s.
    pub fn set_pod_logs(&self, namespace: &str, pod: &str, files: &[(&[&str], &LogFile)]) {
        let logs: Vec<serde_json::Value> = files
            .iter()
            .map(|(containers, file)| {
                serde_json::json!({
                    "containers": containers,
                    "logsFile": file.path().display().to_string(),
                })
            })
            .collect();
        let object = serde_json::json!({
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": {"name": pod, "namespace": namespace},
            "spec": {"logs": logs},
        });
        let mut child = self
            .kubectl()
            .args(["apply", "-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running kubectl: {e}"));
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(object.to_string().as_bytes())
                .unwrap_or_else(|e| panic!("writing to kubectl: {e}"));
        }
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("running kubectl: {e}"));
        assert!(
            out.status.success(),
            "applying the kwok Logs of Pod {namespace}/{pod}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // kwok learns of the object through its watch: wait until the Pod's logs are served.
        let Some((containers, first)) = files.first() else {
            return;
        };
        // An unscheduled Pod's logs read as empty (the apiserver has no node to ask yet), so a
        // file with lines counts as served once a line comes back.
        let has_lines = std::fs::metadata(first.path()).is_ok_and(|m| m.len() > 0);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let mut cmd = self.kubectl();
            cmd.args(["-n", namespace, "logs", pod, "--tail", "1"]);
            if let Some(c) = containers.first() {
                cmd.args(["-c", c]);
            }
            let served = cmd
                .output()
                .is_ok_and(|o| o.status.success() && (!has_lines || !o.stdout.is_empty()));
            if served {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "kwok does not serve the logs of Pod {namespace}/{pod} within 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}
