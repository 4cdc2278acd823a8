//! The credential flags `repo add` and `repocreds add` share (Argo's `cmd/util/repo.go`
//! `AddRepoFlags` and `repocreds.go`), and their checks with argocd's messages. Files named by
//! flags are read here, bounded; the password is asked for when a user name has none.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Map, Value, json};

/// The largest key or certificate file read.
const MAX_FILE: u64 = 1024 * 1024;

/// Credentials and connection settings.
#[derive(Debug, Clone, Default, Args)]
pub struct CredFlags {
    /// Username to the repository.
    #[arg(long)]
    pub username: Option<String>,
    /// Password to the repository (asked for when --username has none).
    #[arg(long)]
    pub password: Option<String>,
    /// Bearer token to the Git repository (HTTPS only).
    #[arg(long)]
    pub bearer_token: Option<String>,
    /// Path to the private SSH key (e.g. ~/.ssh/id_rsa).
    #[arg(long, value_name = "PATH")]
    pub ssh_private_key_path: Option<PathBuf>,
    /// Path to the TLS client certificate (PEM).
    #[arg(long, value_name = "PATH")]
    pub tls_client_cert_path: Option<PathBuf>,
    /// Path to the TLS client certificate's key (PEM).
    #[arg(long, value_name = "PATH")]
    pub tls_client_cert_key_path: Option<PathBuf>,
    /// ID of the GitHub Application.
    #[arg(long, value_name = "ID")]
    pub github_app_id: Option<i64>,
    /// Installation ID of the GitHub Application.
    #[arg(long, value_name = "ID")]
    pub github_app_installation_id: Option<i64>,
    /// Private key of the GitHub Application (PEM file).
    #[arg(long, value_name = "PATH")]
    pub github_app_private_key_path: Option<PathBuf>,
    /// Base URL of GitHub Enterprise (e.g. https://ghe.example.com/api/v3).
    #[arg(long, value_name = "URL")]
    pub github_app_enterprise_base_url: Option<String>,
    /// Enable helm-oci (only valid for helm repositories).
    #[arg(long)]
    pub enable_oci: bool,
    /// Use http when accessing an OCI repository.
    #[arg(long)]
    pub insecure_oci_force_http: bool,
    /// Force basic auth when connecting via HTTP.
    #[arg(long)]
    pub force_http_basic_auth: bool,
    /// Type of the repository: git, oci or helm.
    #[arg(long = "type", default_value = "git", value_name = "TYPE")]
    pub kind: String,
    /// Override an existing entry even if the spec differs.
    #[arg(long)]
    pub upsert: bool,
}

/// Argo's `git.IsSSHURL`.
pub fn is_ssh_url(url: &str) -> bool {
    let rest = url.strip_prefix("ssh://").unwrap_or(url);
    rest.split_once('@').is_some_and(|(user, host)| {
        !user.contains(['/', ':']) && !host.is_empty() && !host.contains('@')
    })
}

/// Argo's `git.IsHTTPSURL`.
pub fn is_https_url(url: &str) -> bool {
    url.starts_with("https://")
}

/// A file named by `flag`, at most [`MAX_FILE`] bytes of UTF-8.
fn read_file(flag: &str, path: &Path) -> Result<String> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("--{flag}: reading {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_FILE + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("--{flag}: reading {} as text", path.display()))?;
    if text.len() as u64 > MAX_FILE {
        bail!(
            "--{flag}: {} is larger than {MAX_FILE} bytes",
            path.display()
        );
    }
    Ok(text)
}

