//! The fields of Argo CD's repository and credential-template Secrets, one table read by every
//! direction: an API body or CLI flags in ([`RepoSpec::from_request`]), Secret data out
//! ([`RepoSpec::secret_data`], Argo's `repositoryToSecret` / `repoCredsToSecret`), Secret data in
//! ([`RepoSpec::from_data`]) and the masked answer out ([`RepoSpec::sanitized`], Argo's
//! `Repository.Sanitized`). Source: Argo CD `util/db/repository_secrets.go`,
//! `pkg/apis/application/v1alpha1/repository_types.go`.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use super::error::Error;
use super::pem_check::{self, PemRule};

/// What a Secret describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// One repository (`argocd.argoproj.io/secret-type: repository`, name `repo-<hash>`).
    Repository,
    /// A credential template for every repository under a URL prefix (`repo-creds`,
    /// `creds-<hash>`).
    Template,
}

impl Role {
    /// The `argocd.argoproj.io/secret-type` label value.
    pub fn label(self) -> &'static str {
        match self {
            Role::Repository => "repository",
            Role::Template => "repo-creds",
        }
    }

    /// The prefix of the Secret names Argo generates.
    pub fn prefix(self) -> &'static str {
        match self {
            Role::Repository => "repo",
            Role::Template => "creds",
        }
    }

    /// The key of the URL in Argo's API objects (`Repository.repo`, `RepoCreds.url`).
    pub fn url_key(self) -> &'static str {
        match self {
            Role::Repository => "repo",
            Role::Template => "url",
        }
    }

    /// How Argo's messages name the object.
    pub fn noun(self) -> &'static str {
        match self {
            Role::Repository => "repository",
            Role::Template => "repository credentials",
        }
    }
}

/// How a field's value is written in the Secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string shown in answers.
    Text,
    /// A credential: stored, never answered.
    Secret,
    /// `"true"` / `"false"`.
    Flag,
    /// A decimal int64.
    Number,
}

/// One field: its key (the same in Argo's JSON and in the Secret), Go's field name (Argo's "difference
/// in keys" message), kind, largest accepted value, what a PEM value must hold, and whether
/// credential templates have it.
struct Field {
    key: &'static str,
    go: &'static str,
    kind: Kind,
    max: usize,
    pem: Option<PemRule>,
    templates: bool,
}

const KIB: usize = 1024;

const fn field(key: &'static str, go: &'static str, kind: Kind, max: usize) -> Field {
    Field {
        key,
        go,
        kind,
        max,
        pem: None,
        templates: true,
    }
}

const fn pem(key: &'static str, go: &'static str, kind: Kind, rule: PemRule) -> Field {
    Field {
        key,
        go,
        kind,
        max: 64 * KIB,
        pem: Some(rule),
        templates: true,
    }
}

const fn repo_only(mut f: Field) -> Field {
    f.templates = false;
    f
}

/// Argo's fields, in the order `repositoryToSecret` writes them.
const FIELDS: &[Field] = &[
    repo_only(field("name", "Name", Kind::Text, KIB)),
    repo_only(field("project", "Project", Kind::Text, 253)),
    field("username", "Username", Kind::Text, KIB),
    field("password", "Password", Kind::Secret, 16 * KIB),
    field("bearerToken", "BearerToken", Kind::Secret, 16 * KIB),
    pem(
        "sshPrivateKey",
        "SSHPrivateKey",
        Kind::Secret,
        PemRule::PrivateKey,
    ),
    field("enableOCI", "EnableOCI", Kind::Flag, 5),
    field(
        "insecureOCIForceHttp",
        "InsecureOCIForceHttp",
        Kind::Flag,
        5,
    ),
    pem(
        "tlsClientCertData",
        "TLSClientCertData",
        Kind::Text,
        PemRule::Certificate,
    ),
    pem(
        "tlsClientCertKey",
        "TLSClientCertKey",
        Kind::Secret,
        PemRule::PrivateKey,
    ),
    field("type", "Type", Kind::Text, 8),
    pem(
        "githubAppPrivateKey",
        "GithubAppPrivateKey",
        Kind::Secret,
        PemRule::PrivateKey,
    ),
    field("githubAppID", "GithubAppId", Kind::Number, 20),
    field(
        "githubAppInstallationID",
        "GithubAppInstallationId",
        Kind::Number,
        20,
    ),
    field(
        "githubAppEnterpriseBaseUrl",
        "GitHubAppEnterpriseBaseURL",
        Kind::Text,
        2 * KIB,
    ),
    repo_only(field(
        "insecureIgnoreHostKey",
        "InsecureIgnoreHostKey",
        Kind::Flag,
        5,
    )),
    repo_only(field("insecure", "Insecure", Kind::Flag, 5)),
    repo_only(field("enableLfs", "EnableLFS", Kind::Flag, 5)),
    field("proxy", "Proxy", Kind::Text, 2 * KIB),
    field("noProxy", "NoProxy", Kind::Text, 8 * KIB),
    field("forceHttpBasicAuth", "ForceHttpBasicAuth", Kind::Flag, 5),
    repo_only(field("depth", "Depth", Kind::Number, 20)),
    repo_only(field(
        "webhookManifestCacheWarmDisabled",
        "WebhookManifestCacheWarmDisabled",
        Kind::Flag,
        5,
    )),
];

