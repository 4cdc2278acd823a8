//! An OCI registry for tests: the CNCF distribution registry (`registry`, built by
//! `scripts/testenv build` from `tools/registry`) on 127.0.0.1 at a free port, serving HTTPS with
//! a certificate from its own test CA, with htpasswd (bcrypt) Basic authentication and
//! optionally demanding a client certificate. Charts go in with the real `helm registry login`
//! and `helm push`; [`OciRegistry::push_raw`] writes hand-made manifests through the
//! distribution API (for hostile tests), and [`OciRegistry::corrupt_blob`] changes a stored blob
//! behind the registry's back (a registry serving bad bytes).
//!
//! With [`Options::token_auth`] the registry uses `auth: token` instead of htpasswd: clients get
//! a `Bearer` challenge naming a real token server (docker/distribution's
//! `contrib/token-server`, built from `tools/token-server`, serving HTTPS with the same test CA),
//! which checks the same htpasswd users and signs ES256 tokens; the registry trusts its key
//! through a JWKS file. That token server grants a user access only to repositories under
//! `<user>/`, so charts go under e.g. `bot/charts`.
//!
//! ```no_run
//! use plumb_testenv::chart_repo::chart;
//! use plumb_testenv::oci_registry::{OciRegistry, Options};
//! let reg = OciRegistry::start(Options { auth: Some(("bot", "s3cret")), ..Default::default() });
//! let digest = reg.push_chart(&chart("api", "1.2.3", &[]), "charts");
//! let url = reg.url("charts"); // oci://127.0.0.1:PORT/charts
//! # let _ = (digest, url);
//! ```

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// How the registry runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Demand exactly this user and password (htpasswd, bcrypt).
    pub auth: Option<(&'static str, &'static str)>,
    /// Demand a client certificate signed by the registry's CA
    /// ([`OciRegistry::client_identity`]).
    pub client_certs: bool,
    /// Bearer tokens from a token server instead of Basic authentication (needs `auth`).
    pub token_auth: bool,
}

/// The running registry; stopped (its process killed) when dropped.
pub struct OciRegistry {
    child: Child,
    token_server: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
    ca_pem: String,
    client_identity: (String, String),
    auth: Option<(&'static str, &'static str)>,
    client_certs: bool,
}

impl std::fmt::Debug for OciRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OciRegistry")
            .field("port", &self.port)
            .finish()
    }
}

impl OciRegistry {
    /// Starts a registry (empty) and waits until it answers.
    pub fn start(opts: Options) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let (ca_pem, leaf, client_identity) = tls_material();
        std::fs::write(dir.path().join("ca.pem"), &ca_pem).expect("CA file");
        std::fs::write(dir.path().join("server.pem"), &leaf.0).expect("server certificate");
        std::fs::write(dir.path().join("server.key"), &leaf.1).expect("server key");
        std::fs::write(dir.path().join("client.pem"), &client_identity.0).expect("client cert");
        std::fs::write(dir.path().join("client.key"), &client_identity.1).expect("client key");
        if let Some((user, password)) = opts.auth {
            // The minimum cost: the registry accepts any bcrypt hash, and tests stay fast.
            let hash = bcrypt::hash(password, 4).expect("bcrypt");
            std::fs::write(dir.path().join("htpasswd"), format!("{user}:{hash}\n"))
                .expect("htpasswd");
        }
        let (mut token_server, token_port) = if opts.token_auth {
            assert!(
                opts.auth.is_some(),
                "token_auth needs auth (the token server's user)"
            );
            let (child, port) = start_token_server(dir.path());
            (Some(child), Some(port))
        } else {
            (None, None)
        };
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = free_port();
            write_config(dir.path(), port, &opts, token_port);
            let log = std::fs::File::create(dir.path().join("registry.log")).expect("log file");
            let mut child = Command::new(crate::tools::registry())
                .arg("serve")
                .arg(dir.path().join("config.yml"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log file"))
                .stderr(log)
                .spawn()
                .expect("starting the registry");
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Self {
                        child,
                        token_server: token_server.take(),
                        dir,
                        port,
                        ca_pem,
                        client_identity,
                        auth: opts.auth,
                        client_certs: opts.client_certs,
                    };
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            last_log = std::fs::read_to_string(dir.path().join("registry.log")).unwrap_or_default();
            if !last_log.contains("address already in use") {
                break;
            }
        }
        if let Some(t) = token_server.as_mut() {
            let _ = t.kill();
            let _ = t.wait();
        }
        panic!("the registry did not start; its log:\n{last_log}");
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("oci://{}/{}", self.host(), path.trim_matches('/'))
    }

