//! The worker process: its arguments, its limits set before anything else, then Jsonnet evaluated
//! in-process or the tool run in its place.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::protocol::{
    EXEC_FAILED, EXIT_NOT_FOUND, JSONNET_ERROR, JSONNET_OK, JsonnetRequest, READY,
};
use super::{rlimits, sandbox};

/// Exit code of a worker that could not set itself up.
const EXIT_SETUP: u8 = 125;

/// The worker's entry point: `args` are what follows the worker's own command (see
/// [`Worker`](crate::Worker)).
///
/// `--memory BYTES --cpu SECONDS --parent PID` then `jsonnet` (request on standard input, answer
/// on standard output) or `exec PROGRAM ARGS...`. A worker started again inside new namespaces
/// ([`sandbox`](super::sandbox)) has `--sealed`, `--hide DIR`, `--keep DIR` and `--keep-rw DIR`
/// before its mode.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let parsed = match parse(&args) {
        Ok(p) => p,
        Err(e) => return setup_failed(&e),
    };
    if let Err(e) = rlimits::apply(&parsed.limits) {
        return setup_failed(&format!("setting resource limits: {e}"));
    }
    rlimits::prefer_oom_kill();
    if let Err(e) = rlimits::die_with_parent(parsed.parent) {
        return setup_failed(&e);
    }
    if parsed.sealed {
        // The second stage, inside the namespaces: the first stage already said it is ready.
        if let Err(e) = sandbox::seal(&parsed.view) {
            return setup_failed(&e);
        }
        return match parsed.mode {
            Mode::Exec(argv) => exec(&argv),
            Mode::Jsonnet => jsonnet(),
        };
    }
    let mut stderr = std::io::stderr().lock();
    if writeln!(stderr, "{READY}").is_err() {
        return ExitCode::from(EXIT_SETUP);
    }
    drop(stderr);
    match parsed.mode {
        Mode::Jsonnet => jsonnet(),
        Mode::Exec(argv) => exec(&argv),
    }
}

enum Mode {
    Jsonnet,
    Exec(Vec<OsString>),
}

struct Parsed {
    limits: rlimits::Limits,
    parent: Option<u32>,
    /// Running inside a sandbox's namespaces: make the mounts of `view`, print no ready line.
    sealed: bool,
    view: sandbox::View,
    mode: Mode,
}

fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let mut limits = rlimits::Limits::default();
    let mut parent = None;
    let (mut sealed, mut view) = (false, sandbox::View::default());
    let mut it = args.iter();
    let path = |flag: &str, v: Option<&OsString>| -> Result<PathBuf, String> {
        v.map(PathBuf::from)
            .ok_or_else(|| format!("{flag} needs a directory"))
    };
    let number = |flag: &str, v: Option<&OsString>| -> Result<u64, String> {
        v.and_then(|v| v.to_str())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number"))
    };
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--memory") => limits.memory_bytes = Some(number("--memory", it.next())?),
            Some("--cpu") => limits.cpu_seconds = Some(number("--cpu", it.next())?),
            Some("--parent") => {
                parent = Some(
                    u32::try_from(number("--parent", it.next())?)
                        .map_err(|_| "--parent is not a process id".to_owned())?,
                );
            }
            Some("--sealed") => sealed = true,
            Some("--hide") => view.hidden.push(path("--hide", it.next())?),
            Some("--keep") => view.keep.push(path("--keep", it.next())?),
            Some("--keep-rw") => view.keep_rw.push(path("--keep-rw", it.next())?),
            Some("jsonnet") => {
                return Ok(Parsed {
                    limits,
                    parent,
                    sealed,
                    view,
                    mode: Mode::Jsonnet,
                });
            }
            Some("exec") => {
                let argv: Vec<OsString> = it.cloned().collect();
                if argv.is_empty() {
                    return Err("exec needs a program".into());
                }
                return Ok(Parsed {
                    limits,
                    parent,
                    sealed,
                    view,
                    mode: Mode::Exec(argv),
                });
            }
            _ => {
                return Err(format!(
                    "unexpected argument {:?} (this is Plumb's internal render worker)",
                    arg
                ));
            }
        }
    }
    Err("no mode given (jsonnet or exec)".into())
}

fn setup_failed(msg: &str) -> ExitCode {
    eprintln!("plumb-render-worker: {msg}");
    ExitCode::from(EXIT_SETUP)
}

/// Evaluates the request on standard input and answers on standard output.
fn jsonnet() -> ExitCode {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut input) {
        return setup_failed(&format!("reading the request: {e}"));
    }
    let req: JsonnetRequest = match serde_json::from_slice(&input) {
        Ok(r) => r,
        Err(e) => return setup_failed(&format!("reading the request: {e}")),
    };
    drop(input);
    let answer = crate::render::jsonnet::run(
        &req.root,
        &req.file,
        &req.opts,
        req.max_stack,
        req.max_file_bytes,
    );
    let mut out = std::io::stdout().lock();
    let written = match answer {
        Ok(json) => out
            .write_all(JSONNET_OK.as_bytes())
            .and_then(|()| out.write_all(json.as_bytes())),
        Err(detail) => out
            .write_all(JSONNET_ERROR.as_bytes())
            .and_then(|()| out.write_all(detail.as_bytes())),
    };
    // A closed pipe means the caller stopped reading (output over its limit): nothing to add.
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Replaces the worker with the tool, which keeps the worker's limits, process group and streams.
fn exec(argv: &[OsString]) -> ExitCode {
    use std::os::unix::process::CommandExt as _;
    let (program, args) = match argv.split_first() {
        Some(split) => split,
        None => return setup_failed("exec needs a program"),
    };
    let err = std::process::Command::new(program).args(args).exec();
    eprintln!("{EXEC_FAILED} {}: {err}", OsStr::to_string_lossy(program));
    if err.kind() == std::io::ErrorKind::NotFound {
        ExitCode::from(EXIT_NOT_FOUND)
    } else {
        ExitCode::from(126)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_carry_limits_parent_and_mode() {
        let p = parse(&os(&[
            "--memory", "1024", "--cpu", "9", "--parent", "42", "exec", "helm", "template", ".",
        ]))
        .unwrap();
        assert_eq!(p.limits.memory_bytes, Some(1024));
        assert_eq!(p.limits.cpu_seconds, Some(9));
        assert_eq!(p.parent, Some(42));
        assert!(matches!(p.mode, Mode::Exec(ref a) if a == &os(&["helm", "template", "."])));
        assert!(matches!(
            parse(&os(&["jsonnet"])).unwrap().mode,
            Mode::Jsonnet
        ));
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            &["--memory"][..],
            &["--memory", "lots", "jsonnet"],
            &["exec"],
            &["--verbose", "jsonnet"],
            &[],
        ] {
            assert!(parse(&os(bad)).is_err(), "{bad:?}");
        }
    }
}