/// Argo's credential kinds Plumb cannot use: refused when set, never stored unused.
const UNSUPPORTED: &[&str] = &[
    "gcpServiceAccountKey",
    "useAzureWorkloadIdentity",
    "azureServicePrincipalClientId",
    "azureServicePrincipalClientSecret",
    "azureServicePrincipalTenantId",
    "azureActiveDirectoryEndpoint",
];

/// The longest URL accepted.
const MAX_URL: usize = 2 * KIB;

/// A repository or credential template as Argo's API and Secrets describe it. Values are kept
/// as the Secret holds them; only set ones (non-empty, `true`, non-zero) are present.
#[derive(Clone, PartialEq, Eq)]
pub struct RepoSpec {
    /// Repository or template.
    pub role: Role,
    /// The repository URL (a URL prefix for a template).
    pub url: String,
    values: BTreeMap<&'static str, String>,
}

impl fmt::Debug for RepoSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: BTreeMap<_, _> = self
            .values
            .iter()
            .map(|(k, v)| match lookup(k).map(|f| f.kind) {
                Some(Kind::Secret) => (*k, "***"),
                _ => (*k, v.as_str()),
            })
            .collect();
        f.debug_struct("RepoSpec")
            .field("role", &self.role)
            .field("url", &self.url)
            .field("values", &shown)
            .finish()
    }
}

fn lookup(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

fn fields_of(role: Role) -> impl Iterator<Item = &'static Field> {
    FIELDS
        .iter()
        .filter(move |f| role == Role::Repository || f.templates)
}

fn invalid(field: &str, detail: impl Into<String>) -> Error {
    Error::Invalid {
        field: field.to_owned(),
        detail: detail.into(),
    }
}

/// A request value as the Secret string (`None`: unset), checked against the field's rules.
fn request_value(f: &Field, value: &Value) -> Result<Option<String>, Error> {
    let text = match (f.kind, value) {
        (_, Value::Null) => return Ok(None),
        (Kind::Text | Kind::Secret, Value::String(s)) => s.clone(),
        (Kind::Flag, Value::Bool(b)) => b.to_string(),
        (Kind::Flag, Value::String(s)) if s == "true" || s == "false" => s.clone(),
        (Kind::Number, Value::Number(n)) => n.to_string(),
        // grpc-gateway writes int64 as a string.
        (Kind::Number, Value::String(s)) => s.clone(),
        (kind, _) => {
            return Err(invalid(f.key, format!("expected {}", kind_name(kind))));
        }
    };
    if text.len() > f.max {
        return Err(invalid(
            f.key,
            format!("{} bytes, more than the {} accepted", text.len(), f.max),
        ));
    }
    if f.kind == Kind::Number && text.parse::<i64>().is_err() {
        return Err(invalid(f.key, "expected an integer"));
    }
    if matches!(f.kind, Kind::Text) && f.pem.is_none() && text.chars().any(char::is_control) {
        return Err(invalid(f.key, "control characters are not accepted"));
    }
    if let Some(rule) = f.pem.filter(|_| !text.is_empty()) {
        pem_check::check(&text, rule).map_err(|detail| invalid(f.key, detail))?;
    }
    Ok(is_set(f.kind, &text).then_some(text))
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Text | Kind::Secret => "a string",
        Kind::Flag => "true or false",
        Kind::Number => "an integer",
    }
}

