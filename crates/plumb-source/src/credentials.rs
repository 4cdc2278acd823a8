//! Repository credentials from Argo CD repository Secrets.
//!
//! Argo keeps one Secret per repository, labelled `argocd.argoproj.io/secret-type: repository`,
//! with `url`, `username`, `password`, `sshPrivateKey` and `insecure` keys in `data` (base64) or
//! `stringData`; `repo-creds` Secrets hold the same keys for every repository whose URL starts with
//! their `url` (Argo's credential templates). See Argo CD `docs/operator-manual/declarative-setup.md`.
//! A `type: helm` Secret describes a Helm chart repository and may add `tlsClientCertData` /
//! `tlsClientCertKey` (a client certificate), `passCredentials` (send the credentials to chart
//! URLs on other hosts too), `forceHttpBasicAuth` and `enableOCI`; CA certificates come from the
//! `argocd-tls-certs-cm` ConfigMap ([`TlsCerts`]).

use std::fmt;

use serde_json::Value;

use crate::error::{Error, Result};

mod github_app;
mod github_discovery;
mod github_token;
mod known_hosts;
pub use github_app::GithubApp;
pub(crate) use github_app::TOKEN_USER;
pub(crate) use github_token::TokenCache;
pub use known_hosts::{KNOWN_HOSTS_CM, KNOWN_HOSTS_KEY, KnownHosts};

/// The label naming a Secret's role.
pub const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// Credentials for one repository (or, from a `repo-creds` Secret, for a URL prefix).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RepoCredentials {
    /// The repository URL, or URL prefix for a template.
    pub url: String,
    /// True for a `repo-creds` template matched by URL prefix.
    pub is_template: bool,
    /// HTTPS user name.
    pub username: Option<String>,
    /// HTTPS password or token.
    pub password: Option<String>,
    /// SSH private key (PEM / OpenSSH format).
    pub ssh_private_key: Option<String>,
    /// Skip host key / TLS verification (`insecure: "true"`).
    pub insecure: bool,
    /// The Secret's `type`: `git` (also when absent), `helm` or `oci`.
    pub kind: String,
    /// The repository's `name` (Helm dependencies may name a repository `@name`).
    pub name: Option<String>,
    /// TLS client certificate (PEM), for repositories that ask for one.
    pub tls_client_cert_data: Option<String>,
    /// The client certificate's private key (PEM).
    pub tls_client_cert_key: Option<String>,
    /// Send the credentials to chart archives on other hosts than the repository's
    /// (`passCredentials: "true"`, Helm's `--pass-credentials`).
    pub pass_credentials: bool,
    /// Send Basic credentials without waiting for a challenge (`forceHttpBasicAuth`); Plumb's
    /// chart repository client always does, as Helm's does.
    pub force_http_basic_auth: bool,
    /// The repository is an OCI registry (`enableOCI: "true"`).
    pub enable_oci: bool,
    /// Reach the OCI registry over plain HTTP (`insecureOCIForceHttp: "true"`).
    pub insecure_oci_force_http: bool,
    /// The AppProject the Secret belongs to (`project`; empty or absent: every project). Its
    /// credentials serve that project's Applications only ([`RepoCredentials::select`]).
    pub project: Option<String>,
    /// `bearerToken`: sent as `Authorization: Bearer` to a Git server over HTTPS (Bitbucket Data
    /// Center's access tokens), instead of Basic credentials.
    pub bearer_token: Option<String>,
    /// `proxy`: the HTTP(S) proxy for this repository only (else the environment's).
    pub proxy: Option<String>,
    /// `noProxy`: hosts reached directly even with `proxy` (comma-separated, Go's `NO_PROXY`).
    pub no_proxy: Option<String>,
    /// `enableLfs`: the repository keeps files in Git LFS.
    pub enable_lfs: bool,
    /// GitHub App credentials (`githubAppID`, ...), exchanged for installation tokens.
    pub github_app: Option<GithubApp>,
    /// Why the Secret cannot be used (it names the field, never a value): a Secret for this URL
    /// that Plumb refused is kept so that a fetch with it fails saying why, instead of going
    /// without credentials ([`RepoCredentials::unusable`]).
    pub unusable: Option<String>,
}

