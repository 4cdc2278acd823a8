//! The control plane a test process talks to: attached from `PLUMB_TEST_KUBECONFIG`, or started
//! once per process with `scripts/testenv up` and torn down when the process exits. Fault tests
//! get a private one ([`TestEnv::private`]) whose components they may stop, start and restart.

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
    /// A component of a private control plane could not be stopped or started.
    #[error("scripts/testenv {action} {component} failed: {stderr}")]
    Component {
        /// `stop`, `start`, `restart`, `pause` or `resume`.
        action: &'static str,
        /// The component.
        component: Component,
        /// What the script printed on stderr.
        stderr: String,
    },
    /// The control plane is the shared one named by `PLUMB_TEST_KUBECONFIG`: its components belong
    /// to every test running against it and cannot be stopped by one.
    #[error(
        "the control plane from PLUMB_TEST_KUBECONFIG is shared; only TestEnv::private() control planes can be faulted"
    )]
    NotPrivate,
    /// etcd's compaction through its HTTP gateway failed.
    #[error("compacting etcd at {url}: {message}")]
    Compact {
        /// The etcd client URL.
        url: String,
        /// What went wrong.
        message: String,
    },
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

/// One process of the control plane, as `scripts/testenv` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// etcd (the API server's storage).
    Etcd,
    /// kube-apiserver.
    KubeApiserver,
    /// kube-controller-manager.
    KubeControllerManager,
    /// kube-scheduler.
    KubeScheduler,
    /// kwok (fake nodes and pods).
    Kwok,
}

impl Component {
    /// The name `scripts/testenv` uses.
    pub fn name(self) -> &'static str {
        match self {
            Component::Etcd => "etcd",
            Component::KubeApiserver => "kube-apiserver",
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeScheduler => "kube-scheduler",
            Component::Kwok => "kwok",
        }
    }
}

impl std::fmt::Display for Component {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Settings of a private control plane ([`TestEnv::private_with`]) that differ from the defaults.
#[derive(Debug, Clone, Default)]
pub struct PrivateOptions {
    /// kube-controller-manager's node monitor grace period in seconds (`scripts/testenv`'s default
    /// is 180, at least 8): how long the fake node's Lease may go unrenewed before the node is
    /// marked NotReady. Tests of a NotReady spell make it short.
    pub node_grace_seconds: Option<u32>,
    /// The API port to try first, without checking that it is free: a test that holds this port
    /// makes the first start-up attempt clash, and `up` must start again on other ports.
    pub try_api_port: Option<u16>,
}

/// A running control plane and how to reach it.
#[derive(Debug)]
pub struct TestEnv {
    kubeconfig: PathBuf,
    /// The state directory of a control plane this process started (`None` when attached to
    /// `PLUMB_TEST_KUBECONFIG`).
    state: Option<PathBuf>,
    /// Whether this value owns the control plane and stops it when dropped.
    private: bool,
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

    /// A control plane of its own, never the shared one of `PLUMB_TEST_KUBECONFIG`: for tests that
    /// stop or restart components (fault tests). Stopped when dropped, and in any case when the
    /// process exits. Starting one costs seconds: keep one per test binary and run the tests that
    /// use it one after another.
    pub fn private() -> Result<Self, Error> {
        Self::private_with(&PrivateOptions::default())
    }

    /// [`TestEnv::private`] with settings of its own.
    pub fn private_with(options: &PrivateOptions) -> Result<Self, Error> {
        let mut env = Self::up(options)?;
        env.private = true;
        Ok(env)
    }

    fn start() -> Result<Self, Error> {
        if let Some(path) = std::env::var_os("PLUMB_TEST_KUBECONFIG") {
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(Error::MissingKubeconfig(path));
            }
            return Ok(Self {
                kubeconfig: path,
                state: None,
                private: false,
            });
        }
        Self::up(&PrivateOptions::default())
    }