fn is_set(kind: Kind, text: &str) -> bool {
    match kind {
        Kind::Text | Kind::Secret => !text.is_empty(),
        Kind::Flag => text == "true",
        Kind::Number => text.parse::<i64>().is_ok_and(|n| n != 0),
    }
}

fn default_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Text | Kind::Secret => "",
        Kind::Flag => "false",
        Kind::Number => "0",
    }
}

/// The URL of a request, checked.
fn request_url(role: Role, body: &Map<String, Value>) -> Result<String, Error> {
    let key = role.url_key();
    let url = match body.get(key) {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(invalid(key, "expected a string")),
    };
    if url.is_empty() {
        return Err(match role {
            Role::Template => Error::InvalidRequest("must specify URL".into()),
            Role::Repository => invalid(key, "must not be empty"),
        });
    }
    if url.len() > MAX_URL {
        return Err(invalid(
            key,
            format!("{} bytes, more than the {MAX_URL} accepted", url.len()),
        ));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid(
            key,
            "spaces and control characters are not accepted",
        ));
    }
    Ok(url.to_owned())
}

impl RepoSpec {
    /// Reads Argo's `Repository` (role Repository) or `RepoCreds` (Template) JSON object, as the
    /// API receives it. Every field is checked: its JSON type, its size, PEM fields parsed,
    /// `type` one of git, helm and oci; credential kinds Plumb cannot use are refused.
    pub fn from_request(role: Role, body: &Value) -> Result<Self, Error> {
        let body = body
            .as_object()
            .ok_or_else(|| Error::InvalidRequest("missing payload in request".into()))?;
        let url = request_url(role, body)?;
        for key in UNSUPPORTED {
            let set = match body.get(*key) {
                None | Some(Value::Null) | Some(Value::Bool(false)) => false,
                Some(Value::String(s)) => !s.is_empty(),
                Some(_) => true,
            };
            if set {
                return Err(invalid(key, "not supported by Plumb"));
            }
        }
        let mut values = BTreeMap::new();
        for f in fields_of(role) {
            if let Some(v) = body.get(f.key)
                && let Some(text) = request_value(f, v)?
            {
                values.insert(f.key, text);
            }
        }
        if let Some(t) = values.get("type")
            && !matches!(t.as_str(), "git" | "helm" | "oci")
        {
            return Err(invalid("type", format!("{t:?} is not git, helm or oci")));
        }
        Ok(Self { role, url, values })
    }

    /// Reads a Secret's data (decoded). Argo reads booleans and numbers strictly: a value it
    /// cannot read is returned as the problem (Argo's "Configuration error"), with what could
    /// be read.
    pub fn from_data(role: Role, data: &BTreeMap<String, String>) -> (Self, Option<String>) {
        let mut problem = None;
        let mut values = BTreeMap::new();
        for f in fields_of(role) {
            let Some(text) = data.get(f.key) else {
                continue;
            };
            let ok = match f.kind {
                Kind::Flag => matches!(
                    text.as_str(),
                    "1" | "t"
                        | "T"
                        | "TRUE"
                        | "true"
                        | "True"
                        | "0"
                        | "f"
                        | "F"
                        | "FALSE"
                        | "false"
                        | "False"
                ),
                Kind::Number => text.parse::<i64>().is_ok(),
                Kind::Text | Kind::Secret => true,
            };
            if !ok {
                problem.get_or_insert_with(|| format!("{}: {:?} cannot be read", f.key, text));
                continue;
            }
            let text = match f.kind {
                Kind::Flag if matches!(text.as_str(), "1" | "t" | "T" | "TRUE" | "True") => {
                    "true".to_owned()
                }
                _ => text.clone(),
            };
            if is_set(f.kind, &text) {
                values.insert(f.key, text);
            }
        }
        let url = data.get("url").cloned().unwrap_or_default();
        (Self { role, url, values }, problem)
    }