    /// The registry's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The CA certificate (PEM) that signed the registry's certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client certificate and key (PEM) signed by the registry's CA.
    pub fn client_identity(&self) -> (&str, &str) {
        (&self.client_identity.0, &self.client_identity.1)
    }

    /// Packages the chart directory with `helm package`, logs in with `helm registry login`
    /// (when the registry demands credentials) and pushes it with `helm push` under
    /// `oci://HOST/<path>`; returns the manifest digest helm reports.
    pub fn push_chart(&self, chart_dir: &Path, path: &str) -> String {
        let out = self.dir.path().join("packages");
        std::fs::create_dir_all(&out).expect("packages directory");
        let packaged = self.helm(&[
            "package",
            &chart_dir.display().to_string(),
            "-d",
            &out.display().to_string(),
        ]);
        let archive = packaged
            .lines()
            .find_map(|l| l.split("saved it to: ").nth(1))
            .map(|p| p.trim().to_owned())
            .unwrap_or_else(|| panic!("helm package printed no archive path: {packaged}"));
        if let Some((user, password)) = self.auth {
            let mut args = vec![
                "registry".to_owned(),
                "login".into(),
                self.host(),
                "--username".into(),
                user.into(),
                "--password".into(),
                password.into(),
            ];
            args.extend(self.tls_args());
            self.helm(&args.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let mut args = vec!["push".to_owned(), archive, self.url(path)];
        args.extend(self.tls_args());
        let pushed = self.helm(&args.iter().map(String::as_str).collect::<Vec<_>>());
        pushed
            .lines()
            .find_map(|l| l.trim().strip_prefix("Digest:"))
            .map(|d| d.trim().to_owned())
            .unwrap_or_else(|| panic!("helm push printed no digest: {pushed}"))
    }

    /// Uploads `layers` (media type, bytes, the size to declare: `None` for the true one) and
    /// a config `{}` of `config_media_type` as blobs, then a manifest naming them as `tag` of
    /// `repository`, through the distribution API. Returns the manifest digest.
    pub fn push_raw(
        &self,
        repository: &str,
        tag: &str,
        config_media_type: &str,
        layers: &[(&str, Vec<u8>, Option<u64>)],
    ) -> String {
        let config = b"{}".to_vec();
        let config_digest = self.upload_blob(repository, &config);
        let mut descs = Vec::new();
        for (media_type, data, declared) in layers {
            let digest = self.upload_blob(repository, data);
            descs.push(serde_json::json!({
                "mediaType": media_type,
                "digest": digest,
                "size": declared.unwrap_or(data.len() as u64),
            }));
        }
        let manifest = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": config_media_type, "digest": config_digest, "size": config.len()},
            "layers": descs,
        }))
        .expect("manifest JSON");
        let url = format!("https://{}/v2/{repository}/manifests/{tag}", self.host());
        let resp = self
            .client()
            .put(url)
            .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            .body(manifest.clone())
            .send()
            .expect("PUT manifest");
        assert!(
            resp.status().is_success(),
            "PUT manifest: HTTP {} {}",
            resp.status(),
            resp.text().unwrap_or_default()
        );
        digest_of(&manifest)
    }

    /// Overwrites the stored blob `digest` with as many different bytes (the registry keeps
    /// serving it under its digest: a corrupted or malicious registry).
    pub fn corrupt_blob(&self, digest: &str) {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        let data = self
            .dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data");
        let mut bytes = std::fs::read(&data)
            .unwrap_or_else(|e| panic!("reading the stored blob {}: {e}", data.display()));
        for b in bytes.iter_mut() {
            *b ^= 0x5a;
        }
        std::fs::write(&data, bytes).expect("writing the stored blob");
    }

    /// The layer digests of the manifest `reference` (a tag or digest) of `repository`.
    pub fn layer_digests(&self, repository: &str, reference: &str) -> Vec<String> {
        let url = format!(
            "https://{}/v2/{repository}/manifests/{reference}",
            self.host()
        );
        let resp = self
            .client()
            .get(url)
            .header("Accept", "application/vnd.oci.image.manifest.v1+json")
            .send()
            .expect("GET manifest");
        assert!(
            resp.status().is_success(),
            "GET manifest: HTTP {}",
            resp.status()
        );
        let doc: serde_json::Value =
            serde_json::from_slice(&resp.bytes().expect("manifest body")).expect("manifest JSON");
        doc["layers"]
            .as_array()
            .expect("layers")
            .iter()
            .map(|l| l["digest"].as_str().expect("digest").to_owned())
            .collect()
    }

    fn upload_blob(&self, repository: &str, data: &[u8]) -> String {
        let digest = digest_of(data);
        let start = format!("https://{}/v2/{repository}/blobs/uploads/", self.host());
        let resp = self.client().post(start).send().expect("POST blob upload");
        assert!(
            resp.status().is_success(),
            "POST blob upload: HTTP {}",
            resp.status()
        );
        let location = resp
            .headers()
            .get("Location")
            .and_then(|v| v.to_str().ok())
            .expect("upload Location")
            .to_owned();
        let mut url = reqwest::Url::parse(&format!("https://{}/", self.host()))
            .and_then(|base| base.join(&location))
            .expect("upload URL");
        url.query_pairs_mut().append_pair("digest", &digest);
        let resp = self
            .client()
            .put(url)
            .header("Content-Type", "application/octet-stream")
            .body(data.to_vec())
            .send()
            .expect("PUT blob");
        assert!(
            resp.status().is_success(),
            "PUT blob: HTTP {}",
            resp.status()
        );
        digest
    }

    fn client(&self) -> AuthClient {
        let mut b = reqwest::blocking::Client::builder()
            .tls_certs_merge(
                reqwest::Certificate::from_pem_bundle(self.ca_pem.as_bytes()).expect("CA"),
            )
            .timeout(Duration::from_secs(120));
        if self.client_certs {
            let pem = format!("{}\n{}", self.client_identity.0, self.client_identity.1);
            b = b.identity(reqwest::Identity::from_pem(pem.as_bytes()).expect("identity"));
        }
        AuthClient {
            inner: b.build().expect("HTTP client"),
            auth: self.auth,
        }
    }

    fn tls_args(&self) -> Vec<String> {
        let d = self.dir.path();
        let mut args = vec![
            "--ca-file".to_owned(),
            d.join("ca.pem").display().to_string(),
        ];
        if self.client_certs {
            args.extend([
                "--cert-file".to_owned(),
                d.join("client.pem").display().to_string(),
                "--key-file".to_owned(),
                d.join("client.key").display().to_string(),
            ]);
        }
        args
    }

    fn helm(&self, args: &[&str]) -> String {
        let home = self.dir.path().join("helm-home");
        let out = Command::new(crate::tools::helm())
            .args(args)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .env("HELM_REGISTRY_CONFIG", home.join("registry.json"))
            .output()
            .expect("running helm");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "helm {} failed: {text}", args[0]);
        text
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(t) = self.token_server.as_mut() {
            let _ = t.kill();
            let _ = t.wait();
        }
    }
}