    fn up(options: &PrivateOptions) -> Result<Self, Error> {
        // A fresh path per call; `scripts/testenv` creates it, and the reaper it starts with
        // --owner-pid stops the processes and removes the directory when this process exits.
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "plumb-testenv-{}-{nanos}-{seq}",
            std::process::id()
        ));
        let script = repo_root().join("scripts/testenv");
        let mut cmd = Command::new(&script);
        if let Some(secs) = options.node_grace_seconds {
            cmd.env("PLUMB_TESTENV_NODE_GRACE_SECONDS", secs.to_string());
        }
        if let Some(port) = options.try_api_port {
            cmd.env("PLUMB_TESTENV_TRY_API_PORT", port.to_string());
        }
        let out = cmd
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
            state: Some(dir),
            private: false,
        })
    }

    fn private_state(&self) -> Result<&Path, Error> {
        match (&self.state, self.private) {
            (Some(dir), true) => Ok(dir),
            _ => Err(Error::NotPrivate),
        }
    }

    fn component(&self, action: &'static str, component: Component) -> Result<(), Error> {
        let dir = self.private_state()?;
        let script = repo_root().join("scripts/testenv");
        let out = Command::new(&script)
            .arg(action)
            .arg(component.name())
            .arg("--state")
            .arg(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::Component {
                action,
                component,
                stderr: e.to_string(),
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::Component {
                action,
                component,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Stops one component of a private control plane (SIGTERM, SIGKILL after 5 s).
    pub fn stop(&self, component: Component) -> Result<(), Error> {
        self.component("stop", component)
    }

    /// Starts a stopped component again with the same flags, ports and data, and waits until it
    /// is ready (etcd healthy, kube-apiserver `/readyz`).
    pub fn start_component(&self, component: Component) -> Result<(), Error> {
        self.component("start", component)
    }

    /// Freezes one component of a private control plane (SIGSTOP): it holds its ports and state
    /// but does nothing, as a process starved by a loaded machine would.
    pub fn pause(&self, component: Component) -> Result<(), Error> {
        self.component("pause", component)
    }

    /// Lets a component frozen by [`TestEnv::pause`] run again (SIGCONT).
    pub fn resume(&self, component: Component) -> Result<(), Error> {
        self.component("resume", component)
    }

    /// Stops and starts one component of a private control plane.
    pub fn restart(&self, component: Component) -> Result<(), Error> {
        self.component("restart", component)
    }

    /// etcd's client URL (`http://127.0.0.1:PORT`) of a private control plane.
    pub fn etcd_url(&self) -> Result<String, Error> {
        let dir = self.private_state()?;
        std::fs::read_to_string(dir.join("etcd-url"))
            .map(|s| s.trim().to_string())
            .map_err(|e| Error::Compact {
                url: dir.join("etcd-url").display().to_string(),
                message: e.to_string(),
            })
    }

    /// Compacts etcd's whole history up to its current revision (physically), through etcd's
    /// HTTP gateway: every watch resumed from an older resourceVersion then ends with 410 Gone.
    /// Returns the revision compacted to.
    pub fn compact_etcd(&self) -> Result<i64, Error> {
        let url = self.etcd_url()?;
        let fail = |message: String| Error::Compact {
            url: url.clone(),
            message,
        };
        let post = |path: &str, body: &str| -> Result<serde_json::Value, Error> {
            let out = Command::new("curl")
                .args(["-fsS", "--max-time", "10", "-X", "POST", "-d", body])
                .arg(format!("{url}{path}"))
                .stdin(Stdio::null())
                .output()
                .map_err(|e| fail(format!("running curl: {e}")))?;
            if !out.status.success() {
                return Err(fail(format!(
                    "{path}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            serde_json::from_slice(&out.stdout).map_err(|e| fail(format!("{path}: {e}")))
        };
        // Any read returns the store's current revision in its header ("AA==" is the key "\0").
        let range = post("/v3/kv/range", r#"{"key":"AA=="}"#)?;
        let revision = range["header"]["revision"]
            .as_str()
            .and_then(|r| r.parse::<i64>().ok())
            .ok_or_else(|| fail(format!("no revision in the range answer: {range}")))?;
        post(
            "/v3/kv/compaction",
            &format!(r#"{{"revision":"{revision}","physical":true}}"#),
        )?;
        Ok(revision)
    }

    /// The state directory of a control plane this process started (logs are in `logs/`).
    pub fn state_dir(&self) -> Option<&Path> {
        self.state.as_deref()
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

    /// The API server's URL and its CA certificate (PEM), for tests that register this control
    /// plane again as a second cluster under its own URL.
    ///
    /// # Panics
    /// When the kubeconfig cannot be read or names no server and CA (the test cannot go on).
    pub fn api_server(&self) -> (String, String) {
        use base64::Engine as _;
        let path = self.kubeconfig.display();
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig)
            .unwrap_or_else(|e| panic!("reading {path}: {e}"));
        let Some(cluster) = kc.clusters.into_iter().find_map(|c| c.cluster) else {
            panic!("{path} names no cluster");
        };
        let Some(server) = cluster.server else {
            panic!("{path} names no server");
        };
        let ca = match (
            cluster.certificate_authority_data,
            cluster.certificate_authority,
        ) {
            (Some(data), _) => base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()
                .and_then(|pem| String::from_utf8(pem).ok())
                .unwrap_or_else(|| panic!("{path}: certificate-authority-data is not base64 PEM")),
            (None, Some(file)) => std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("reading the CA {file} of {path}: {e}")),
            (None, None) => panic!("{path} names no CA certificate"),
        };
        (server, ca)
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
        crate::TestNamespace::create(&self.kubeconfig, prefix)
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // Only private control planes are owned by a value; the shared one lives until the process
        // exits and its reaper stops it.
        if let (Some(dir), true) = (&self.state, self.private) {
            let _ = Command::new(repo_root().join("scripts/testenv"))
                .arg("down")
                .arg("--state")
                .arg(dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The repository root (this crate lives in `crates/plumb-testenv`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