    /// A field's value, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A flag's value.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key) == Some("true")
    }

    /// The project of a project-scoped repository (empty: global).
    pub fn project(&self) -> &str {
        self.get("project").unwrap_or_default()
    }

    /// `type`, defaulted as Argo's `Normalize` does (`oci://` URLs are oci, the rest git).
    pub fn kind(&self) -> &str {
        match self.get("type") {
            Some(t) => t,
            None if self.url.starts_with("oci://") => "oci",
            None => "git",
        }
    }

    /// Argo's `HasCredentials` (of the unmasked object).
    pub fn has_credentials(&self) -> bool {
        [
            "username",
            "password",
            "bearerToken",
            "sshPrivateKey",
            "tlsClientCertData",
            "githubAppPrivateKey",
        ]
        .iter()
        .any(|k| self.values.contains_key(k))
    }

    /// The credential values held, to check that no output carries them.
    pub fn secrets(&self) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(k, _)| lookup(k).is_some_and(|f| f.kind == Kind::Secret))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The Secret's `data` for this spec over `old` (the existing Secret's, or empty): Argo's
    /// `updateSecret*` write a key when it is set or was present before, and keep every other
    /// key of the old Secret.
    pub fn secret_data(&self, old: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut data = old.clone();
        data.insert("url".into(), self.url.clone());
        for f in fields_of(self.role) {
            match self.values.get(f.key) {
                Some(v) => {
                    data.insert(f.key.into(), v.clone());
                }
                None if old.contains_key(f.key) => {
                    data.insert(f.key.into(), default_of(f.kind).into());
                }
                None => {}
            }
        }
        data
    }

    /// Go's names of the fields that differ from `other` (type defaulted to git on both sides,
    /// as Argo compares), for Argo's "existing ... spec is different" message.
    pub fn differences(&self, other: &RepoSpec) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.url != other.url {
            out.push(match self.role {
                Role::Repository => "Repo",
                Role::Template => "URL",
            });
        }
        for f in fields_of(self.role) {
            let (a, b) = if f.key == "type" {
                (Some(self.kind()), Some(other.kind()))
            } else {
                (self.get(f.key), other.get(f.key))
            };
            if a != b {
                out.push(f.go);
            }
        }
        out
    }

    /// Argo's `Repository.Sanitized()` of a repository (plus its connection state), or the
    /// list item of a template (`url`, `username`, `type`, `enableOCI`): never a password,
    /// token, key or client certificate. Credentials in a proxy URL are removed too.
    pub fn sanitized(&self, inherited: bool) -> Value {
        let mut out = Map::new();
        let mut put = |k: &str, v: Value| {
            let keep = match &v {
                Value::String(s) => !s.is_empty(),
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_i64() != Some(0),
                _ => true,
            };
            if keep {
                out.insert(k.to_owned(), v);
            }
        };
        let text = |k: &str| json!(self.get(k).unwrap_or_default());
        let number = |k: &str| json!(self.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
        put(self.role.url_key(), json!(self.url));
        put("username", text("username"));
        put("type", json!(self.kind()));
        put("enableOCI", json!(self.flag("enableOCI")));
        if self.role == Role::Template {
            return Value::Object(out);
        }
        put("name", text("name"));
        put(
            "insecure",
            json!(self.flag("insecure") || self.flag("insecureIgnoreHostKey")),
        );
        put("enableLfs", json!(self.flag("enableLfs")));
        put(
            "proxy",
            json!(plumb_source::strip_url_credentials(
                self.get("proxy").unwrap_or_default()
            )),
        );
        put("noProxy", text("noProxy"));
        put("project", text("project"));
        put("forceHttpBasicAuth", json!(self.flag("forceHttpBasicAuth")));
        put("inheritedCreds", json!(inherited));
        put("githubAppID", number("githubAppID"));
        put("githubAppInstallationID", number("githubAppInstallationID"));
        put(
            "githubAppEnterpriseBaseUrl",
            text("githubAppEnterpriseBaseUrl"),
        );
        put("depth", number("depth"));
        Value::Object(out)
    }

    /// This spec as a Secret in Argo's layout with the data in `stringData`: what
    /// `plumb_source::RepoCredentials::from_secret` reads (the connection check).
    pub fn as_secret_json(&self) -> Value {
        json!({
            "metadata": {"name": secret_name(self.role, &self.url, self.project()),
                         "labels": {plumb_source::SECRET_TYPE_LABEL: self.role.label()}},
            "stringData": self.secret_data(&BTreeMap::new()),
        })
    }
}