impl fmt::Debug for RepoCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RepoCredentials")
            .field("url", &self.url)
            .field("is_template", &self.is_template)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field(
                "ssh_private_key",
                &self.ssh_private_key.as_ref().map(|_| "***"),
            )
            .field("insecure", &self.insecure)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field(
                "tls_client_cert_data",
                &self.tls_client_cert_data.as_ref().map(|_| "<certificate>"),
            )
            .field(
                "tls_client_cert_key",
                &self.tls_client_cert_key.as_ref().map(|_| "***"),
            )
            .field("pass_credentials", &self.pass_credentials)
            .field("enable_oci", &self.enable_oci)
            .field("insecure_oci_force_http", &self.insecure_oci_force_http)
            .field("project", &self.project)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "***"))
            .field(
                "proxy",
                &self
                    .proxy
                    .as_deref()
                    .map(crate::redact::strip_url_credentials),
            )
            .field("no_proxy", &self.no_proxy)
            .field("enable_lfs", &self.enable_lfs)
            .field("github_app", &self.github_app)
            .field("unusable", &self.unusable)
            .finish()
    }
}

impl RepoCredentials {
    /// Reads a `repository` or `repo-creds` Secret as the API server returns it (`data` in
    /// base64) or as written in a manifest (`stringData`).
    pub fn from_secret(secret: &Value) -> Result<Self> {
        let fields = SecretFields {
            secret,
            name: secret_name(secret),
        };
        let is_template = fields.is_template()?;
        let url = fields
            .field("url")?
            .ok_or_else(|| fields.invalid("has no url".to_owned()))?;
        let kind = fields.kind()?;
        let (flag, text) = (|key: &str| fields.flag(key), |key: &str| fields.text(key));
        Ok(Self {
            url,
            is_template,
            username: text("username")?,
            password: text("password")?,
            ssh_private_key: text("sshPrivateKey")?,
            insecure: flag("insecure")?,
            kind: kind.to_owned(),
            name: text("name")?,
            tls_client_cert_data: text("tlsClientCertData")?,
            tls_client_cert_key: text("tlsClientCertKey")?,
            pass_credentials: flag("passCredentials")?,
            force_http_basic_auth: flag("forceHttpBasicAuth")?,
            enable_oci: flag("enableOCI")?,
            insecure_oci_force_http: flag("insecureOCIForceHttp")?,
            project: text("project")?,
            bearer_token: text("bearerToken")?,
            proxy: fields.proxy()?,
            no_proxy: text("noProxy")?,
            enable_lfs: flag("enableLfs")?,
            github_app: GithubApp::from_fields(&|key| fields.text(key), &|d| fields.invalid(d))?,
            unusable: None,
        })
    }

    /// The entry of a Secret [`RepoCredentials::from_secret`] refused: its URL, role and
    /// project (read leniently), and the refusal. `None` when not even those can be read.
    pub fn unusable(secret: &Value, refusal: &Error) -> Option<Self> {
        let fields = SecretFields {
            secret,
            name: secret_name(secret),
        };
        Some(Self {
            url: fields.field("url").ok().flatten()?,
            is_template: fields.is_template().ok()?,
            project: fields.text("project").ok().flatten(),
            kind: fields.kind().unwrap_or("git").to_owned(),
            unusable: Some(refusal.to_string()),
            ..Self::default()
        })
    }

