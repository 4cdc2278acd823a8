//! A config management plugin runs an administrator's program on a tenant's repository, inside
//! the controller's container. Argo CD gives each plugin a sidecar container of its own; Plumb
//! gives it new Linux namespaces instead, made by the `unshare` tool (so no `unsafe` code here):
//!
//! - a network namespace with only a loopback interface that is down: no network at all, unless
//!   the plugin opts in;
//! - a mount namespace in which the cache directory (every checkout, the manifest cache) is
//!   read-only and the directories holding credentials (repository SSH keys, the service account
//!   token) are hidden under empty read-only tmpfs mounts;
//! - as a non-root user, a user namespace that maps the user to root inside, which is what allows
//!   the other two without privileges.
//!
//! The second stage runs in the new namespaces: `unshare` starts the worker again with `--sealed`,
//! which makes the mounts ([`seal`], with util-linux's `mount`, which comes with `unshare`) and
//! then `exec`s the plugin's program.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Where a pod's service account token is mounted.
pub(crate) const SERVICE_ACCOUNT_DIRS: [&str; 2] = [
    "/var/run/secrets/kubernetes.io",
    "/run/secrets/kubernetes.io",
];

/// The `unshare` command line (program and flags, ending in `--`) that creates the namespaces,
/// or `None` when this machine cannot create them (no `unshare`, or namespaces not permitted).
/// Probed once per process.
pub(crate) fn unshare_prefix(network: bool) -> Option<Vec<OsString>> {
    static PROBED: OnceLock<Option<(PathBuf, bool)>> = OnceLock::new();
    let (program, as_root) = PROBED.get_or_init(probe).as_ref()?;
    let mut argv = vec![program.clone().into_os_string()];
    if !as_root {
        argv.extend(["--user", "--map-root-user"].map(OsString::from));
    }
    argv.push("--mount".into());
    if !network {
        argv.push("--net".into());
    }
    argv.push("--".into());
    Some(argv)
}

fn probe() -> Option<(PathBuf, bool)> {
    let program = ["/usr/bin/unshare", "/bin/unshare", "/usr/sbin/unshare"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())?;
    let works = |flags: &[&str]| {
        Command::new(&program)
            .args(flags)
            .args(["--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works(&["--mount", "--net"]) {
        Some((program, true))
    } else if works(&["--user", "--map-root-user", "--mount", "--net"]) {
        Some((program, false))
    } else {
        tracing::warn!(
            unshare = %program.display(),
            "cannot create network and mount namespaces: config management plugins run without them"
        );
        None
    }
}

/// True when plugins run in their own namespaces on this machine.
pub fn available() -> bool {
    unshare_prefix(false).is_some()
}

/// In the new mount namespace (whose mounts `unshare` already made private, so nothing here
/// reaches the host's): makes `readonly` read-only and hides `hidden` (those that exist), with
/// the `mount` tool, then enters the working directory again so that it is seen through the new
/// mounts.
pub(super) fn seal(readonly: &[PathBuf], hidden: &[PathBuf]) -> Result<(), String> {
    let mount = [
        "/usr/bin/mount",
        "/bin/mount",
        "/usr/sbin/mount",
        "/sbin/mount",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.is_file())
    .ok_or("no mount tool (util-linux) beside unshare")?;
    let run = |args: &[&std::ffi::OsStr]| -> Result<(), String> {
        let out = Command::new(mount)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running {}: {e}", mount.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "mount {:?}: {}",
                args,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    for dir in readonly.iter().filter(|d| d.is_dir()) {
        run(&["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()])?;
        run(&["-o".as_ref(), "remount,bind,ro".as_ref(), dir.as_os_str()])?;
    }
    for dir in hidden.iter().filter(|d| d.is_dir()) {
        run(&[
            "-t".as_ref(),
            "tmpfs".as_ref(),
            "-o".as_ref(),
            "ro,nosuid,nodev,noexec,size=4k".as_ref(),
            "none".as_ref(),
            dir.as_os_str(),
        ])?;
    }
    if let Ok(cwd) = std::env::current_dir() {
        std::env::set_current_dir(&cwd).map_err(|e| format!("entering {}: {e}", cwd.display()))?;
    }
    Ok(())
}
