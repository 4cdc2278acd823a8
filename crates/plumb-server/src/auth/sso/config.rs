//! What argocd-cm says about single sign-on, read as Argo's `ArgoCDSettings` reads it:
//! `oidc.config` (an OIDC provider used directly) or `dex.config` (the bundled Dex, issuer
//! `<url>/api/dex`, client `argo-cd` with a secret derived from `server.secretkey`), `url`,
//! and `$key` / `$secret-name:key` references resolved in every string of `oidc.config`.

use std::collections::BTreeMap;

use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Argo's `common.ArgoCDClientAppID`: the server's client at the bundled Dex.
pub(crate) const DEX_CLIENT_ID: &str = "argo-cd";
/// Argo's `common.ArgoCDCLIClientAppID`: the CLI's public client at the bundled Dex.
pub(crate) const DEX_CLI_CLIENT_ID: &str = "argo-cd-cli";
/// Argo's `common.DexAPIEndpoint`.
pub(crate) const DEX_PATH: &str = "/api/dex";
/// Argo's `common.CallbackEndpoint`.
pub(crate) const CALLBACK_PATH: &str = "/auth/callback";
/// The scopes asked for when `requestedScopes` is empty (Argo's `GetScopesOrDefault`).
const DEFAULT_SCOPES: [&str; 4] = ["openid", "profile", "email", "groups"];

/// Argo's `OIDCConfig` (the fields Plumb uses; unknown keys are ignored as in Argo).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct OidcConfig {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) issuer: String,
    #[serde(default, rename = "clientID")]
    pub(crate) client_id: String,
    #[serde(default, rename = "clientSecret")]
    pub(crate) client_secret: String,
    #[serde(default, rename = "cliClientID")]
    pub(crate) cli_client_id: String,
    #[serde(default, rename = "requestedScopes")]
    pub(crate) requested_scopes: Vec<String>,
    #[serde(default, rename = "requestedIDTokenClaims")]
    pub(crate) requested_id_token_claims: Map<String, Value>,
    #[serde(default, rename = "logoutURL")]
    pub(crate) logout_url: String,
    #[serde(default, rename = "rootCA")]
    pub(crate) root_ca: String,
    #[serde(default, rename = "enablePKCEAuthentication")]
    pub(crate) enable_pkce: bool,
    #[serde(default, rename = "domainHint")]
    pub(crate) domain_hint: String,
    #[serde(default, rename = "allowedAudiences")]
    pub(crate) allowed_audiences: Vec<String>,
    #[serde(default, rename = "skipAudienceCheckWhenTokenHasNoAudience")]
    pub(crate) skip_audience_check_without_aud: bool,
    #[serde(default, rename = "enableUserInfoGroups")]
    pub(crate) enable_user_info_groups: bool,
    #[serde(default, rename = "userInfoPath")]
    pub(crate) user_info_path: String,
    #[serde(default, rename = "userInfoCacheExpiration")]
    pub(crate) user_info_cache_expiration: String,
    #[serde(default, rename = "refreshTokenThreshold")]
    pub(crate) refresh_token_threshold: String,
}

/// Which provider the server logs people in with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    /// `oidc.config`: the provider directly.
    Oidc,
    /// `dex.config`: the bundled Dex behind `/api/dex`.
    Dex { connectors: Vec<(String, String)> },
}

/// Single sign-on as configured, secrets resolved. Its `Debug` never shows the client secret.
#[derive(Clone, PartialEq)]
pub(crate) struct SsoSettings {
    pub(crate) mode: Mode,
    /// `url` of argocd-cm, without a trailing `/`.
    pub(crate) url: String,
    pub(crate) config: OidcConfig,
}

impl std::fmt::Debug for SsoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoSettings")
            .field("mode", &self.mode)
            .field("url", &self.url)
            .field("issuer", &self.config.issuer)
            .field("client_id", &self.config.client_id)
            .finish_non_exhaustive()
    }
}

impl SsoSettings {
    /// `<url>/auth/callback` (Argo's `RedirectURL`).
    pub(crate) fn redirect_url(&self) -> String {
        format!("{}{CALLBACK_PATH}", self.url)
    }

    /// The scopes the login asks for.
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = if self.config.requested_scopes.is_empty() {
            DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect()
        } else {
            self.config.requested_scopes.clone()
        };
        if !scopes.iter().any(|s| s == "openid") {
            scopes.insert(0, "openid".into());
        }
        // Argo's `DexFederatedScope`: Dex then names the user in `federated_claims.user_id`,
        // the RBAC subject (Argo's `GetUserIdentifier`).
        if matches!(self.mode, Mode::Dex { .. }) {
            scopes.push("federated:id".into());
        }
        scopes
    }

    /// Argo's `OAuth2AllowedAudiences`.
    pub(crate) fn allowed_audiences(&self) -> Vec<String> {
        if !self.config.allowed_audiences.is_empty() {
            return self.config.allowed_audiences.clone();
        }
        let mut out = vec![self.config.client_id.clone()];
        if !self.config.cli_client_id.is_empty() {
            out.push(self.config.cli_client_id.clone());
        }
        out
    }
}

