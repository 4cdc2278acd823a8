//! A Git repository served over SSH by a real `sshd` on 127.0.0.1, for testing `ssh://` sources
//! with a private key as Argo CD repository Secrets carry it.
//!
//! Needs the OpenSSH server (`/usr/sbin/sshd`; `.ci/run` installs Debian's `openssh-server` when
//! it is missing). The daemon runs with its own configuration and keys in a temporary directory
//! and accepts only the generated client key; it is killed when the value is dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::git::GitRepo;

/// An `sshd` serving one repository.
pub struct GitSshServer {
    child: Child,
    port: u16,
    repo: PathBuf,
    user: String,
    key: String,
    host_key: String,
    _dir: tempfile::TempDir,
}

/// Where the OpenSSH server is expected.
pub const SSHD: &str = "/usr/sbin/sshd";

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("running ssh-keygen");
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl GitSshServer {
    /// Starts `sshd` for `repo`.
    ///
    /// # Panics
    /// When `sshd` is missing or does not start: the test cannot go on.
    pub fn serve(repo: &GitRepo) -> Self {
        assert!(
            Path::new(SSHD).is_file(),
            "{SSHD} not found: install the OpenSSH server (Debian: apt-get install openssh-server)"
        );
        // sshd insists on its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = tempfile::tempdir().expect("temporary directory");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))
            .expect("authorized_keys");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let user = std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "root".into());
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n\
             StrictModes no\nUsePAM no\nAllowUsers {user}\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("sshd.log")).expect("log"),
            ))
            .spawn()
            .expect("starting sshd");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sshd did not listen: {}",
                std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let key = std::fs::read_to_string(d.join("client_key")).expect("client key");
        let host_key = std::fs::read_to_string(d.join("host_key.pub")).expect("host key");
        Self {
            child,
            port,
            repo: repo.path().to_path_buf(),
            user,
            key,
            host_key,
            _dir: dir,
        }
    }

    /// `ssh://<user>@127.0.0.1:<port>/<repo path>`.
    pub fn url(&self) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            self.repo.display()
        )
    }

    /// The server's host key as a `known_hosts` line (`[127.0.0.1]:PORT ssh-ed25519 AAAA...`),
    /// as `argocd-ssh-known-hosts-cm` lists it.
    pub fn known_hosts_line(&self) -> String {
        let mut parts = self.host_key.split_whitespace();
        let (kind, key) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        format!("[127.0.0.1]:{} {kind} {key}\n", self.port)
    }

    /// A `known_hosts` line for the same address with another key: a host whose key changed.
    pub fn wrong_known_hosts_line(&self) -> String {
        let dir = tempfile::tempdir().expect("temporary directory");
        keygen(&dir.path().join("other"));
        let other = std::fs::read_to_string(dir.path().join("other.pub")).expect("other key");
        let mut parts = other.split_whitespace();
        let (kind, key) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        format!("[127.0.0.1]:{} {kind} {key}\n", self.port)
    }

    /// The client private key (OpenSSH PEM), as a repository Secret's `sshPrivateKey`.
    pub fn private_key(&self) -> &str {
        &self.key
    }
}

impl Drop for GitSshServer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log =
                std::fs::read_to_string(self._dir.path().join("sshd.log")).unwrap_or_default();
            eprintln!("---- sshd log ----\n{log}");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
