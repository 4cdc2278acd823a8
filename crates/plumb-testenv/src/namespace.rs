//! One isolated namespace per test.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A namespace created for one test and deleted (without waiting) when dropped.
#[derive(Debug)]
pub struct TestNamespace {
    name: String,
    kubeconfig: std::path::PathBuf,
}

impl TestNamespace {
    /// Creates the namespace on the control plane `kubeconfig` points to.
    pub(crate) fn create(kubeconfig: &Path, prefix: &str) -> Self {
        // Unique across test processes sharing one control plane: pid plus a per-process counter.
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let prefix: String = prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(40)
            .collect();
        let name = format!("{prefix}-{}-{n}", std::process::id());
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["create", "namespace", &name])
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "creating test namespace {name} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => panic!("running kubectl to create namespace {name}: {e}"),
        }
        Self {
            name,
            kubeconfig: kubeconfig.to_path_buf(),
        }
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        // Best effort: the control plane may already be gone when the process is exiting.
        let _ = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args([
                "delete",
                "namespace",
                &self.name,
                "--wait=false",
                "--ignore-not-found",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