impl CredFlags {
    /// Argo's request object for `url` (`url_key` is `repo` or `url`), files read and checked
    /// as argocd checks them, the password asked for when needed.
    pub fn body(&self, url_key: &str, url: &str) -> Result<Map<String, Value>> {
        let mut o = Map::new();
        o.insert(url_key.into(), json!(url));
        o.insert("type".into(), json!(self.kind));
        self.key_files(url, &mut o)?;
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                o.insert(k.into(), v);
            }
        };
        put("githubAppID", self.github_app_id.map(|v| json!(v)));
        put(
            "githubAppInstallationID",
            self.github_app_installation_id.map(|v| json!(v)),
        );
        put(
            "githubAppEnterpriseBaseUrl",
            self.github_app_enterprise_base_url
                .as_ref()
                .map(|v| json!(v)),
        );
        for (k, on) in [
            ("enableOCI", self.enable_oci),
            ("insecureOCIForceHttp", self.insecure_oci_force_http),
            ("forceHttpBasicAuth", self.force_http_basic_auth),
        ] {
            put(k, on.then_some(json!(true)));
        }
        self.secrets(url, &mut o)?;
        Ok(o)
    }

    /// The key and certificate files, each only where argocd accepts it.
    fn key_files(&self, url: &str, o: &mut Map<String, Value>) -> Result<()> {
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                o.insert(k.into(), v);
            }
        };
        if let Some(path) = &self.ssh_private_key_path {
            if !is_ssh_url(url) {
                bail!("--ssh-private-key-path is only supported for SSH repositories.");
            }
            put(
                "sshPrivateKey",
                Some(json!(read_file("ssh-private-key-path", path)?)),
            );
        }
        match (&self.tls_client_cert_path, &self.tls_client_cert_key_path) {
            (None, None) => {}
            (Some(cert), Some(key)) => {
                if !is_https_url(url) {
                    bail!("--tls-client-cert-path is only supported for HTTPS repositories");
                }
                put(
                    "tlsClientCertData",
                    Some(json!(read_file("tls-client-cert-path", cert)?)),
                );
                put(
                    "tlsClientCertKey",
                    Some(json!(read_file("tls-client-cert-key-path", key)?)),
                );
            }
            _ => bail!(
                "--tls-client-cert-path and --tls-client-cert-key-path must be specified together"
            ),
        }
        if let Some(path) = &self.github_app_private_key_path {
            if !is_https_url(url) {
                bail!("--github-app-private-key-path is only supported for HTTPS repositories");
            }
            put(
                "githubAppPrivateKey",
                Some(json!(read_file("github-app-private-key-path", path)?)),
            );
        }
        Ok(())
    }

    /// The user name, password (asked for) and bearer token, checked as argocd checks them.
    fn secrets(&self, url: &str, o: &mut Map<String, Value>) -> Result<()> {
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                o.insert(k.into(), v);
            }
        };
        let username = self.username.clone().filter(|u| !u.is_empty());
        let mut password = self.password.clone().filter(|p| !p.is_empty());
        if username.is_some() && password.is_none() {
            password = Some(crate::cmd::login::prompt_password()?);
        }
        let token = self.bearer_token.clone().filter(|t| !t.is_empty());
        if token.is_some() && password.is_some() {
            bail!("only --bearer-token or --password is allowed, not both");
        }
        if token.is_some() && self.kind != "git" {
            bail!("--bearer-token is only supported for Git repositories");
        }
        if token.is_some() && !is_https_url(url) {
            bail!("--bearer-token is only supported for HTTPS repositories");
        }
        put("username", username.map(|v| json!(v)));
        put("password", password.map(|v| json!(v)));
        put("bearerToken", token.map(|v| json!(v)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_kinds_are_argos() {
        assert!(is_ssh_url("git@github.com:org/repo.git"));
        assert!(is_ssh_url("ssh://git@github.com:22/org/repo"));
        assert!(!is_ssh_url("https://github.com/org/repo"));
        assert!(!is_ssh_url("https://user@github.com/org/repo"));
        assert!(is_https_url("https://x"));
        assert!(!is_https_url("http://x"));
    }

    #[test]
    fn flags_are_checked_as_argocd_checks_them() {
        let f = CredFlags {
            kind: "git".into(),
            ssh_private_key_path: Some("/nonexistent".into()),
            ..Default::default()
        };
        let err = f.body("repo", "https://x/y").unwrap_err().to_string();
        assert_eq!(
            err,
            "--ssh-private-key-path is only supported for SSH repositories."
        );
        let f = CredFlags {
            kind: "git".into(),
            tls_client_cert_path: Some("/c".into()),
            ..Default::default()
        };
        let err = f.body("repo", "https://x/y").unwrap_err().to_string();
        assert!(err.contains("must be specified together"), "{err}");
        let f = CredFlags {
            kind: "git".into(),
            password: Some("p".into()),
            bearer_token: Some("t".into()),
            ..Default::default()
        };
        let err = f.body("repo", "https://x/y").unwrap_err().to_string();
        assert_eq!(
            err,
            "only --bearer-token or --password is allowed, not both"
        );
        let f = CredFlags {
            kind: "git".into(),
            username: Some("u".into()),
            password: Some("p".into()),
            github_app_id: Some(7),
            ..Default::default()
        };
        let body = f.body("repo", "http://x/y").unwrap();
        assert_eq!(body["githubAppID"], 7);
        assert_eq!(body["password"], "p");
    }
}
