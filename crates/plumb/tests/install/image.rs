//! The image under test: the OCI layout `scripts/image` writes (`$PLUMB_TEST_IMAGE/layout`, tag
//! `latest`), unpacked once with umoci into a root file system that every container of the test
//! shares read-only, and the image configuration (user, environment, entrypoint) read from the
//! layout itself, as a container runtime reads it.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// What `scripts/test` sets; the message when it is missing says how to get an image.
pub const IMAGE_VAR: &str = "PLUMB_TEST_IMAGE";

/// An unpacked image.
pub struct Image {
    /// The root file system (never written: containers mount it read-only).
    pub rootfs: PathBuf,
    /// `config.User` of the image (`999`, `999:999` or a name), `None` when empty.
    pub user: Option<String>,
    /// `config.Env`.
    pub env: Vec<String>,
    /// `config.Entrypoint`.
    pub entrypoint: Vec<String>,
    /// `config.Cmd`.
    pub cmd: Vec<String>,
    /// `config.WorkingDir`.
    pub workdir: Option<String>,
    _dir: tempfile::TempDir,
}

impl Image {
    /// The image named by `PLUMB_TEST_IMAGE`, unpacked.
    ///
    /// # Panics
    /// When the variable is unset, the layout is not there, the test does not run as root (runc
    /// needs it here) or umoci fails: the test fails, it never skips.
    pub fn from_env() -> Self {
        let Some(dir) = std::env::var_os(IMAGE_VAR).map(PathBuf::from) else {
            panic!(
                "{IMAGE_VAR} is not set: build the image with `scripts/image --binary \
                 target/debug/plumb --out DIR` and run with {IMAGE_VAR}=DIR (scripts/test does both)"
            );
        };
        let layout = dir.join("layout");
        assert!(
            layout.join("index.json").is_file(),
            "{IMAGE_VAR}={}: no OCI layout at {} (index.json missing); build it with scripts/image",
            dir.display(),
            layout.display()
        );
        let euid = std::fs::metadata("/proc/self").map(|m| m.uid());
        assert!(
            matches!(euid, Ok(0)),
            "this test runs containers with runc and must run as root (uid {euid:?}); \
             scripts/test runs it as root in CI"
        );
        let config = image_config(&layout, "latest");
        let tmp = tempfile::Builder::new()
            .prefix("plumb-install-image-")
            .tempdir()
            .expect("temporary directory");
        let bundle = tmp.path().join("bundle");
        let out = Command::new("umoci")
            .args(["unpack", "--image"])
            .arg(format!("{}:latest", layout.display()))
            .arg(&bundle)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running umoci (Debian package umoci): {e}"));
        assert!(
            out.status.success(),
            "umoci unpack {}:latest: {}",
            layout.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let c = &config["config"];
        Self {
            rootfs: bundle.join("rootfs"),
            user: c["User"]
                .as_str()
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
            env: strings(&c["Env"]),
            entrypoint: strings(&c["Entrypoint"]),
            cmd: strings(&c["Cmd"]),
            workdir: c["WorkingDir"]
                .as_str()
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
            _dir: tmp,
        }
    }

    /// The uid and gid a user name or number of the image stands for (its `/etc/passwd`), and
    /// its home directory, as containerd resolves `runAsUser` and the image's `User`.
    pub fn passwd_entry(&self, user: &str) -> (u32, u32, Option<String>) {
        let (name, group) = match user.split_once(':') {
            Some((u, g)) => (u, Some(g)),
            None => (user, None),
        };
        let passwd = std::fs::read_to_string(self.rootfs.join("etc/passwd")).unwrap_or_default();
        let entry = passwd.lines().find_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            (f.len() >= 7 && (f[0] == name || f[2] == name)).then(|| {
                let uid = f[2].parse::<u32>().ok()?;
                let gid = f[3].parse::<u32>().ok()?;
                Some((uid, gid, f[5].to_owned()))
            })?
        });
        let (uid, gid, home) = match (entry, name.parse::<u32>()) {
            (Some((u, g, h)), _) => (u, g, Some(h)),
            (None, Ok(u)) => (u, u, None),
            (None, Err(_)) => panic!("the image's user {name:?} is not in its /etc/passwd"),
        };
        let gid = group.map_or(gid, |g| {
            g.parse()
                .unwrap_or_else(|_| panic!("the image's group {g:?} is not a number"))
        });
        (uid, gid, home)
    }
}

/// The image configuration blob of `tag` in the OCI layout at `layout`.
fn image_config(layout: &Path, tag: &str) -> Value {
    let read = |p: PathBuf| -> Value {
        let text =
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let blob = |digest: &str| {
        let (algo, hex) = digest
            .split_once(':')
            .unwrap_or_else(|| panic!("digest {digest:?} in {}", layout.display()));
        layout.join("blobs").join(algo).join(hex)
    };
    let index = read(layout.join("index.json"));
    let manifest = index["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("{}: no image tagged {tag:?}", layout.display()));
    let digest = manifest["digest"].as_str().unwrap_or_default();
    let manifest = read(blob(digest));
    let config = manifest["config"]["digest"].as_str().unwrap_or_default();
    read(blob(config))
}