/// A blocking client that adds the registry's Basic credentials to every request.
struct AuthClient {
    inner: reqwest::blocking::Client,
    auth: Option<(&'static str, &'static str)>,
}

impl AuthClient {
    fn with(&self, b: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        match self.auth {
            Some((u, p)) => b.basic_auth(u, Some(p)),
            None => b,
        }
    }
    fn get(&self, url: String) -> reqwest::blocking::RequestBuilder {
        self.with(self.inner.get(url))
    }
    fn post(&self, url: String) -> reqwest::blocking::RequestBuilder {
        self.with(self.inner.post(url))
    }
    fn put(&self, url: impl reqwest::IntoUrl) -> reqwest::blocking::RequestBuilder {
        self.with(self.inner.put(url))
    }
}

fn digest_of(data: &[u8]) -> String {
    let hex: String = Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn write_config(dir: &Path, port: u16, opts: &Options, token_port: Option<u16>) {
    let d = |name: &str| -> PathBuf { dir.join(name) };
    let mut cfg = format!(
        "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: plumb-test-secret\n  tls:\n    certificate: {}\n    key: {}\n",
        d("storage").display(),
        d("server.pem").display(),
        d("server.key").display(),
    );
    if opts.client_certs {
        cfg.push_str(&format!(
            "    clientcas:\n      - {}\n",
            d("ca.pem").display()
        ));
    }
    if let Some(tp) = token_port {
        cfg.push_str(&format!(
            "auth:\n  token:\n    realm: https://127.0.0.1:{tp}/token/\n    service: plumb-test-registry\n    issuer: {TOKEN_ISSUER}\n    jwks: {}\n",
            d("token-jwks.json").display()
        ));
    } else if opts.auth.is_some() {
        cfg.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: plumb-test-registry\n    path: {}\n",
            d("htpasswd").display()
        ));
    }
    std::fs::write(d("config.yml"), cfg).expect("registry configuration");
}