    /// Picks the credentials for `url` among several Secrets, as Argo does, for the project of
    /// the render running on this thread ([`crate::scope::in_project`]; none: unscoped Secrets
    /// only): an exact repository match first (the project's own Secret, else an unscoped one,
    /// Argo's `getRepositorySecret`), then the template with the longest matching prefix. A
    /// Secret scoped to another project is never used. A template's prefix is matched on the
    /// parsed URL, not its text: same scheme, host and port, and its path a prefix of the URL's
    /// path segment by segment (`https://git.corp` matches neither
    /// `https://git.corp@evil.com/x` nor `https://git.corp.evil.com/x`).
    pub fn select<'a>(all: &'a [RepoCredentials], url: &str) -> Option<&'a RepoCredentials> {
        Self::select_for(all, url, crate::scope::current().as_deref())
    }

    /// [`RepoCredentials::select`] for an explicit project.
    pub fn select_for<'a>(
        all: &'a [RepoCredentials],
        url: &str,
        project: Option<&str>,
    ) -> Option<&'a RepoCredentials> {
        let want = normalize_url(url);
        let exact = |c: &&RepoCredentials| !c.is_template && normalize_url(&c.url) == want;
        all.iter()
            .filter(exact)
            .find(|c| c.project.is_some() && c.project.as_deref() == project)
            .or_else(|| all.iter().filter(exact).find(|c| c.project.is_none()))
            .or_else(|| {
                all.iter()
                    .filter(|c| c.is_template && c.usable_by(project))
                    .filter(|c| template_matches(&c.url, url))
                    .max_by_key(|c| (c.url.len(), c.project.is_some()))
            })
    }

    /// `(project, url)` when this is a repository Secret scoped to a project (not a template):
    /// its repository joins that project's `sourceRepos` (Argo's `GetProjectRepositories`).
    pub fn scoped_repository(&self) -> Option<(&str, &str)> {
        match (&self.project, self.is_template) {
            (Some(p), false) => Some((p.as_str(), self.url.as_str())),
            _ => None,
        }
    }

    /// Whether an Application of `project` may use these credentials: unscoped ones serve
    /// every project, scoped ones only their own.
    pub fn usable_by(&self, project: Option<&str>) -> bool {
        self.project.is_none() || (project.is_some() && self.project.as_deref() == project)
    }

    /// The part a download cache key takes from the scope: the current project when some
    /// Secret is scoped to it (what it downloads with them stays apart from other projects'
    /// copies), else nothing.
    pub(crate) fn cache_scope(all: &[RepoCredentials]) -> String {
        match crate::scope::current() {
            Some(p) if all.iter().any(|c| c.project.as_deref() == Some(p.as_str())) => {
                format!("project {p}")
            }
            _ => String::new(),
        }
    }

    /// The secret strings these credentials hold, for a [`Redactor`](crate::Redactor).
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = [
            &self.password,
            &self.ssh_private_key,
            &self.tls_client_cert_key,
            &self.bearer_token,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
        out.extend(self.github_app.iter().map(|a| a.private_key.clone()));
        out.extend(self.proxy.iter().filter_map(|p| proxy_password(p)));
        out
    }
}

/// CA certificates by server host name, from Argo CD's `argocd-tls-certs-cm` ConfigMap (one key
/// per host, PEM bundle as the value), trusted in addition to the system's roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsCerts {
    by_host: std::collections::BTreeMap<String, String>,
}

