//! Running an external renderer (helm, kustomize) with a time limit and an output limit.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::{Error, Result};
use crate::redact::Redactor;

/// Standard error kept for error messages.
const MAX_STDERR: usize = 16 << 10;

/// The binaries Plumb runs; configurable because installations differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// The `helm` binary (default: `helm` on `PATH`).
    pub helm: PathBuf,
    /// The `kustomize` binary (default: `kustomize` on `PATH`).
    pub kustomize: PathBuf,
}

impl Default for Tools {
    fn default() -> Self {
        Self {
            helm: PathBuf::from("helm"),
            kustomize: PathBuf::from("kustomize"),
        }
    }
}

/// What a finished run printed.
pub(crate) struct Output {
    pub stdout: String,
}

/// Runs `cmd` (already given its arguments and directory) for `tool`.
pub(crate) fn run(
    tool: &'static str,
    label: &str,
    mut cmd: Command,
    timeout: Duration,
    max_stdout: u64,
    redactor: &Redactor,
) -> Result<Output> {
    let program = PathBuf::from(cmd.get_program());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::ToolMissing {
                tool,
                path: program.clone(),
            }
        } else {
            Error::io("running", program.clone())(e)
        }
    })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || -> (Vec<u8>, bool) {
        let Some(pipe) = stdout else {
            return (Vec::new(), false);
        };
        let mut buf = Vec::new();
        // Reading one byte past the limit tells "exactly at the limit" from "over it"; dropping
        // the pipe then makes the tool die of SIGPIPE instead of writing on.
        let read = pipe.take(max_stdout + 1).read_to_end(&mut buf);
        let over = read.is_ok() && buf.len() as u64 > max_stdout;
        (buf, over)
    });
    let err_reader = std::thread::spawn(move || -> Vec<u8> {
        let Some(pipe) = stderr else {
            return Vec::new();
        };
        let mut buf = Vec::new();
        let _ = pipe.take(MAX_STDERR as u64).read_to_end(&mut buf);
        buf
    });
    let status = match child
        .wait_timeout(timeout)
        .map_err(Error::io("waiting for", program.clone()))?
    {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::RenderTimeout {
                tool: label.to_owned(),
                limit: timeout,
            });
        }
    };
    let (stdout, over) = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if over {
        return Err(Error::TooLarge {
            what: "rendered output",
            limit: format!("{max_stdout} bytes"),
            context: label.to_owned(),
        });
    }
    if !status.success() {
        return Err(Error::RenderFailed {
            tool: label.to_owned(),
            status: status.to_string(),
            stderr: redactor.clean(String::from_utf8_lossy(&stderr).trim()),
        });
    }
    let stdout = String::from_utf8(stdout).map_err(|_| Error::RenderFailed {
        tool: label.to_owned(),
        status: status.to_string(),
        stderr: "output is not UTF-8".into(),
    })?;
    Ok(Output { stdout })
}

/// `<tool> <args>` printed version, trimmed (`v4.3.1`).
pub(crate) fn version(tool: &'static str, program: &Path, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = run(
        tool,
        &format!("{tool} version"),
        cmd,
        Duration::from_secs(30),
        1 << 16,
        &Redactor::default(),
    )?;
    Ok(out.stdout.trim().to_owned())
}
