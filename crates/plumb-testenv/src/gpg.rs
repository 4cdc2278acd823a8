//! Real GnuPG keys for tests, made with the `gpg` binary in a temporary GnuPG home, and Git
//! commits and tags signed with them.
//!
//! ```no_run
//! use plumb_testenv::git::GitRepo;
//! use plumb_testenv::gpg::GpgKey;
//!
//! let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
//! let repo = GitRepo::new();
//! let signed = key.commit(&repo, &[("apps/cm.yaml", "kind: ConfigMap\n")], "signed");
//! let armored = key.public_key(); // argocd-gpg-keys-cm[key.key_id()]
//! # let _ = (signed, armored);
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::git::GitRepo;

/// One key pair in a GnuPG home of its own, deleted when dropped.
#[derive(Debug)]
pub struct GpgKey {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    fingerprint: String,
    /// A `gpg` wrapper that signs as of `faked_time` (for an expired key's signatures).
    program: PathBuf,
}

impl GpgKey {
    /// A new Ed25519 signing key for `uid` (`Name <email>`), valid for a year.
    pub fn generate(uid: &str) -> Self {
        Self::make(uid, None, "1y")
    }

    /// A key made on 2020-01-01 that expired a day later; it signs as of 2020-01-01 12:00, so
    /// its signatures were good when made and are made by an expired key now.
    pub fn expired(uid: &str) -> Self {
        Self::make(uid, Some("20200101T000000"), "1d")
    }

    /// Revokes the key (imports the revocation certificate GnuPG made with it): signatures made
    /// before are made by a revoked key now, and [`GpgKey::public_key`] carries the revocation.
    /// A revoked key signs no more.
    pub fn revoke(&self) {
        let key = self;
        let rev = key
            .home
            .join("openpgp-revocs.d")
            .join(format!("{}.rev", key.fingerprint));
        let text = std::fs::read_to_string(&rev).expect("reading the revocation certificate");
        // GnuPG escapes the armor line so the file cannot be imported by accident.
        let cert = text.replace(
            ":-----BEGIN PGP PUBLIC KEY BLOCK-----",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----",
        );
        let file = key.home.join("revoke.asc");
        std::fs::write(&file, cert).expect("writing the revocation certificate");
        key.gpg(&["--import", &file.to_string_lossy()]);
    }

    fn make(uid: &str, faked: Option<&str>, expire: &str) -> Self {
        let tmp = tempfile::tempdir().expect("creating a temporary directory");
        let home = tmp.path().join("gnupg");
        std::fs::create_dir_all(&home).expect("creating the GnuPG home");
        set_private(&home);
        let program = tmp.path().join("gpg-signer");
        let time = faked
            .map(|_| "--faked-system-time 20200101T120000 ".to_string())
            .unwrap_or_default();
        std::fs::write(
            &program,
            format!(
                "#!/bin/sh\nexec gpg --homedir '{}' {time}\"$@\"\n",
                home.display()
            ),
        )
        .expect("writing the gpg wrapper");
        set_executable(&program);
        let mut key = Self {
            _tmp: tmp,
            home,
            fingerprint: String::new(),
            program,
        };
        let mut args = vec!["--passphrase", "", "--pinentry-mode", "loopback"];
        if let Some(t) = faked {
            args.extend(["--faked-system-time", t]);
        }
        args.extend(["--quick-gen-key", uid, "ed25519", "sign", expire]);
        key.gpg(&args);
        let listed = key.gpg(&["--with-colons", "--list-keys"]);
        key.fingerprint = listed
            .lines()
            .find_map(|l| l.strip_prefix("fpr:"))
            .and_then(|l| l.split(':').nth(8))
            .expect("the new key's fingerprint")
            .to_string();
        key
    }

    /// The 40-digit fingerprint.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The 16-digit key ID (what `argocd-gpg-keys-cm` and `signatureKeys` name).
    pub fn key_id(&self) -> &str {
        &self.fingerprint[24..]
    }

    /// The ASCII-armored public key.
    pub fn public_key(&self) -> String {
        self.gpg(&["--armor", "--export", &self.fingerprint])
    }

    /// The GnuPG home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Writes `files` into `repo`, stages everything and makes a commit signed with this key;
    /// returns its SHA.
    pub fn commit<C: AsRef<[u8]>>(
        &self,
        repo: &GitRepo,
        files: &[(&str, C)],
        message: &str,
    ) -> String {
        for (rel, contents) in files {
            let p = repo.path().join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).expect("creating fixture directories");
            }
            std::fs::write(&p, contents.as_ref()).expect("writing a fixture file");
        }
        repo.git(&["add", "-A"]);
        self.git(
            repo,
            &["commit", "-q", "-S", "--allow-empty", "-m", message],
        );
        repo.head()
    }

    /// An annotated tag `name` of HEAD signed with this key.
    pub fn tag(&self, repo: &GitRepo, name: &str, message: &str) {
        self.git(repo, &["tag", "-s", name, "-m", message]);
    }

    fn git(&self, repo: &GitRepo, args: &[&str]) {
        let program = self.program.to_string_lossy().into_owned();
        let signer = format!("user.signingkey={}", self.fingerprint);
        let gpg = format!("gpg.program={program}");
        let mut all = vec!["-c", signer.as_str(), "-c", gpg.as_str()];
        all.extend_from_slice(args);
        let out = Command::new("git")
            .args(&all)
            .current_dir(repo.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", repo.path().parent().unwrap_or(repo.path()))
            .output()
            .expect("running git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `gpg` on this key's home; panics with its error output on failure.
    pub fn gpg(&self, args: &[&str]) -> String {
        let out = Command::new("gpg")
            .arg("--homedir")
            .arg(&self.home)
            .args(["--batch", "--no-tty", "--yes"])
            .args(args)
            .output()
            .expect("running gpg (is it installed?)");
        assert!(
            out.status.success(),
            "gpg {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for GpgKey {
    fn drop(&mut self) {
        // The agent gpg started for this home goes with it.
        let _ = Command::new("gpgconf")
            .args(["--kill", "gpg-agent"])
            .env("GNUPGHOME", &self.home)
            .output();
    }
}

fn set_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}

fn set_executable(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755));
}
