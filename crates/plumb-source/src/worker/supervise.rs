//! The caller's side of a render: start the worker in its own process group, feed it, read what it
//! prints (bounded), wait with a deadline, and make sure nothing of it is left running.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{
    Pid, Signal, WaitId, WaitIdOptions, WaitOptions, kill_process_group, test_kill_process_group,
    waitid, waitpgid,
};

use super::program::Worker;
use super::protocol::READY;
use crate::error::{Error, Result};
use crate::limits::human_bytes;
use crate::redact::Redactor;

/// Standard error kept for messages.
const MAX_STDERR: u64 = 16 << 10;
/// How long to wait for the output pipes to close once the process group is gone (they stay open
/// only if something escaped the group).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// The bounds of one render.
#[derive(Debug, Clone)]
pub(crate) struct Bounds {
    /// Wall-clock time; the process group is killed when it passes.
    pub timeout: Duration,
    /// `RLIMIT_DATA` of the worker and what it runs.
    pub memory_bytes: u64,
    /// Standard output kept; one byte more fails the render.
    pub max_stdout: u64,
}

/// What the worker runs.
pub(crate) enum Task<'a> {
    /// Evaluate the Jsonnet request given as standard input, inside the sandbox `view` when
    /// one is given and the machine can make it (the same shape as helm's and kustomize's).
    Jsonnet(Vec<u8>, Option<&'a super::sandbox::View>),
    /// Run this command (its program, arguments, directory and environment) under the limits.
    Exec(&'a Command),
    /// Run this command with only the environment it sets (a config management plugin: nothing
    /// of the controller's environment reaches it).
    ExecIsolated(&'a Command),
}

/// A worker that ended by itself within its limits (successfully or not).
#[derive(Debug)]
pub(crate) struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// Standard error after the worker's ready line, credentials removed, truncated.
    pub stderr: String,
}

/// The worker's Jsonnet mode, inside `view` when one is given and the machine can make it: the
/// worker sets the limits, then becomes `unshare`, which starts the worker again inside the
/// namespaces to evaluate (the request still on its standard input).
fn jsonnet_mode(cmd: &mut Command, worker: &Worker, view: Option<&super::sandbox::View>) {
    match view.and_then(|v| super::sandbox::sealed_worker(worker, v)) {
        Some(sealed) => cmd.arg("exec").args(sealed).arg("jsonnet"),
        None => {
            if view.is_some() {
                super::sandbox::warn_unconfined();
            }
            cmd.arg("jsonnet")
        }
    };
}

/// Runs `task` in a worker under `bounds`. `what` names the render in errors
/// (`helm template charts/api`). Errors are the limits that fired and crashes; a tool's own
/// failure (non-zero exit) is a [`Finished`] for the caller to judge.
pub(crate) fn run(
    worker: &Worker,
    what: &str,
    task: Task<'_>,
    bounds: &Bounds,
    redactor: &Redactor,
) -> Result<Finished> {
    let (cmd, stdin) = worker_command(worker, task, bounds);
    let ran = spawn_and_wait(worker, cmd, stdin, bounds)?;
    judge(worker, what, bounds, redactor, ran)
}

/// The worker's command line for `task` under `bounds`, in a process group of its own with its
/// output piped, and the standard input to feed it (the Jsonnet request).
fn worker_command(worker: &Worker, task: Task<'_>, bounds: &Bounds) -> (Command, Option<Vec<u8>>) {
    let mut cmd = Command::new(&worker.program);
    cmd.args(&worker.args)
        .arg("--memory")
        .arg(bounds.memory_bytes.to_string())
        .arg("--cpu")
        .arg(cpu_seconds(bounds.timeout).to_string())
        .arg("--parent")
        .arg(std::process::id().to_string());
    let isolated = matches!(task, Task::ExecIsolated(_));
    let stdin = match task {
        Task::Jsonnet(request, view) => {
            jsonnet_mode(&mut cmd, worker, view);
            Some(request)
        }
        Task::Exec(tool) | Task::ExecIsolated(tool) => {
            exec_mode(&mut cmd, tool, isolated, bounds);
            None
        }
    };
    use std::os::unix::process::CommandExt as _;
    cmd.process_group(0)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    (cmd, stdin)
}

/// The worker's exec mode: `tool`'s program, arguments, directory and environment (only its
/// own environment when `isolated`).
fn exec_mode(cmd: &mut Command, tool: &Command, isolated: bool, bounds: &Bounds) {
    if isolated {
        cmd.env_clear();
    }
    cmd.arg("exec")
        .arg(tool.get_program())
        .args(tool.get_args());
    if let Some(dir) = tool.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (key, value) in tool.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    // Go programs (helm, kustomize) collect garbage harder as they near this, instead
    // of dying at the hard limit with garbage still uncollected.
    if !isolated && std::env::var_os("GOMEMLIMIT").is_none() {
        cmd.env("GOMEMLIMIT", (bounds.memory_bytes / 4 * 3).to_string());
    }
}

/// What a worker left: whether it ended before the deadline, its status and its output.
struct Ran {
    ended: bool,
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Starts the worker, feeds it, reads its output (bounded) and waits until it ends or the
/// deadline passes; then kills and reaps its whole process group either way.
fn spawn_and_wait(
    worker: &Worker,
    mut cmd: Command,
    stdin: Option<Vec<u8>>,
    bounds: &Bounds,
) -> Result<Ran> {
    let mut child = cmd.spawn().map_err(|e| Error::RenderWorker {
        program: worker.program.clone(),
        detail: format!("starting it: {e}"),
    })?;
    let pid = Pid::from_child(&child);
    // Everything below ends by killing the group; from here on nothing returns early.
    let feeder = stdin.zip(child.stdin.take()).map(|(bytes, mut pipe)| {
        std::thread::spawn(move || {
            // A worker that died early closes its end; its exit status tells why.
            let _ = pipe.write_all(&bytes);
        })
    });
    let stdout = read_bounded(child.stdout.take(), bounds.max_stdout + 1, false);
    let stderr = read_bounded(child.stderr.take(), MAX_STDERR, true);
    let ended = wait_until(pid, Instant::now() + bounds.timeout);
    // The group dies whole: on timeout, and also after a normal end (anything the tool left
    // behind). The leader is not reaped yet, so its process group id cannot have been reused.
    let _ = kill_process_group(pid, Signal::KILL);
    let status = child.wait();
    reap_group(pid);
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = stdout.recv_timeout(PIPE_GRACE).unwrap_or_default();
    let stderr = stderr.recv_timeout(PIPE_GRACE).unwrap_or_default();
    let status = status.map_err(Error::io("waiting for", &worker.program))?;
    Ok(Ran {
        ended,
        status,
        stdout,
        stderr,
    })
}

/// The limits that fired (deadline, output size, memory or CPU), a program that is not the
/// render worker, a crash; otherwise the [`Finished`] worker, its standard error cleaned.
fn judge(
    worker: &Worker,
    what: &str,
    bounds: &Bounds,
    redactor: &Redactor,
    ran: Ran,
) -> Result<Finished> {
    let Ran {
        ended,
        status,
        stdout,
        stderr,
    } = ran;
    if !ended {
        return Err(Error::RenderTimeout {
            tool: what.to_owned(),
            limit: bounds.timeout,
        });
    }
    if stdout.len() as u64 > bounds.max_stdout {
        return Err(Error::TooLarge {
            what: "rendered output",
            limit: format!("{} bytes", bounds.max_stdout),
            context: what.to_owned(),
        });
    }
    let stderr = String::from_utf8_lossy(&stderr);
    let Some(stderr) = stderr
        .strip_prefix(READY)
        .map(|rest| rest.strip_prefix('\n').unwrap_or(rest))
    else {
        return Err(Error::RenderWorker {
            program: worker.program.clone(),
            detail: format!(
                "it is not Plumb's render worker or failed to start ({status}): {}",
                first_lines(&redactor.clean(stderr.trim()))
            ),
        });
    };
    let stderr = redactor.clean(stderr.trim());
    if let Some(limit) = limit_fired(&status, &stderr, bounds) {
        return Err(Error::RenderLimit {
            what: what.to_owned(),
            limit,
        });
    }
    if let Some(signal) = killed_by(&status) {
        return Err(Error::RenderCrashed {
            what: what.to_owned(),
            detail: format!("killed by signal {signal}: {}", first_lines(&stderr)),
        });
    }
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// `RLIMIT_CPU` for a render with this deadline: a backstop above it, since a single-threaded
/// render cannot use more CPU time than wall time, and Go's collector threads rarely double it.
fn cpu_seconds(timeout: Duration) -> u64 {
    timeout.as_secs().saturating_add(1).saturating_mul(2)
}

/// Reads a pipe on its own thread, keeping at most `max` bytes. Past `max`, a `drain`ed pipe is
/// read on and discarded (standard error: a long error message must not kill the tool with
/// SIGPIPE); otherwise it is dropped, so a writer still running dies of SIGPIPE (output over its
/// limit fails the render anyway).
fn read_bounded(
    pipe: Option<impl Read + Send + 'static>,
    max: u64,
    drain: bool,
) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = (&mut pipe).take(max).read_to_end(&mut buf);
            if drain {
                let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            }
        }
        let _ = tx.send(buf);
    });
    rx
}

