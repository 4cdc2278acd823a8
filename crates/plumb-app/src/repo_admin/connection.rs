//! The connection check of a repository (Argo's `TestRepository`): Git repositories are listed
//! (`ls-remote`), Helm repositories have their `index.yaml` fetched, with the credentials given
//! (or, when none are, those of the matching credential template) and the CA certificates of
//! `argocd-tls-certs-cm`. Runs through plumb-source, in a throw-away cache, off the async
//! threads. Connection states are kept a minute per Secret version, as Argo caches them.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use plumb_source::{Config, KnownHosts, Renderer, RepoCredentials, TlsCerts};
use serde_json::{Value, json};

use super::error::Error;
use super::fields::RepoSpec;

/// How long a connection state is reused (Argo caches them too).
const STATE_TTL: Duration = Duration::from_secs(60);

/// What the check trusts: the CA certificates of `argocd-tls-certs-cm` and the SSH host keys of
/// `argocd-ssh-known-hosts-cm`, as the repo server does.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// CA certificates by server name.
    pub certs: TlsCerts,
    /// Accepted SSH host keys.
    pub known_hosts: KnownHosts,
}

/// The longest a check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

static STATES: LazyLock<Mutex<HashMap<String, (Instant, Value)>>> = LazyLock::new(Mutex::default);

fn credentials(spec: &RepoSpec) -> Result<RepoCredentials, Error> {
    RepoCredentials::from_secret(&spec.as_secret_json()).map_err(|e| Error::Invalid {
        field: spec.role.url_key().into(),
        detail: e.to_string(),
    })
}

/// Argo's `CopyCredentialsFrom`: a repository without credentials uses those of the template
/// matching its URL (the longest prefix), its own settings kept.
fn with_template(spec: &RepoSpec, templates: &[RepoSpec]) -> Result<RepoCredentials, Error> {
    let own = credentials(spec)?;
    if spec.has_credentials() {
        return Ok(own);
    }
    let all: Vec<RepoCredentials> = templates
        .iter()
        .filter_map(|t| credentials(t).ok())
        .collect();
    let Some(t) = RepoCredentials::select(&all, &spec.url).and_then(|c| {
        templates
            .iter()
            .find(|t| credentials(t).ok().as_ref() == Some(c))
    }) else {
        return Ok(own);
    };
    let mut secret = spec.as_secret_json();
    let lent = t.as_secret_json();
    for key in CREDENTIAL_KEYS {
        if let Some(v) = lent.pointer(&format!("/stringData/{key}")) {
            secret["stringData"][key] = v.clone();
        }
    }
    RepoCredentials::from_secret(&secret).map_err(|e| Error::Invalid {
        field: spec.role.url_key().into(),
        detail: e.to_string(),
    })
}

/// The keys a template lends.
const CREDENTIAL_KEYS: &[&str] = &[
    "username",
    "password",
    "bearerToken",
    "sshPrivateKey",
    "tlsClientCertData",
    "tlsClientCertKey",
    "githubAppPrivateKey",
    "githubAppID",
    "githubAppInstallationID",
    "githubAppEnterpriseBaseUrl",
];

/// Checks that `spec`'s repository answers with its credentials (`templates` lend theirs when
/// it has none). The error is Argo's message: `error testing repository connectivity: ...`.
pub async fn check(spec: &RepoSpec, templates: &[RepoSpec], trust: Trust) -> Result<(), Error> {
    let creds = vec![with_template(spec, templates)?];
    let probe = Probe {
        url: spec.url.clone(),
        kind: spec.kind().to_owned(),
        oci: spec.flag("enableOCI"),
        project: spec.project().to_owned(),
        has_login: creds.iter().any(|c| {
            c.username.as_deref().is_some_and(|u| !u.is_empty())
                && c.password.as_deref().is_some_and(|p| !p.is_empty())
        }),
    };
    let run = tokio::task::spawn_blocking(move || probe.run(creds, trust));
    let outcome = tokio::time::timeout(CHECK_TIMEOUT, run)
        .await
        .map_err(|_| format!("no answer within {}s", CHECK_TIMEOUT.as_secs()))
        .and_then(|joined| joined.map_err(|e| format!("the check failed: {e}")))
        .and_then(|r| r);
    outcome.map_err(|detail| {
        Error::Connection(format!("error testing repository connectivity: {detail}"))
    })
}

