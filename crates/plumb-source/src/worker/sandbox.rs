//! The one sandbox shape every render of untrusted content runs in (helm, kustomize, Jsonnet,
//! config management plugins): new Linux namespaces made by the `unshare` tool (so no `unsafe`
//! code here).
//!
//! - a network namespace with only a loopback interface that is down: no network at all, unless
//!   the render needs it ([`View::network`]: only a plugin that opts in);
//! - a mount namespace in which the cache directory (every tenant's checkout, the manifest cache,
//!   render scratch space) and the directories holding credentials (repository SSH keys, the
//!   service account token) are hidden under empty read-only tmpfs mounts, and only the render's
//!   own inputs are shown again, read-only ([`View::keep`]), plus its own scratch directory,
//!   writable ([`View::keep_rw`]);
//! - as a non-root user, a user namespace that maps the user to root inside, which is what allows
//!   the other two without privileges.
//!
//! The second stage runs in the new namespaces: `unshare` starts the worker again with `--sealed`,
//! which makes the mounts ([`seal`], with util-linux's `mount`, which comes with `unshare`) and
//! then `exec`s the program. A directory shown again inside a hidden one is reached through a
//! handle opened before the tmpfs covers its path (`/proc/<pid>/fd/<n>`, which names the directory
//! itself, not whatever is now mounted over its path).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Once, OnceLock};

use super::program::Worker;

/// Where a pod's service account token is mounted.
pub(crate) const SERVICE_ACCOUNT_DIRS: [&str; 2] = [
    "/var/run/secrets/kubernetes.io",
    "/run/secrets/kubernetes.io",
];

/// What a sandboxed program sees of the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    /// Keep the network namespace of the caller.
    pub network: bool,
    /// Hidden under empty read-only tmpfs mounts (the cache, credentials).
    pub hidden: Vec<PathBuf>,
    /// Shown read-only, also when inside a hidden directory (the render's inputs).
    pub keep: Vec<PathBuf>,
    /// Shown writable, also when inside a hidden directory (the render's scratch space).
    pub keep_rw: Vec<PathBuf>,
}

impl View {
    /// The shape of every render: `cache` and the credential directories hidden, no network.
    pub(crate) fn hiding(cache: &Path) -> Self {
        let mut hidden = vec![cache.to_path_buf(), cache.join("git").join("keys")];
        hidden.extend(SERVICE_ACCOUNT_DIRS.iter().map(PathBuf::from));
        Self {
            hidden,
            ..Self::default()
        }
    }

    /// The same view, with `dir` shown read-only.
    pub(crate) fn keeping(mut self, dir: impl Into<PathBuf>) -> Self {
        self.keep.push(dir.into());
        self
    }

    /// The same view, with `dir` shown writable.
    pub(crate) fn keeping_rw(mut self, dir: impl Into<PathBuf>) -> Self {
        self.keep_rw.push(dir.into());
        self
    }

    /// The worker arguments that make the mounts of this view (`--sealed` and the directories).
    fn args(&self) -> Vec<OsString> {
        let mut out = vec![OsString::from("--sealed")];
        for (flag, dirs) in [
            ("--hide", &self.hidden),
            ("--keep", &self.keep),
            ("--keep-rw", &self.keep_rw),
        ] {
            for d in dirs {
                out.push(flag.into());
                out.push(d.clone().into_os_string());
            }
        }
        out
    }
}

/// The command that runs `program args` inside `view`: `unshare … -- <worker> --sealed … exec
/// program args`; `None` when this machine cannot create the namespaces (the caller then runs
/// the program without them, see [`warn_unconfined`]).
pub(crate) fn command(
    worker: &Worker,
    view: &View,
    program: &OsStr,
    args: &[&OsStr],
) -> Option<Command> {
    let mut argv = sealed_worker(worker, view)?;
    argv.push("exec".into());
    argv.push(program.to_os_string());
    argv.extend(args.iter().map(|a| a.to_os_string()));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    Some(cmd)
}

/// `unshare … -- <worker> --sealed …`: the command line, up to the worker's mode, of a worker
/// started again inside `view`'s namespaces; `None` when this machine cannot create them.
pub(crate) fn sealed_worker(worker: &Worker, view: &View) -> Option<Vec<OsString>> {
    let mut argv = unshare_prefix(view.network)?;
    argv.push(worker.program.clone().into_os_string());
    argv.extend(worker.args.iter().cloned());
    argv.extend(view.args());
    Some(argv)
}

