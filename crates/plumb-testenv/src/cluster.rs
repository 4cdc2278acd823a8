//! The control plane a test process talks to: attached from `PLUMB_TEST_KUBECONFIG`, or started
//! once per process with `scripts/testenv up` and torn down when the process exits.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Why the test control plane is not available.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `scripts/testenv up` could not be run or failed.
    #[error("starting the test control plane with {script} failed: {stderr}")]
    Start {
        /// The script that was run.
        script: String,
        /// What it printed on stderr (its last lines name the failing component).
        stderr: String,
    },
    /// The kubeconfig named by `PLUMB_TEST_KUBECONFIG` is missing.
    #[error("PLUMB_TEST_KUBECONFIG names {0}, which does not exist")]
    MissingKubeconfig(PathBuf),
    /// The kube client could not be configured from the kubeconfig.
    #[error("building a Kubernetes client from {path}")]
    Client {
        /// The kubeconfig file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A running control plane and how to reach it.
#[derive(Debug)]
pub struct TestEnv {
    kubeconfig: PathBuf,
}

static SHARED: OnceLock<TestEnv> = OnceLock::new();

impl TestEnv {
    /// The control plane of this test process, started on first use.
    ///
    /// # Panics
    /// When no control plane can be had: tests that need one fail loudly, never skip.
    pub fn shared() -> &'static TestEnv {
        SHARED.get_or_init(|| match Self::start() {
            Ok(env) => env,
            Err(err) => panic!("no test control plane: {err}"),
        })
    }

    fn start() -> Result<Self, Error> {
        if let Some(path) = std::env::var_os("PLUMB_TEST_KUBECONFIG") {
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(Error::MissingKubeconfig(path));
            }
            return Ok(Self { kubeconfig: path });
        }
        // A fresh path per process; `scripts/testenv` creates it, and the reaper it starts with
        // --owner-pid stops the processes and removes the directory when this process exits.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("plumb-testenv-{}-{nanos}", std::process::id()));
        let script = repo_root().join("scripts/testenv");
        let out = Command::new(&script)
            .arg("up")
            .arg("--state")
            .arg(&dir)
            .arg("--owner-pid")
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::Start {
                script: script.display().to_string(),
                stderr: e.to_string(),
            })?;
        if !out.status.success() {
            return Err(Error::Start {
                script: script.display().to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(Self {
            kubeconfig: dir.join("kubeconfig"),
        })
    }

    /// The kubeconfig file (admin credentials).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A kube client for this control plane.
    ///
    /// # Panics
    /// When the kubeconfig cannot be read (the test cannot go on without a client).
    pub async fn client(&self) -> kube::Client {
        match self.try_client().await {
            Ok(c) => c,
            Err(err) => panic!("{err}"),
        }
    }

    /// A kube client for this control plane.
    pub async fn try_client(&self) -> Result<kube::Client, Error> {
        let boxed = |e: Box<dyn std::error::Error + Send + Sync>| Error::Client {
            path: self.kubeconfig.clone(),
            source: e,
        };
        let kc =
            kube::config::Kubeconfig::read_from(&self.kubeconfig).map_err(|e| boxed(e.into()))?;
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .map_err(|e| boxed(e.into()))?;
        // Both ring and aws-lc-rs are in the dependency graph; rustls needs to be told.
        let _ = rustls::crypto::ring::default_provider().install_default();
        kube::Client::try_from(config).map_err(|e| boxed(e.into()))
    }

    /// `kubectl` bound to this control plane.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig").arg(&self.kubeconfig);
        cmd
    }

    /// Applies Plumb's CRDs (`deploy/crds`) and waits until each is Established.
    ///
    /// # Panics
    /// When they cannot be applied or are not Established within 60 s.
    pub fn install_plumb_crds(&self) {
        // Tests of one process install them concurrently; on a fresh control plane two creates
        // of the same CRD race (`AlreadyExists`). One at a time, and once more after a conflict
        // with another process.
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = repo_root().join("deploy/crds");
        let apply = || {
            self.kubectl()
                .args(["apply", "-o", "name", "-f"])
                .arg(&dir)
                .output()
        };
        let out = match apply() {
            Ok(o) if o.status.success() => Ok(o),
            _ => apply(),
        };
        let out = match out {
            Ok(o) if o.status.success() => o,
            Ok(o) => panic!(
                "applying {}: {}",
                dir.display(),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => panic!("running kubectl: {e}"),
        };
        // `kubectl wait` fails at once while a new CRD has no conditions yet: poll with a deadline.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        for name in String::from_utf8_lossy(&out.stdout).lines() {
            loop {
                let established = self
                    .kubectl()
                    .args(["get", name.trim(), "-o"])
                    .arg("jsonpath={.status.conditions[?(@.type==\"Established\")].status}")
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "True");
                if established {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{name} not Established within 60 s"
                );
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }

    /// A fresh namespace for one test, deleted when the returned value is dropped.
    ///
    /// # Panics
    /// When the namespace cannot be created.
    pub fn namespace(&self, prefix: &str) -> crate::TestNamespace {
        crate::TestNamespace::create(self, prefix)
    }
}

/// The repository root (this crate lives in `crates/plumb-testenv`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
