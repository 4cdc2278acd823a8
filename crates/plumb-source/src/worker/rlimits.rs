//! The limits a render worker puts on itself before it reads any input or starts any tool.
//!
//! Set in the worker (not between `fork` and `exec` by the caller) so that no `unsafe` pre-exec
//! hook is needed: the worker lowers its own soft and hard limits, and whatever it `exec`s
//! inherits them and cannot raise them again.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// What to bound.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Limits {
    /// `RLIMIT_DATA`: the process's data segment and private writable mappings, which is where
    /// both Rust's and Go's heaps live (unlike `RLIMIT_AS`, it does not count the large address
    /// ranges the Go runtime reserves without using).
    pub memory_bytes: Option<u64>,
    /// `RLIMIT_CPU`: the soft limit sends SIGXCPU, one second later the hard limit SIGKILL (a Go
    /// program ignores SIGXCPU). A backstop: the caller's deadline normally fires first.
    pub cpu_seconds: Option<u64>,
}

/// Lowers this process's limits (never raises one above its current hard limit).
pub(super) fn apply(limits: &Limits) -> std::io::Result<()> {
    if let Some(bytes) = limits.memory_bytes {
        lower(Resource::Data, bytes, bytes)?;
    }
    if let Some(secs) = limits.cpu_seconds {
        lower(Resource::Cpu, secs, secs.saturating_add(1))?;
    }
    // A crashed render must not leave a core file of its memory (which may hold repository data)
    // on the controller's disk.
    lower(Resource::Core, 0, 0)?;
    Ok(())
}

fn lower(resource: Resource, soft: u64, hard: u64) -> std::io::Result<()> {
    let current = getrlimit(resource);
    let cap = |v: u64, limit: Option<u64>| limit.map_or(v, |l| v.min(l));
    let hard = cap(hard, current.maximum);
    setrlimit(
        resource,
        Rlimit {
            current: Some(soft.min(hard)),
            maximum: Some(hard),
        },
    )
    .map_err(std::io::Error::from)
}

/// Makes this process (and what it `exec`s) the first one the kernel's OOM killer picks.
///
/// The render memory limit is per render, and several renders can run at once: when together
/// they exhaust the controller's cgroup (its Pod's memory limit), the kernel should end a render
/// (one Application's `ComparisonError`) rather than the controller (every Application).
/// Raising one's own `oom_score_adj` needs no privilege; where `/proc` is not writable the
/// render still runs, only without the preference.
pub(super) fn prefer_oom_kill() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let _ = std::fs::write("/proc/self/oom_score_adj", "1000");
    }
}

/// Asks the kernel to kill this process (and what it `exec`s) when the thread that started it
/// ends, so a render never outlives a crashed or killed caller.
pub(super) fn die_with_parent(parent: Option<u32>) -> Result<(), String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
            .map_err(|e| format!("asking to die with the parent: {e}"))?;
        // The parent may have ended before the request: then this process was already adopted.
        if let Some(expected) = parent
            && rustix::process::getppid().map(|p| p.as_raw_pid()) != i32::try_from(expected).ok()
        {
            return Err("the caller has already ended".into());
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = parent;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_never_rise_above_the_hard_limit() {
        // Run in a child process: lowering a hard limit cannot be undone.
        let exe = std::env::current_exe().unwrap();
        if std::env::var_os("PLUMB_RLIMIT_PROBE").is_none() {
            let out = std::process::Command::new(exe)
                .args([
                    "--exact",
                    "worker::rlimits::tests::limits_never_rise_above_the_hard_limit",
                    "--nocapture",
                ])
                .env("PLUMB_RLIMIT_PROBE", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
            return;
        }
        apply(&Limits {
            memory_bytes: Some(1 << 40),
            cpu_seconds: Some(3600),
        })
        .unwrap();
        apply(&Limits {
            memory_bytes: Some(8 << 30),
            cpu_seconds: None,
        })
        .unwrap();
        let data = getrlimit(Resource::Data);
        assert_eq!((data.current, data.maximum), (Some(8 << 30), Some(8 << 30)));
        // Asking for more again keeps the lower limit.
        apply(&Limits {
            memory_bytes: Some(16 << 30),
            cpu_seconds: None,
        })
        .unwrap();
        assert_eq!(getrlimit(Resource::Data).maximum, Some(8 << 30));
        let cpu = getrlimit(Resource::Cpu);
        assert_eq!((cpu.current, cpu.maximum), (Some(3600), Some(3601)));
        assert_eq!(getrlimit(Resource::Core).maximum, Some(0));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_render_is_the_first_process_the_oom_killer_picks() {
        // Run in a child process: the score cannot be lowered again without privilege.
        let exe = std::env::current_exe().unwrap();
        if std::env::var_os("PLUMB_OOM_PROBE").is_none() {
            let out = std::process::Command::new(exe)
                .args([
                    "--exact",
                    "worker::rlimits::tests::a_render_is_the_first_process_the_oom_killer_picks",
                    "--nocapture",
                ])
                .env("PLUMB_OOM_PROBE", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
            return;
        }
        prefer_oom_kill();
        let score = std::fs::read_to_string("/proc/self/oom_score_adj").unwrap();
        assert_eq!(score.trim(), "1000");
        // A child (what the worker execs: helm, kustomize) inherits it.
        let child = std::process::Command::new("cat")
            .arg("/proc/self/oom_score_adj")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&child.stdout).trim(), "1000");
    }
}