/// The `iss` of the token server's tokens, which the registry checks.
const TOKEN_ISSUER: &str = "plumb-test-token-issuer";

/// Starts the token server on a free port (HTTPS with the registry's certificate, users from
/// `htpasswd`, a new ES256 key) and writes the JWKS the registry trusts; returns it and its
/// port once it accepts connections.
fn start_token_server(dir: &Path) -> (Child, u16) {
    use base64::Engine;
    use rcgen::PublicKeyData;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let key = rcgen::KeyPair::generate().expect("token signing key");
    let point = key.public_key_raw();
    assert_eq!(point.len(), 65, "an uncompressed P-256 point");
    let (x, y) = (&point[1..33], &point[33..]);
    // The private scalar, from the PKCS#8 document (ECPrivateKey: version 1, then 32 bytes).
    let pkcs8 = key.serialize_der();
    let at = pkcs8
        .windows(5)
        .position(|w| w == [0x02, 0x01, 0x01, 0x04, 0x20])
        .expect("ECPrivateKey in the PKCS#8 document");
    let d = &pkcs8[at + 5..at + 37];
    // libtrust's key id (what the token server puts in its tokens' `kid`): SHA-256 of the
    // SubjectPublicKeyInfo, 240 bits in base32, groups of four. libtrust refuses a key file
    // whose `kid` is not that, so a wrong id stops the token server from starting.
    let kid = libtrust_key_id(&key.subject_public_key_info());
    let public = serde_json::json!({"kty": "EC", "crv": "P-256", "kid": kid,
                                    "x": b64.encode(x), "y": b64.encode(y)});
    let mut private = public.clone();
    private["d"] = serde_json::Value::String(b64.encode(d));
    std::fs::write(dir.join("token-key.json"), private.to_string()).expect("token key");
    std::fs::write(
        dir.join("token-jwks.json"),
        serde_json::json!({"keys": [public]}).to_string(),
    )
    .expect("JWKS");
    let mut last_log = String::new();
    for _ in 0..5 {
        let port = free_port();
        let log = std::fs::File::create(dir.join("token-server.log")).expect("log file");
        let mut child = Command::new(crate::tools::token_server())
            .args(["-addr", &format!("127.0.0.1:{port}")])
            .args(["-issuer", TOKEN_ISSUER, "-realm", "plumb-test-token"])
            .arg("-key")
            .arg(dir.join("token-key.json"))
            .arg("-passwd")
            .arg(dir.join("htpasswd"))
            .arg("-tlscert")
            .arg(dir.join("server.pem"))
            .arg("-tlskey")
            .arg(dir.join("server.key"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("starting the token server");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (child, port);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        last_log = std::fs::read_to_string(dir.join("token-server.log")).unwrap_or_default();
        if !last_log.contains("address already in use") {
            break;
        }
    }
    panic!("the token server did not start; its log:\n{last_log}");
}

/// libtrust's `keyIDFromCryptoKey`: base32 (RFC 4648, no padding) of the first 30 bytes of the
/// SHA-256 of the DER public key, in groups of four joined by `:`.
fn libtrust_key_id(spki_der: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let hash = Sha256::digest(spki_der);
    let mut bits = 0u32;
    let mut n = 0;
    let mut text = String::new();
    for b in &hash[..30] {
        bits = (bits << 8) | u32::from(*b);
        n += 8;
        while n >= 5 {
            n -= 5;
            text.push(char::from(ALPHABET[((bits >> n) & 31) as usize]));
        }
    }
    text.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

/// The CA (PEM), the server certificate and key for 127.0.0.1 (PEM), a client certificate and
/// key (PEM), all from one new CA.
fn tls_material() -> (String, (String, String), (String, String)) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "plumb test OCI registry CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA certificate");
    let leaf_key = rcgen::KeyPair::generate().expect("server key");
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("server params")
        .signed_by(&leaf_key, &ca)
        .expect("server certificate");
    let client_key = rcgen::KeyPair::generate().expect("client key");
    let mut client_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).expect("client params");
    client_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "plumb-test-client");
    let client = client_params
        .signed_by(&client_key, &ca)
        .expect("client certificate");
    (
        ca.pem(),
        (leaf.pem(), leaf_key.serialize_pem()),
        (client.pem(), client_key.serialize_pem()),
    )
}
