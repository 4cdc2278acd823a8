//! Running an external renderer (helm, kustomize) in a render worker, with the render's limits,
//! inside the render sandbox ([`crate::worker::sandbox`]) when the machine allows it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::redact::Redactor;
use crate::worker::Worker;
use crate::worker::protocol::{EXEC_FAILED, EXIT_NOT_FOUND};
use crate::worker::sandbox::{self, View};
use crate::worker::supervise::{self, Bounds, Task};

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

/// Where and how a tool runs: the worker, the render limits, what is redacted from its errors,
/// and the sandbox view (`None`: Plumb's own question to a trusted binary, e.g. its version).
pub(crate) struct Place<'a> {
    pub worker: &'a Worker,
    pub limits: &'a Limits,
    pub redactor: &'a Redactor,
    pub view: Option<&'a View>,
}

/// Runs `cmd` (already given its arguments, directory and environment) for `tool` in the render
/// worker, inside `place.view`, with the render limits and at most `max_stdout` bytes of output.
pub(crate) fn run(
    tool: &'static str,
    label: &str,
    cmd: Command,
    place: &Place<'_>,
    max_stdout: u64,
) -> Result<Output> {
    let bounds = Bounds {
        timeout: place.limits.render_timeout,
        memory_bytes: place.limits.render_memory_bytes,
        max_stdout,
    };
    let program = PathBuf::from(cmd.get_program());
    let cmd = match place.view {
        Some(view) => sandboxed(cmd, place.worker, view),
        None => cmd,
    };
    let done = supervise::run(
        place.worker,
        label,
        Task::Exec(&cmd),
        &bounds,
        place.redactor,
    )?;
    if done.status.code() == Some(i32::from(EXIT_NOT_FOUND)) && done.stderr.starts_with(EXEC_FAILED)
    {
        return Err(Error::ToolMissing {
            tool,
            path: program,
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

/// `cmd` run inside `view` (same program, arguments, directory and environment), or `cmd` itself
/// when this machine cannot make namespaces (logged once).
fn sandboxed(cmd: Command, worker: &Worker, view: &View) -> Command {
    let args: Vec<&std::ffi::OsStr> = cmd.get_args().collect();
    let Some(mut inner) = sandbox::command(worker, view, cmd.get_program(), &args) else {
        sandbox::warn_unconfined();
        return cmd;
    };
    if let Some(dir) = cmd.get_current_dir() {
        inner.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => inner.env(key, v),
            None => inner.env_remove(key),
        };
    }
    inner
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
    let place = Place {
        worker,
        limits: &limits,
        redactor: &Redactor::default(),
        view: None,
    };
    let out = run(tool, &format!("{tool} version"), cmd, &place, 1 << 16)?;
    Ok(out.stdout.trim().to_owned())
}
