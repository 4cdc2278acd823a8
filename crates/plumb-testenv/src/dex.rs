//! The real Dex (`scripts/dex build`) run on loopback with a configuration file the test writes
//! (usually `plumb_server::generate_dex_config`'s), for the single sign-on tests of the server,
//! the UI and the CLI.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// bcrypt of "password" (Dex's example user), for `staticPasswords`.
pub const PASSWORD_HASH: &str = "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W";

/// The dex binary: `PLUMB_DEX`, else what `scripts/dex bin` prints; panics naming the fix when
/// Dex is not built.
pub fn dex_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("PLUMB_DEX") {
        return PathBuf::from(p);
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dex");
    let out = Command::new("bash")
        .arg(&script)
        .arg("bin")
        .output()
        .expect("run scripts/dex bin");
    assert!(
        out.status.success(),
        "Dex is not built: run scripts/dex build ({})",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A loopback port free when asked (Dex binds it right after).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A running Dex, stopped on drop; its log is `dex.log` in its directory.
pub struct Dex {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Dex {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dex {
    /// Starts `dex serve` with `config` (YAML) and waits (at most a minute) until `discovery`
    /// (the issuer's `/.well-known/openid-configuration` on Dex's own address) answers 200.
    pub async fn start(config: &str, discovery: &str) -> Dex {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("dex.yaml");
        std::fs::write(&path, config).expect("write dex config");
        let log = std::fs::File::create(dir.path().join("dex.log")).expect("log");
        let child = Command::new(dex_binary())
            .arg("serve")
            .arg(&path)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect("start dex");
        let dex = Dex { child, dir };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            if reqwest::get(discovery)
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                return dex;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let log = std::fs::read_to_string(dex.log()).unwrap_or_default();
        panic!("Dex did not answer at {discovery}; its log:\n{log}");
    }

    /// Dex's log file.
    pub fn log(&self) -> PathBuf {
        self.dir.path().join("dex.log")
    }

    /// The directory Dex's configuration and log are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}
