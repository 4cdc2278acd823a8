//! The server's logs, captured in memory for tests that check what never appears in them
//! (secrets, tokens). The subscriber is global: once installed it sees every test of this
//! binary, which is what a "never appears" check wants.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

static LOGS: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();

struct Sink;

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(logs) = LOGS.get() {
            logs.lock().expect("the log buffer").extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts capturing the server's logs at debug level (the first call installs the subscriber).
pub fn capture() {
    if LOGS.set(Mutex::new(Vec::new())).is_ok() {
        let installed = tracing_subscriber::fmt()
            .with_env_filter("plumb_server=debug,plumb_app=debug")
            .with_ansi(false)
            .with_writer(|| Sink)
            .try_init();
        assert!(installed.is_ok(), "another subscriber is installed");
    }
}

/// What was logged since [`capture`] was first called.
pub fn text() -> String {
    LOGS.get()
        .map(|l| String::from_utf8_lossy(&l.lock().expect("the log buffer")).into_owned())
        .unwrap_or_default()
}