/// Logs once per process that renders run without namespaces on this machine.
pub(crate) fn warn_unconfined() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        tracing::warn!(
            "cannot create mount and network namespaces (unshare): helm, kustomize and plugins \
             run with the controller's network and file system view; kustomize remote bases are \
             refused"
        );
    });
}

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
    // The program run inside is `mount`, which sealing needs anyway; a minimal image (Plumb's
    // own) has no `true`, and a probe running a missing program would read as "no namespaces".
    let Ok(mount) = Mount::find() else {
        tracing::warn!("no mount tool (util-linux) beside unshare: renders run without namespaces");
        return None;
    };
    let works = |flags: &[&str]| {
        Command::new(&program)
            .args(flags)
            .arg("--")
            .arg(mount.0)
            .arg("--version")
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
            "cannot create network and mount namespaces: renders and config management plugins run without them"
        );
        None
    }
}

/// True when plugins run in their own namespaces on this machine.
pub fn available() -> bool {
    unshare_prefix(false).is_some()
}

/// In the new mount namespace (whose mounts `unshare` already made private, so nothing here
/// reaches the host's): hides `view.hidden` (those that exist) under empty tmpfs mounts, shows
/// `view.keep` (read-only) and `view.keep_rw` again inside them, makes every hidden tmpfs
/// read-only, then enters the working directory again so that it is seen through the new mounts.
pub(super) fn seal(view: &View) -> Result<(), String> {
    let mount = Mount::find()?;
    // Handles opened before anything is covered: they reach the directories themselves.
    let mut kept = Vec::new();
    for (dir, writable) in view
        .keep
        .iter()
        .map(|d| (d, false))
        .chain(view.keep_rw.iter().map(|d| (d, true)))
    {
        if dir.is_dir() {
            let handle =
                std::fs::File::open(dir).map_err(|e| format!("opening {}: {e}", dir.display()))?;
            kept.push((handle, dir, writable));
        }
    }
    let mut covered = Vec::new();
    for dir in &view.hidden {
        if dir.is_dir() {
            mount.run(&[
                "-t".as_ref(),
                "tmpfs".as_ref(),
                "-o".as_ref(),
                "mode=0755,size=64k,nosuid,nodev,noexec".as_ref(),
                "none".as_ref(),
                dir.as_os_str(),
            ])?;
            covered.push(dir);
        }
    }
    for (handle, dir, writable) in &kept {
        show_again(&mount, handle, dir, *writable)?;
    }
    // The mount read-only, not the tmpfs (`remount,bind`): a superblock remount makes `mount`
    // repeat the tmpfs's options, and as a non-root user (a user namespace) the kernel refuses the
    // `uid=` it reads back ("tmpfs: Invalid uid"), so every render failed there.
    for dir in covered {
        mount.run(&[
            "-o".as_ref(),
            "remount,bind,ro,nosuid,nodev,noexec".as_ref(),
            dir.as_os_str(),
        ])?;
    }
    if let Ok(cwd) = std::env::current_dir() {
        std::env::set_current_dir(&cwd).map_err(|e| format!("entering {}: {e}", cwd.display()))?;
    }
    Ok(())
}

/// Binds the directory `handle` refers to onto its own path (created in a covering tmpfs when
/// needed), read-only unless `writable`.
fn show_again(
    mount: &Mount,
    handle: &std::fs::File,
    dir: &Path,
    writable: bool,
) -> Result<(), String> {
    use std::os::fd::AsRawFd as _;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let source = format!("/proc/{}/fd/{}", std::process::id(), handle.as_raw_fd());
    // No canonicalisation: the magic link must reach the kernel as it is, not as the path it
    // prints (which now leads into the tmpfs).
    mount.run(&[
        "--no-canonicalize".as_ref(),
        "--bind".as_ref(),
        source.as_ref(),
        dir.as_os_str(),
    ])?;
    let flags = if writable {
        "remount,bind,nosuid,nodev"
    } else {
        "remount,bind,ro,nosuid,nodev"
    };
    mount.run(&["-o".as_ref(), flags.as_ref(), dir.as_os_str()])
}

/// util-linux's `mount`, which comes with `unshare`.
struct Mount(&'static Path);

impl Mount {
    fn find() -> Result<Self, String> {
        [
            "/usr/bin/mount",
            "/bin/mount",
            "/usr/sbin/mount",
            "/sbin/mount",
        ]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Mount)
        .ok_or_else(|| "no mount tool (util-linux) beside unshare".to_owned())
    }

    fn run(&self, args: &[&OsStr]) -> Result<(), String> {
        let out = Command::new(self.0)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running {}: {e}", self.0.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "mount {:?}: {}",
                args,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_view_hides_the_cache_and_credentials_and_keeps_its_inputs() {
        let v = View::hiding(Path::new("/cache"))
            .keeping("/cache/git/trees/abc")
            .keeping_rw("/cache/tmp/r1");
        assert!(!v.network);
        let args: Vec<String> = v
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "--sealed",
                "--hide",
                "/cache",
                "--hide",
                "/cache/git/keys",
                "--hide",
                "/var/run/secrets/kubernetes.io",
                "--hide",
                "/run/secrets/kubernetes.io",
                "--keep",
                "/cache/git/trees/abc",
                "--keep-rw",
                "/cache/tmp/r1"
            ]
        );
    }
}
