//! Running an external renderer (helm, kustomize) in a render worker, with the render's limits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::redact::Redactor;
use crate::worker::supervise::{self, Bounds, Task};
use crate::worker::{EXEC_FAILED, EXIT_NOT_FOUND, Worker};

/// The binaries Plumb runs; configurable because installations differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// The `helm` binary (default: `helm` on `PATH`).
    pub helm: PathBuf,
    /// The `kustomize` binary (default: `kustomize` on `PATH`).
    pub kustomize: PathBuf,
    /// The program every render runs in, under the render limits (default: the current
    /// executable's `render-worker` subcommand, which the `plumb` binary has).
    pub worker: Worker,
}

impl Default for Tools {
    fn default() -> Self {
        Self {
            helm: PathBuf::from("helm"),
            kustomize: PathBuf::from("kustomize"),
            worker: Worker::default(),
        }
    }
}

/// What a finished run printed.
pub(crate) struct Output {
    pub stdout: String,
}

/// Runs `cmd` (already given its arguments and directory) for `tool` in the render worker, with
/// the render limits and at most `max_stdout` bytes of output.
pub(crate) fn run(
    tool: &'static str,
    label: &str,
    cmd: Command,
    worker: &Worker,
    limits: &Limits,
    max_stdout: u64,
    redactor: &Redactor,
) -> Result<Output> {
    let bounds = Bounds {
        timeout: limits.render_timeout,
        memory_bytes: limits.render_memory_bytes,
        max_stdout,
    };
    let done = supervise::run(worker, label, Task::Exec(&cmd), &bounds, redactor)?;
    if done.status.code() == Some(i32::from(EXIT_NOT_FOUND)) && done.stderr.starts_with(EXEC_FAILED)
    {
        return Err(Error::ToolMissing {
            tool,
            path: PathBuf::from(cmd.get_program()),
        });
    }
    if !done.status.success() {
        return Err(Error::RenderFailed {
            tool: label.to_owned(),
            status: done.status.to_string(),
            stderr: done.stderr,
        });
    }
    let stdout = String::from_utf8(done.stdout).map_err(|_| Error::RenderFailed {
        tool: label.to_owned(),
        status: done.status.to_string(),
        stderr: "output is not UTF-8".into(),
    })?;
    Ok(Output { stdout })
}

/// `<tool> <args>` printed version, trimmed (`v4.3.1`).
pub(crate) fn version(
    tool: &'static str,
    program: &Path,
    args: &[&str],
    worker: &Worker,
    limits: &Limits,
) -> Result<String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    // Plumb's own question to a trusted binary: a fixed time, whatever renders are allowed.
    let limits = limits.clone().render_timeout(Duration::from_secs(30));
    let out = run(
        tool,
        &format!("{tool} version"),
        cmd,
        worker,
        &limits,
        1 << 16,
        &Redactor::default(),
    )?;
    Ok(out.stdout.trim().to_owned())
}