/// The Secret name Argo gives a repository or template (`RepoURLToSecretName`): the prefix and
/// the FNV-32a hash of the URL followed by the project.
pub fn secret_name(role: Role, url: &str, project: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in url.bytes().chain(project.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{}-{h}", role.prefix())
}

/// Argo's `git.SameURL`: the URLs compared lower-cased, without credentials, a trailing slash
/// or `.git`.
pub fn same_url(a: &str, b: &str) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(url: &str) -> String {
    let url = plumb_source::strip_url_credentials(url.trim()).to_lowercase();
    let url = url.trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_argos() {
        // Argo CD's util/db/repository_test.go (TestRepoURLToSecretName).
        for (url, project, want) in [
            (
                "git://git@github.com:argoproj/ARGO-cd.git",
                "",
                "repo-83273445",
            ),
            (
                "git://git@github.com:argoproj/ARGO-cd.git",
                "foobar",
                "repo-2733415816",
            ),
            ("https://github.com/argoproj/ARGO-cd", "", "repo-1890113693"),
            (
                "https://github.com/argoproj/ARGO-cd",
                "foobar",
                "repo-4161185408",
            ),
            ("https://github.com/argoproj/argo-cd", "", "repo-42374749"),
        ] {
            assert_eq!(
                secret_name(Role::Repository, url, project),
                want,
                "{url} {project}"
            );
        }
        assert_eq!(
            secret_name(Role::Template, "https://github.com/argoproj", ""),
            secret_name(Role::Template, "https://github.com/argoproj", "")
        );
        assert_ne!(
            secret_name(Role::Repository, "https://x/a", "p"),
            secret_name(Role::Repository, "https://x/a", "")
        );
    }

    #[test]
    fn requests_are_read_checked_and_masked() {
        let body = json!({"repo": "https://git.example.com/a.git", "username": "bot",
            "password": "hunter2-pw", "insecure": true, "githubAppID": "12",
            "proxy": "http://u:proxy-pw@proxy:3128", "connectionState": {"status": "x"}});
        let spec = RepoSpec::from_request(Role::Repository, &body).unwrap();
        assert_eq!(spec.kind(), "git");
        let shown = spec.sanitized(false).to_string();
        assert!(
            !shown.contains("hunter2-pw") && !shown.contains("proxy-pw"),
            "{shown}"
        );
        assert!(!format!("{spec:?}").contains("hunter2-pw"));
        let data = spec.secret_data(&BTreeMap::new());
        assert_eq!(data["insecure"], "true");
        assert_eq!(data["githubAppID"], "12");
        assert!(!data.contains_key("enableLfs"));
        // A key present before is written with its default when unset (Argo's updateSecretBool).
        let old = BTreeMap::from([("enableLfs".to_owned(), "true".to_owned())]);
        assert_eq!(spec.secret_data(&old)["enableLfs"], "false");
        let (back, problem) = RepoSpec::from_data(Role::Repository, &data);
        assert_eq!((back, problem), (spec, None));
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases = [
            (json!({"repo": ""}), "repo"),
            (json!({"repo": "https://x", "insecure": "yes"}), "insecure"),
            (
                json!({"repo": "https://x", "githubAppID": "x1"}),
                "githubAppID",
            ),
            (json!({"repo": "https://x", "type": "svn"}), "type"),
            (json!({"repo": "https://x", "password": 3}), "password"),
            (
                json!({"repo": "https://x", "gcpServiceAccountKey": "{}"}),
                "gcpServiceAccountKey",
            ),
            (
                json!({"repo": "https://x", "sshPrivateKey": "not a key"}),
                "sshPrivateKey",
            ),
            (
                json!({"repo": "https://x", "password": "p".repeat(20_000)}),
                "password",
            ),
        ];
        for (body, field) in cases {
            let err = RepoSpec::from_request(Role::Repository, &body).unwrap_err();
            assert!(err.to_string().starts_with(field), "{field}: {err}");
        }
        let err = RepoSpec::from_request(Role::Template, &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "must specify URL");
    }

    #[test]
    fn differences_use_argos_names() {
        let a = RepoSpec::from_request(
            Role::Repository,
            &json!({"repo": "https://x", "password": "a"}),
        )
        .unwrap();
        let b = RepoSpec::from_request(
            Role::Repository,
            &json!({"repo": "https://x", "type": "git", "password": "b"}),
        )
        .unwrap();
        assert_eq!(a.differences(&b), ["Password"]);
        assert!(same_url("https://X/a.git/", "https://x/a"));
    }
}
