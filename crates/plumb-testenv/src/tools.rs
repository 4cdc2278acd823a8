//! Where tests find the real `helm` and `kustomize` binaries.
//!
//! `PLUMB_HELM` / `PLUMB_KUSTOMIZE` name them explicitly; otherwise they are taken from the
//! directory `scripts/testenv bin-dir` prints, where `scripts/testenv build` puts them. A missing
//! binary fails the test with a message saying how to build it: tests never skip silently.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Path to the `helm` binary; panics with instructions when it is missing.
pub fn helm() -> PathBuf {
    locate("helm", "PLUMB_HELM")
}

/// Path to the `kustomize` binary; panics with instructions when it is missing.
pub fn kustomize() -> PathBuf {
    locate("kustomize", "PLUMB_KUSTOMIZE")
}

/// Path to the OCI `registry` binary (the CNCF distribution registry, built by
/// `scripts/testenv build` from `tools/registry`); panics with instructions when it is missing.
pub fn registry() -> PathBuf {
    locate("registry", "PLUMB_REGISTRY")
}

/// The registry token server (`token-server`, docker/distribution's contrib/token-server),
/// built by `scripts/testenv build` from `tools/token-server`.
pub fn token_server() -> PathBuf {
    locate("token-server", "PLUMB_TOKEN_SERVER")
}

/// git-lfs's reference LFS server (`lfs-test-server`), built by `scripts/testenv build` from
/// `tools/lfs-test-server`.
pub fn lfs_test_server() -> PathBuf {
    locate("lfs-test-server", "PLUMB_LFS_TEST_SERVER")
}

/// The directory `scripts/testenv bin-dir` names, if the script ran.
pub fn bin_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/testenv");
        let out = Command::new("bash")
            .arg(&script)
            .arg("bin-dir")
            .output()
            .ok()?;
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
    })
    .clone()
}

fn locate(tool: &str, var: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var) {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "{var}={} does not exist", p.display());
        return p;
    }
    let candidate = bin_dir().map(|d| d.join(tool));
    match candidate {
        Some(p) if p.is_file() => p,
        other => panic!(
            "the {tool} binary is missing (looked at {}); run `scripts/testenv build` to build it, \
             or set {var} to its path",
            other
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "scripts/testenv bin-dir (failed)".into())
        ),
    }
}