/// What argocd-cm and the referenced Secrets hold for SSO.
pub(crate) struct Inputs<'a> {
    pub(crate) cm: &'a BTreeMap<String, String>,
    /// argocd-secret's keys, and `<secret>:<key>` of the other Secrets referenced.
    pub(crate) secrets: &'a BTreeMap<String, String>,
    /// `server.secretkey`, from which the Dex client secret is derived.
    pub(crate) server_key: &'a [u8],
}

/// The `<secret>` names `$<secret>:<key>` references in `oidc.config` point to, to be read
/// (only those labelled `app.kubernetes.io/part-of: argocd`, as Argo).
pub(crate) fn referenced_secrets(cm: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = cm
        .get("oidc.config")
        .map(|text| {
            text.split(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .filter_map(|w| w.strip_prefix('$'))
                .filter_map(|w| w.split_once(':').map(|(name, _)| name.to_string()))
                .filter(|name| !name.is_empty() && name.len() <= 253)
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// SSO as argocd-cm configures it: `Ok(None)` when neither `oidc.config` nor `dex.config` is
/// set, `Err` with a message naming the key when the configuration cannot work (the message
/// never holds a secret's value).
pub(crate) fn parse(inputs: &Inputs<'_>) -> Result<Option<SsoSettings>, String> {
    let cm = inputs.cm;
    let oidc = cm.get("oidc.config").filter(|t| !t.trim().is_empty());
    let dex = cm.get("dex.config").filter(|t| !t.trim().is_empty());
    if oidc.is_none() && dex.is_none() {
        return Ok(None);
    }
    let url = cm
        .get("url")
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .unwrap_or_default();
    if url.is_empty() {
        return Err("ConfigMap argocd-cm: key url is required for single sign-on (the address the identity provider sends people back to)".into());
    }
    check_url("url", &url)?;
    // Argo prefers oidc.config when both are set.
    if let Some(text) = oidc {
        let config = parse_oidc(text, inputs.secrets)?;
        return Ok(Some(SsoSettings {
            mode: Mode::Oidc,
            url,
            config,
        }));
    }
    let text = dex.map(String::as_str).unwrap_or_default();
    let connectors = dex_connectors(text)?;
    Ok(Some(SsoSettings {
        mode: Mode::Dex { connectors },
        config: OidcConfig {
            name: "Dex".into(),
            issuer: format!("{url}{DEX_PATH}"),
            client_id: DEX_CLIENT_ID.into(),
            client_secret: dex_client_secret(inputs.server_key),
            cli_client_id: DEX_CLI_CLIENT_ID.into(),
            allowed_audiences: vec![DEX_CLIENT_ID.into(), DEX_CLI_CLIENT_ID.into()],
            ..OidcConfig::default()
        },
        url,
    }))
}

fn check_url(key: &str, value: &str) -> Result<(), String> {
    let u = url::Url::parse(value)
        .map_err(|e| format!("ConfigMap argocd-cm: {key} {value:?} is not a URL: {e}"))?;
    if !matches!(u.scheme(), "https" | "http") || u.host_str().is_none() {
        return Err(format!(
            "ConfigMap argocd-cm: {key} {value:?} must be an http(s) URL with a host"
        ));
    }
    Ok(())
}

/// The YAML document of a key as JSON.
fn yaml_object(key: &str, text: &str) -> Result<Map<String, Value>, String> {
    let docs = plumb_yaml::read_documents(text, &format!("ConfigMap argocd-cm, key {key}"))
        .map_err(|e| format!("ConfigMap argocd-cm, key {key}: not valid YAML: {e}"))?;
    match docs.into_iter().next().map(|d| d.value) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(format!(
            "ConfigMap argocd-cm, key {key}: expected a mapping"
        )),
    }
}

fn parse_oidc(text: &str, secrets: &BTreeMap<String, String>) -> Result<OidcConfig, String> {
    let mut map = yaml_object("oidc.config", text)?;
    for v in map.values_mut() {
        replace_secrets(v, secrets);
    }
    let config: OidcConfig = serde_json::from_value(Value::Object(map))
        .map_err(|e| format!("ConfigMap argocd-cm, key oidc.config: {e}"))?;
    for (field, value) in [("issuer", &config.issuer), ("clientID", &config.client_id)] {
        if value.is_empty() {
            return Err(format!(
                "ConfigMap argocd-cm, key oidc.config: {field} is required"
            ));
        }
    }
    check_url("oidc.config issuer", &config.issuer)?;
    if !config.logout_url.is_empty() {
        check_url("oidc.config logoutURL", &config.logout_url)?;
    }
    if config.client_secret.starts_with('$') {
        // Argo keeps the reference as the secret; say so without printing anything secret.
        tracing::warn!(
            "ConfigMap argocd-cm, key oidc.config: clientSecret refers to {}, which no Secret holds",
            config.client_secret
        );
    }
    Ok(config)
}

/// Argo's `ReplaceMapSecrets`: every string `$key` found in the secrets becomes its value.
fn replace_secrets(v: &mut Value, secrets: &BTreeMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(found) = s.strip_prefix('$').and_then(|k| secrets.get(k)) {
                *s = found.trim().to_string();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| replace_secrets(i, secrets)),
        Value::Object(m) => m.values_mut().for_each(|i| replace_secrets(i, secrets)),
        _ => {}
    }
}

/// `(type, name)` of each connector (what Argo's settings answer lists).
fn dex_connectors(text: &str) -> Result<Vec<(String, String)>, String> {
    let map = yaml_object("dex.config", text)?;
    let Some(Value::Array(list)) = map.get("connectors") else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|c| {
            let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
            if c.as_object().is_none() || field("type").is_empty() {
                return Err(
                    "ConfigMap argocd-cm, key dex.config: malformed Dex configuration found (each connector needs a type)"
                        .to_string(),
                );
            }
            Ok((field("type").to_string(), field("name").to_string()))
        })
        .collect()
}

/// Argo's `DexOAuth2ClientSecret`: the first 40 characters of base64url(sha256(server key)),
/// which the server and its Dex both derive.
pub(crate) fn dex_client_secret(server_key: &[u8]) -> String {
    let digest = Sha256::digest(server_key);
    let mut s = base64::engine::general_purpose::URL_SAFE.encode(digest);
    s.truncate(40);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse_with(cm: &BTreeMap<String, String>) -> Result<Option<SsoSettings>, String> {
        let secrets = cm_secrets();
        parse(&Inputs {
            cm,
            secrets: &secrets,
            server_key: b"key",
        })
    }

    fn cm_secrets() -> BTreeMap<String, String> {
        [
            ("oidc.clientSecret", "s3cret-value\n"),
            ("idp:secret", "other-value"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn oidc_config_with_secret_references() {
        let c = cm(&[
            ("url", "https://cd.example.com/"),
            (
                "oidc.config",
                "name: Okta\nissuer: https://idp.example.com\nclientID: plumb\n\
                 clientSecret: $oidc.clientSecret\ncliClientID: plumb-cli\n\
                 requestedScopes: [openid, groups]\nenablePKCEAuthentication: true\n\
                 extra: $idp:secret\n",
            ),
        ]);
        let s = parse_with(&c).expect("parses").expect("configured");
        assert_eq!(s.mode, Mode::Oidc);
        assert_eq!(s.url, "https://cd.example.com");
        assert_eq!(s.redirect_url(), "https://cd.example.com/auth/callback");
        assert_eq!(s.config.client_secret, "s3cret-value");
        assert_eq!(s.allowed_audiences(), ["plumb", "plumb-cli"]);
        assert_eq!(s.scopes(), ["openid", "groups"]);
        assert!(s.config.enable_pkce);
        assert!(!format!("{s:?}").contains("s3cret"));
        assert_eq!(
            referenced_secrets(&c),
            ["idp"],
            "only $name:key references name other Secrets"
        );
    }

    #[test]
    fn dex_config_derives_argos_client() {
        let c = cm(&[
            ("url", "https://cd.example.com"),
            (
                "dex.config",
                "connectors:\n- type: github\n  name: GitHub\n  id: gh\n",
            ),
        ]);
        let s = parse_with(&c).expect("parses").expect("configured");
        assert_eq!(s.config.issuer, "https://cd.example.com/api/dex");
        assert_eq!(s.config.client_id, "argo-cd");
        // Argo's value for the same key (base64url of sha256("key"), 40 characters).
        assert_eq!(s.config.client_secret.len(), 40);
        assert_eq!(s.config.client_secret, dex_client_secret(b"key"));
        assert_eq!(
            s.mode,
            Mode::Dex {
                connectors: vec![("github".into(), "GitHub".into())]
            }
        );
    }

    #[test]
    fn unusable_configurations_name_the_key() {
        assert_eq!(parse_with(&cm(&[("url", "https://x")])), Ok(None));
        let e = parse_with(&cm(&[("oidc.config", "issuer: https://i\nclientID: c")]))
            .expect_err("no url");
        assert!(e.contains("url"), "{e}");
        for (text, needle) in [
            ("issuer: [unclosed", "not valid YAML"),
            ("- a list", "expected a mapping"),
            ("clientID: c", "issuer is required"),
            ("issuer: not a url\nclientID: c", "not a URL"),
            (
                "issuer: https://i\nclientID: c\nrequestedScopes: 7",
                "oidc.config",
            ),
        ] {
            let c = cm(&[("url", "https://x"), ("oidc.config", text)]);
            let e = parse_with(&c).expect_err(text);
            assert!(e.contains(needle), "{text}: {e}");
        }
        let c = cm(&[("url", "https://x"), ("dex.config", "connectors: [7]")]);
        assert!(parse_with(&c).expect_err("bad").contains("dex.config"));
    }
}