/// Waits until `pid` has ended (without reaping it) or `deadline` passes; true if it ended.
fn wait_until(pid: Pid, deadline: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
        ) {
            Ok(Some(_)) => return true,
            Ok(None) | Err(rustix::io::Errno::INTR) => {}
            // Not our child any more (reaped elsewhere): it has ended.
            Err(_) => return true,
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Reaps members of the killed group that were adopted by this process (when it is PID 1 in a
/// container, or a subreaper), and waits until the group is gone. Bounded: SIGKILL'd processes
/// end at once, and another reaper (init) collects those that are not ours.
fn reap_group(pgid: Pid) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        while let Ok(Some(_)) = waitpgid(pgid, WaitOptions::NOHANG) {}
        if test_kill_process_group(pgid).is_err() {
            return;
        }
        // A member that outlived the first kill (it was being created at the time).
        let _ = kill_process_group(pgid, Signal::KILL);
        std::thread::sleep(Duration::from_millis(5));
    }
    tracing::warn!(
        pgid = pgid.as_raw_pid(),
        "render processes still present after kill"
    );
}

fn killed_by(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

/// The limit a worker that ended by itself ran into, judged from how it ended and what it said.
fn limit_fired(status: &ExitStatus, stderr: &str, bounds: &Bounds) -> Option<String> {
    let memory = || {
        format!(
            "the memory limit of {} (plumb.render.memoryLimit)",
            human_bytes(bounds.memory_bytes)
        )
    };
    // Rust's allocation failure, Go's runtime (helm, kustomize) out of memory.
    let rust_oom = stderr.contains("memory allocation of ") && stderr.contains(" bytes failed");
    let go_oom = stderr.lines().any(|l| {
        l.starts_with("fatal error: ")
            && (l.contains("out of memory") || l.contains("cannot allocate memory"))
    });
    if (rust_oom || go_oom) && !status.success() {
        return Some(memory());
    }
    let stack = ["has overflowed its stack", "fatal error: stack overflow"];
    if stack.iter().any(|p| stderr.contains(p)) && !status.success() {
        return Some("the stack size limit (recursion too deep)".into());
    }
    match killed_by(status) {
        Some(s) if s == Signal::XCPU.as_raw() || s == Signal::KILL.as_raw() => Some(format!(
            "its CPU time limit of {} s, or the kernel stopped it for lack of memory",
            cpu_seconds(bounds.timeout)
        )),
        _ => None,
    }
}

/// The first lines of a tool's standard error (Go's crash dumps go on for pages).
fn first_lines(text: &str) -> String {
    const MAX: usize = 1024;
    let mut out: String = text.lines().take(8).collect::<Vec<_>>().join("\n");
    if out.len() > MAX {
        let mut cut = MAX;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_backstop_is_above_the_deadline() {
        assert_eq!(cpu_seconds(Duration::from_millis(500)), 2);
        assert_eq!(cpu_seconds(Duration::from_secs(90)), 182);
    }

    #[test]
    fn first_lines_keep_the_start_of_a_crash_dump() {
        let dump = "fatal error: x\n".repeat(50);
        assert_eq!(first_lines(&dump).lines().count(), 8);
        let long = "é".repeat(2000);
        assert!(first_lines(&long).ends_with('…'));
    }
}