impl TlsCerts {
    /// Reads the ConfigMap as the API server returns it (its `data`).
    pub fn from_config_map(cm: &Value) -> Self {
        let by_host = cm
            .get("data")
            .and_then(Value::as_object)
            .map(|d| {
                d.iter()
                    .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Self { by_host }
    }

    /// Certificates for one host (as written in the ConfigMap: a host name, no port).
    pub fn with(mut self, host: &str, pem: &str) -> Self {
        self.by_host
            .insert(host.to_ascii_lowercase(), pem.to_owned());
        self
    }

    /// The PEM bundle for `host`, if the ConfigMap has one.
    pub fn for_host(&self, host: &str) -> Option<&str> {
        self.by_host
            .get(&host.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// Argo's URL normalisation for matching (`git.NormalizeGitURL`): lower case, no `.git`, no
/// trailing slash, no credentials.
pub(crate) fn normalize_url(url: &str) -> String {
    let url = crate::redact::strip_url_credentials(url.trim()).to_lowercase();
    let url = url.trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url).to_owned()
}

/// What a credential template is matched on: scheme, host, port and path segments.
#[derive(Debug, PartialEq, Eq)]
struct UrlParts {
    scheme: String,
    host: String,
    port: Option<u16>,
    path: Vec<String>,
}

/// `url` parsed (an scp-like `user@host:path` read as `ssh://user@host/path`), or `None` when it
/// is no URL with a host.
fn url_parts(url: &str) -> Option<UrlParts> {
    let url = url.trim();
    let url = if url.contains("://") {
        url.to_owned()
    } else {
        let (head, path) = url.split_once(':')?;
        if head.contains('/') {
            return None;
        }
        format!("ssh://{head}/{}", path.trim_start_matches('/'))
    };
    let parsed = reqwest::Url::parse(&url).ok()?;
    let mut path: Vec<String> = parsed
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(last) = path.last_mut()
        && let Some(stripped) = last.strip_suffix(".git")
    {
        *last = stripped.to_owned();
    }
    Some(UrlParts {
        scheme: parsed.scheme().to_owned(),
        host: parsed.host_str()?.to_ascii_lowercase(),
        port: parsed.port_or_known_default(),
        path,
    })
}

/// Whether the credential template `template` covers `url`.
fn template_matches(template: &str, url: &str) -> bool {
    match (url_parts(template), url_parts(url)) {
        (Some(t), Some(u)) => {
            t.scheme == u.scheme
                && t.host == u.host
                && t.port == u.port
                && u.path.starts_with(&t.path)
        }
        _ => false,
    }
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `namespace/name` of a Secret, for errors.
fn secret_name(secret: &Value) -> String {
    format!(
        "{}/{}",
        secret
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        secret
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    )
}

/// The fields of a repository Secret, read from `stringData` or else base64 `data`.
struct SecretFields<'a> {
    secret: &'a Value,
    /// `namespace/name`, for errors.
    name: String,
}

impl SecretFields<'_> {
    fn invalid(&self, detail: String) -> Error {
        Error::InvalidSecret {
            name: self.name.clone(),
            detail,
        }
    }

    /// A `repo-creds` template or a `repository`, by the Secret's label; anything else refused.
    fn is_template(&self) -> Result<bool> {
        let label = self
            .secret
            .pointer("/metadata/labels")
            .and_then(|l| l.get(SECRET_TYPE_LABEL))
            .and_then(Value::as_str);
        match label {
            Some("repository") => Ok(false),
            Some("repo-creds") => Ok(true),
            other => Err(self.invalid(format!(
                "label {SECRET_TYPE_LABEL} is {other:?}, expected \"repository\" or \"repo-creds\""
            ))),
        }
    }

    fn field(&self, key: &str) -> Result<Option<String>> {
        if let Some(v) = self
            .secret
            .pointer(&format!("/stringData/{key}"))
            .and_then(Value::as_str)
        {
            return Ok(Some(v.to_owned()));
        }
        match self
            .secret
            .pointer(&format!("/data/{key}"))
            .and_then(Value::as_str)
        {
            None => Ok(None),
            Some(b64) => {
                let bytes = decode_base64(b64)
                    .ok_or_else(|| self.invalid(format!("data.{key} is not valid base64")))?;
                String::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| self.invalid(format!("data.{key} is not UTF-8")))
            }
        }
    }

    /// `type`: git (also when empty or absent), helm or oci.
    fn kind(&self) -> Result<&'static str> {
        let kind = self.field("type")?.filter(|k| !k.is_empty());
        match kind.as_deref() {
            None | Some("git") => Ok("git"),
            Some("helm") => Ok("helm"),
            Some("oci") => Ok("oci"),
            Some(other) => Err(self.invalid(format!(
                "type {other:?} is not supported (git, helm or oci)"
            ))),
        }
    }

    fn flag(&self, key: &str) -> Result<bool> {
        Ok(self.field(key)?.is_some_and(|v| v == "true"))
    }

    fn text(&self, key: &str) -> Result<Option<String>> {
        Ok(self.field(key)?.filter(|s| !s.is_empty()))
    }

    /// `proxy`: an `http://` or `https://` URL with a host, or refused (a proxy that
    /// cannot be used must not silently become a direct connection).
    fn proxy(&self) -> Result<Option<String>> {
        let Some(proxy) = self.text("proxy")? else {
            return Ok(None);
        };
        let parsed = reqwest::Url::parse(proxy.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        match parsed {
            Some(_) => Ok(Some(proxy.trim().to_owned())),
            None => Err(self.invalid(
                "proxy is not a URL (expected http://host:port or https://host:port)".to_owned(),
            )),
        }
    }
}

/// The password of a proxy URL's userinfo, a secret like the others.
fn proxy_password(proxy: &str) -> Option<String> {
    reqwest::Url::parse(proxy)
        .ok()
        .and_then(|u| u.password().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret(kind: &str, data: Value) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "repo-1", "namespace": "argocd", "resourceVersion": "812",
                "uid": "1f0c7d0e-3a43-4a55-9a31-6d8b2f6f0d10",
                "labels": {"argocd.argoproj.io/secret-type": kind}},
            "data": data
        })
    }

    #[test]
    fn reads_base64_data_as_the_api_server_returns_it() {
        // url=https://git.example.com/team/app.git username=bot password=s3cr3t-token type=git
        let s = secret(
            "repository",
            json!({"url": "aHR0cHM6Ly9naXQuZXhhbXBsZS5jb20vdGVhbS9hcHAuZ2l0",
                   "username": "Ym90", "password": "czNjcjN0LXRva2Vu", "type": "Z2l0"}),
        );
        let c = RepoCredentials::from_secret(&s).unwrap();
        assert_eq!(c.url, "https://git.example.com/team/app.git");
        assert_eq!(c.username.as_deref(), Some("bot"));
        assert_eq!(c.password.as_deref(), Some("s3cr3t-token"));
        assert!(!c.is_template && !c.insecure);
        assert_eq!(c.kind, "git");
        assert!(!format!("{c:?}").contains("s3cr3t"));
    }

    #[test]
    fn reads_helm_repository_secrets() {
        let mut s = secret("repository", json!({}));
        s["stringData"] = json!({
            "type": "helm", "name": "stable", "url": "https://charts.example.com",
            "username": "bot", "password": "pw-1", "tlsClientCertData": "CERT",
            "tlsClientCertKey": "KEY-1", "passCredentials": "true", "forceHttpBasicAuth": "true",
            "enableOCI": "false", "insecure": "true"
        });
        let c = RepoCredentials::from_secret(&s).unwrap();
        assert_eq!(c.kind, "helm");
        assert_eq!(c.name.as_deref(), Some("stable"));
        assert!(c.pass_credentials && c.force_http_basic_auth && c.insecure && !c.enable_oci);
        assert_eq!(c.tls_client_cert_data.as_deref(), Some("CERT"));
        assert_eq!(c.secrets(), ["pw-1", "KEY-1"]);
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("pw-1") && !shown.contains("KEY-1"),
            "{shown}"
        );
        s["stringData"]["type"] = json!("svn");
        let err = RepoCredentials::from_secret(&s).unwrap_err().to_string();
        assert!(err.contains("\"svn\" is not supported"), "{err}");
        let certs = TlsCerts::from_config_map(&json!({"data": {"Charts.Example.com": "PEM"}}));
        assert_eq!(certs.for_host("charts.example.com"), Some("PEM"));
        assert_eq!(certs.for_host("other"), None);
    }

    #[test]
    fn string_data_templates_and_selection() {
        let mut t = secret("repo-creds", json!({}));
        t["stringData"] = json!({"url": "https://git.example.com/team", "password": "p"});
        let template = RepoCredentials::from_secret(&t).unwrap();
        let mut e = secret("repository", json!({}));
        e["stringData"] = json!({"url": "https://git.example.com/team/app", "password": "q"});
        let exact = RepoCredentials::from_secret(&e).unwrap();
        let all = [template.clone(), exact.clone()];
        assert_eq!(
            RepoCredentials::select(&all, "https://git.example.com/team/app.git"),
            Some(&exact)
        );
        assert_eq!(
            RepoCredentials::select(&all, "https://git.example.com/team/other"),
            Some(&template)
        );
        assert_eq!(RepoCredentials::select(&all, "https://elsewhere/x"), None);
    }

    /// Issue #26 item 8: a template matched by plain string prefix gave its credentials to
    /// `https://git.corp@evil.com/x` and `https://git.corp.evil.com/x`.
    #[test]
    fn templates_match_on_scheme_host_port_and_whole_path_segments() {
        let template = |url: &str| RepoCredentials {
            url: url.into(),
            is_template: true,
            password: Some("p".into()),
            ..Default::default()
        };
        let corp = [template("https://git.corp")];
        for url in [
            "https://git.corp/team/app.git",
            "https://GIT.corp:443/x",
            "https://bot@git.corp/x",
        ] {
            assert!(RepoCredentials::select(&corp, url).is_some(), "{url}");
        }
        for url in [
            "https://git.corp@evil.com/x",
            "https://git.corp.evil.com/x",
            "https://git.corp:8443/x",
            "http://git.corp/x",
            "ssh://git@git.corp/x",
            "https://evil.com/https://git.corp/x",
        ] {
            assert!(RepoCredentials::select(&corp, url).is_none(), "{url}");
        }
        let team = [template("https://git.corp/team")];
        assert!(RepoCredentials::select(&team, "https://git.corp/team/app").is_some());
        assert!(RepoCredentials::select(&team, "https://git.corp/team-evil/app").is_none());
        let ssh = [template("git@git.corp:team")];
        assert!(RepoCredentials::select(&ssh, "git@git.corp:team/app.git").is_some());
        assert!(RepoCredentials::select(&ssh, "ssh://git@git.corp/team/app").is_some());
        assert!(RepoCredentials::select(&ssh, "git@git.corp.evil.com:team/app").is_none());
    }

    /// Issue #27: a project-scoped Secret (`project` key) serves its own project only; the
    /// project's own exact Secret wins over an unscoped one (Argo's `getRepositorySecret`).
    #[test]
    fn project_scoped_secrets_serve_their_project_only() {
        let read = |kind: &str, data: Value| {
            let mut s = secret(kind, json!({}));
            s["stringData"] = data;
            RepoCredentials::from_secret(&s).unwrap()
        };
        let url = "https://git.corp/team/app.git";
        let scoped = read(
            "repository",
            json!({"url": url, "password": "a", "project": "payments"}),
        );
        assert_eq!(scoped.project.as_deref(), Some("payments"));
        let all = [scoped.clone()];
        assert_eq!(
            RepoCredentials::select_for(&all, url, Some("payments")),
            Some(&scoped)
        );
        for other in [Some("billing"), Some("Payments"), Some(" payments"), None] {
            assert_eq!(
                RepoCredentials::select_for(&all, url, other),
                None,
                "{other:?}"
            );
        }
        // Outside any render scope only unscoped Secrets are used.
        assert_eq!(RepoCredentials::select(&all, url), None);
        assert_eq!(
            crate::scope::in_project("payments", || RepoCredentials::select(&all, url).cloned()),
            Some(scoped.clone())
        );
        let open = read("repository", json!({"url": url, "password": "u"}));
        let both = [open.clone(), scoped.clone()];
        assert_eq!(
            RepoCredentials::select_for(&both, url, Some("payments")),
            Some(&scoped)
        );
        assert_eq!(
            RepoCredentials::select_for(&both, url, Some("billing")),
            Some(&open)
        );
        // Templates: a scoped one is skipped by other projects, who fall back to an unscoped one.
        let t_scoped = read(
            "repo-creds",
            json!({"url": "https://git.corp/team", "password": "t", "project": "payments"}),
        );
        let t_open = read(
            "repo-creds",
            json!({"url": "https://git.corp", "password": "o"}),
        );
        let templates = [t_open.clone(), t_scoped.clone()];
        assert_eq!(
            RepoCredentials::select_for(&templates, url, Some("payments")),
            Some(&t_scoped)
        );
        assert_eq!(
            RepoCredentials::select_for(&templates, url, Some("billing")),
            Some(&t_open)
        );
    }

    /// Hostile `project` values: empty means unscoped (as in Argo); anything else is compared
    /// byte for byte, so a nonexistent project or odd characters scope the Secret to nothing
    /// any Application can name.
    #[test]
    fn hostile_project_keys() {
        let with_project = |p: &str| {
            let mut s = secret("repository", json!({}));
            s["stringData"] = json!({"url": "https://git.corp/x", "password": "p", "project": p});
            RepoCredentials::from_secret(&s).unwrap()
        };
        assert_eq!(with_project("").project, None);
        for odd in [
            "no-such-project",
            "*",
            "pay*",
            "../default",
            "default\n",
            "\u{0}",
            " ",
        ] {
            let c = with_project(odd);
            assert_eq!(c.project.as_deref(), Some(odd));
            for asking in ["default", "payments", "no-such"] {
                assert!(!c.usable_by(Some(asking)), "{odd:?} used by {asking}");
            }
            assert!(!c.usable_by(None));
        }
        let huge = "p".repeat(1 << 20);
        assert!(!with_project(&huge).usable_by(Some("p")));
        let mut b64 = secret("repository", json!({"url": "aHR0cHM6Ly9naXQuY29ycC94"}));
        b64["data"]["project"] = json!("//79");
        let err = RepoCredentials::from_secret(&b64).unwrap_err().to_string();
        assert!(err.contains("data.project is not UTF-8"), "{err}");
    }

    /// A refused Secret is kept with its URL, role, project and the refusal (naming the field),
    /// and nothing of its values.
    #[test]
    fn a_refused_secret_is_kept_as_unusable_with_the_reason() {
        let mut s = secret("repository", json!({}));
        s["stringData"] = json!({"url": "https://git.corp/x", "project": "team",
            "githubAppID": "1", "githubAppInstallationID": "2", "githubAppPrivateKey": "key-text-1"});
        let err = RepoCredentials::from_secret(&s).unwrap_err();
        let kept = RepoCredentials::unusable(&s, &err).unwrap();
        assert_eq!(kept.url, "https://git.corp/x");
        assert_eq!(kept.project.as_deref(), Some("team"));
        let why = kept.unusable.clone().unwrap();
        assert!(why.contains("githubAppPrivateKey"), "{why}");
        assert!(!format!("{why}{kept:?}").contains("key-text-1"));
        let all = [kept];
        let picked = RepoCredentials::select_for(&all, "https://git.corp/x", Some("team"));
        assert!(picked.is_some_and(|c| c.unusable.is_some()));
        // Without even a URL there is nothing to keep.
        let no_url = secret("repository", json!({}));
        let err = RepoCredentials::from_secret(&no_url).unwrap_err();
        assert!(RepoCredentials::unusable(&no_url, &err).is_none());
    }

    #[test]
    fn refuses_secrets_of_other_roles_and_bad_base64() {
        let err =
            RepoCredentials::from_secret(&secret("cluster", json!({"url": "eA=="}))).unwrap_err();
        assert!(err.to_string().contains("argocd/repo-1"), "{err}");
        let err =
            RepoCredentials::from_secret(&secret("repository", json!({"url": "!!"}))).unwrap_err();
        assert!(
            err.to_string().contains("data.url is not valid base64"),
            "{err}"
        );
    }
}