/// One connection check: what to ask, and of whom.
struct Probe {
    url: String,
    kind: String,
    oci: bool,
    project: String,
    /// Both a username and a password (what Argo's Helm OCI check needs to log in).
    has_login: bool,
}

impl Probe {
    /// Runs the check in a throw-away cache, as the repository's project (a project-scoped
    /// Secret lends its credentials to its own project only).
    fn run(self, creds: Vec<RepoCredentials>, trust: Trust) -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| format!("making a scratch directory: {e}"))?;
        let renderer = Renderer::new(Config::new(dir.path())).map_err(|e| e.to_string())?;
        renderer.set_repositories(creds, trust.certs);
        renderer.set_known_hosts(trust.known_hosts);
        if self.project.is_empty() {
            self.ask(&renderer)
        } else {
            plumb_source::in_project(&self.project, || self.ask(&renderer))
        }
    }

    /// Argo's `TestRepository`: Git `ls-remote`; Helm `index.yaml`; OCI (and Helm with
    /// `enableOCI`) a ping of the registry. Argo's Helm OCI check only logs in when a username
    /// and a password are given and otherwise assumes the registry answers; so does Plumb.
    fn ask(&self, renderer: &Renderer) -> Result<(), String> {
        match (self.kind.as_str(), self.oci) {
            ("git", _) => renderer
                .git()
                .ls_remote(&self.url)
                .map(drop)
                .map_err(|e| format!("unable to ls-remote HEAD on repository: {e}")),
            ("helm", false) => renderer
                .helm_repos()
                .check_index(&self.url)
                .map_err(|e| e.to_string()),
            ("helm", true) => {
                if self.url.contains("://") || self.url.trim().is_empty() {
                    return Err(
                        "OCI Helm repository URL should include hostname and port only".into(),
                    );
                }
                if !self.has_login {
                    return Ok(());
                }
                renderer
                    .oci_registries()
                    .check_registry(&self.url)
                    .map_err(|e| format!("error logging into OCI registry: {e}"))
            }
            ("oci", _) => renderer
                .oci_registries()
                .check_registry(&self.url)
                .map_err(|e| e.to_string()),
            (other, _) => Err(format!("unsupported repository type {other:?}")),
        }
    }
}

/// Argo's `ConnectionState` of `spec` (`Successful` or `Failed` with the message, and when it
/// was found), from the cache unless `refresh`. `key` names the stored version checked.
pub async fn state(
    key: &str,
    spec: &RepoSpec,
    templates: &[RepoSpec],
    trust: Trust,
    refresh: bool,
) -> Value {
    if !refresh
        && let Ok(map) = STATES.lock()
        && let Some((at, v)) = map.get(key)
        && at.elapsed() < STATE_TTL
    {
        return v.clone();
    }
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or(jiff::Timestamp::now());
    let value = match check(spec, templates, trust).await {
        Ok(()) => json!({"status": "Successful", "message": "", "attemptedAt": now.to_string()}),
        Err(e) => json!({"status": "Failed",
            "message": format!("Unable to connect to repository: {e}"),
            "attemptedAt": now.to_string()}),
    };
    if let Ok(mut map) = STATES.lock() {
        if map.len() > 4096 {
            map.clear();
        }
        map.insert(key.to_owned(), (Instant::now(), value.clone()));
    }
    value
}

/// Forgets the cached state of `key` (the repository was deleted or changed).
pub fn forget(key: &str) {
    if let Ok(mut map) = STATES.lock() {
        map.remove(key);
    }
}
