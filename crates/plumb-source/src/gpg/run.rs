//! Running the `gpg` binary on a private home, bounded: a time limit after which it is killed,
//! and at most [`MAX_OUTPUT`] bytes of output kept (more is an error).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long one `gpg` run may take.
pub(crate) const GPG_TIMEOUT: Duration = Duration::from_secs(30);
/// The most output one `gpg` run may print, per stream.
pub(crate) const MAX_OUTPUT: u64 = 1 << 20;
/// The program run: `PLUMB_GPG` when set, else `gpg` on `PATH`.
fn program() -> std::ffi::OsString {
    std::env::var_os("PLUMB_GPG").unwrap_or_else(|| "gpg".into())
}

/// What a finished run printed.
pub(crate) struct Ran {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `gpg` with `args` on the home `home` (no agent, no key server, no trust database
/// decisions: every key of the home is the configuration's), `stdin` fed to it.
pub(crate) fn gpg(home: &Path, args: &[&str], stdin: &[u8]) -> Result<Ran, String> {
    let mut child = Command::new(program())
        .arg("--homedir")
        .arg(home)
        .args([
            "--batch",
            "--no-tty",
            "--no-autostart",
            "--no-permission-warning",
            "--no-auto-key-retrieve",
            "--trust-model",
            "always",
        ])
        .args(args)
        .env("LC_ALL", "C")
        .env_remove("GPG_AGENT_INFO")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running gpg: {e}"))?;
    let mut input = child.stdin.take();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        if let Some(mut i) = input.take() {
            let _ = i.write_all(&data);
        }
    });
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(GPG_TIMEOUT) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(format!("waiting for gpg: {e}")),
        Err(_) => {
            kill(pid);
            let _ = waiter.join();
            return Err(format!(
                "gpg did not finish within {GPG_TIMEOUT:?} and was stopped"
            ));
        }
    };
    let _ = waiter.join();
    let _ = feeder.join();
    let stdout = collect(out)?;
    let stderr = collect(err)?;
    Ok(Ran {
        status,
        stdout,
        stderr,
    })
}

type Reader = std::thread::JoinHandle<Result<Vec<u8>, String>>;

fn reader(stream: Option<impl Read + Send + 'static>) -> Reader {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stream {
            s.take(MAX_OUTPUT + 1)
                .read_to_end(&mut buf)
                .map_err(|e| format!("reading gpg's output: {e}"))?;
        }
        if buf.len() as u64 > MAX_OUTPUT {
            return Err(format!("gpg printed more than {MAX_OUTPUT} bytes"));
        }
        Ok(buf)
    })
}

fn collect(r: Reader) -> Result<String, String> {
    let bytes = r
        .join()
        .map_err(|_| "reading gpg's output failed".to_string())??;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn kill(pid: u32) {
    if let Ok(pid) = i32::try_from(pid)
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}
