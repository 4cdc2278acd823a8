//! The `config` key of an Argo CD cluster Secret (Argo's `ClusterConfig`), read field by field
//! so a malformed value is reported with the field's name instead of dropping the cluster.

use serde_json::Value;

/// A cluster's credentials and connection settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterConfig {
    /// `bearerToken`.
    pub bearer_token: Option<String>,
    /// `username`.
    pub username: Option<String>,
    /// `password`.
    pub password: Option<String>,
    /// `tlsClientConfig`.
    pub tls: TlsClientConfig,
    /// `execProviderConfig`: a command that prints an ExecCredential.
    pub exec: Option<ExecProviderConfig>,
    /// `proxyUrl`.
    pub proxy_url: Option<String>,
    /// `disableCompression` (Plumb never asks for compressed answers, so it is always so).
    pub disable_compression: bool,
}

/// `tlsClientConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsClientConfig {
    /// `insecure`.
    pub insecure: bool,
    /// `serverName`.
    pub server_name: Option<String>,
    /// `certData` (base64 PEM, as Argo stores it).
    pub cert_data: Option<String>,
    /// `keyData`.
    pub key_data: Option<String>,
    /// `caData`.
    pub ca_data: Option<String>,
}

/// `execProviderConfig` (client-go's `ExecConfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecProviderConfig {
    /// `command`.
    pub command: String,
    /// `args`.
    pub args: Vec<String>,
    /// `env` (Argo stores a map).
    pub env: Vec<(String, String)>,
    /// `apiVersion` of the ExecCredential (`client.authentication.k8s.io/v1` or `v1beta1`).
    pub api_version: String,
    /// `installHint`, shown when the command is not found.
    pub install_hint: Option<String>,
}

/// The ExecCredential versions client-go accepts.
pub const EXEC_API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
];

/// Why a `config` cannot be used; names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config.{field}: {reason}")]
pub struct ConfigError {
    /// The field's JSON path under `config`.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

fn bad(field: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        reason: reason.into(),
    }
}

fn string(v: &Value, key: &str, path: &str) -> Result<Option<String>, ConfigError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(path, "not a string")),
    }
}

fn boolean(v: &Value, key: &str, path: &str) -> Result<bool, ConfigError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(path, "not a boolean")),
    }
}

fn object<'a>(v: &'a Value, key: &str) -> Result<Option<&'a Value>, ConfigError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(o @ Value::Object(_)) => Ok(Some(o)),
        Some(_) => Err(bad(key, "not an object")),
    }
}

impl ClusterConfig {
    /// Reads the `config` text (empty means no credentials: the in-cluster or a public cluster).
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let v: Value = serde_json::from_str(text).map_err(|e| bad("", format!("not JSON: {e}")))?;
        if !v.is_object() {
            return Err(bad("", "not a JSON object"));
        }
        if object(&v, "awsAuthConfig")?.is_some() {
            return Err(bad(
                "awsAuthConfig",
                "AWS IAM authentication is not supported by Plumb; use execProviderConfig with `aws eks get-token`",
            ));
        }
        let tls = match object(&v, "tlsClientConfig")? {
            Some(t) => TlsClientConfig::parse(t)?,
            None => TlsClientConfig::default(),
        };
        let exec = match object(&v, "execProviderConfig")? {
            Some(e) => Some(ExecProviderConfig::parse(e)?),
            None => None,
        };
        let proxy_url = string(&v, "proxyUrl", "proxyUrl")?;
        if let Some(p) = &proxy_url {
            check_proxy_url(p)?;
        }
        Ok(Self {
            bearer_token: string(&v, "bearerToken", "bearerToken")?,
            username: string(&v, "username", "username")?,
            password: string(&v, "password", "password")?,
            tls,
            exec,
            proxy_url,
            disable_compression: boolean(&v, "disableCompression", "disableCompression")?,
        })
    }
}

/// A proxy URL kube's client can use: `http://` or `https://` with a host (Argo's
/// `http.ProxyURL` over `url.Parse`, which accepts those).
fn check_proxy_url(p: &str) -> Result<(), ConfigError> {
    let uri: axum::http::Uri = match p.parse() {
        Ok(u) => u,
        Err(_) => return Err(bad("proxyUrl", "not a URL")),
    };
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(h)) if !h.is_empty() => Ok(()),
        _ => Err(bad(
            "proxyUrl",
            "not an http:// or https:// URL with a host",
        )),
    }
}

impl TlsClientConfig {
    fn parse(t: &Value) -> Result<Self, ConfigError> {
        let p = |k: &str| format!("tlsClientConfig.{k}");
        Ok(Self {
            insecure: boolean(t, "insecure", &p("insecure"))?,
            server_name: string(t, "serverName", &p("serverName"))?,
            cert_data: string(t, "certData", &p("certData"))?,
            key_data: string(t, "keyData", &p("keyData"))?,
            ca_data: string(t, "caData", &p("caData"))?,
        })
    }
}

impl ExecProviderConfig {
    fn parse(e: &Value) -> Result<Self, ConfigError> {
        let p = |k: &str| format!("execProviderConfig.{k}");
        let command =
            string(e, "command", &p("command"))?.ok_or_else(|| bad(&p("command"), "missing"))?;
        let args = match e.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(&p("args"), "not a list of strings"))?,
            Some(_) => return Err(bad(&p("args"), "not a list of strings")),
        };
        let env = match e.get("env") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => {
                let mut env = Vec::new();
                for (k, v) in m {
                    let v = v
                        .as_str()
                        .ok_or_else(|| bad(&p(&format!("env.{k}")), "not a string"))?;
                    if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
                        return Err(bad(&p("env"), "not a valid environment variable"));
                    }
                    env.push((k.clone(), v.to_string()));
                }
                env
            }
            Some(_) => return Err(bad(&p("env"), "not a map of strings")),
        };
        let api_version = string(e, "apiVersion", &p("apiVersion"))?
            .ok_or_else(|| bad(&p("apiVersion"), "missing"))?;
        if !EXEC_API_VERSIONS.contains(&api_version.as_str()) {
            return Err(bad(
                &p("apiVersion"),
                format!(
                    "{api_version:?} is not one of {}",
                    EXEC_API_VERSIONS.join(", ")
                ),
            ));
        }
        Ok(Self {
            command,
            args,
            env,
            api_version,
            install_hint: string(e, "installHint", &p("installHint"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_field() {
        let c = ClusterConfig::parse(
            r#"{"bearerToken":"t","username":"u","password":"p","proxyUrl":"http://proxy:3128",
                "disableCompression":true,
                "tlsClientConfig":{"insecure":true,"serverName":"k","caData":"Y2E="},
                "execProviderConfig":{"command":"/bin/get-token","args":["a"],"env":{"X":"1"},
                  "apiVersion":"client.authentication.k8s.io/v1beta1","installHint":"install it"}}"#,
        )
        .unwrap();
        assert_eq!(c.bearer_token.as_deref(), Some("t"));
        assert!(c.tls.insecure && c.disable_compression);
        let e = c.exec.unwrap();
        assert_eq!(
            (e.command.as_str(), e.args, e.env),
            (
                "/bin/get-token",
                vec!["a".to_string()],
                vec![("X".into(), "1".into())]
            )
        );
        assert_eq!(ClusterConfig::parse("").unwrap(), ClusterConfig::default());
    }

    #[test]
    fn malformed_fields_are_named() {
        let field = |text: &str| ClusterConfig::parse(text).unwrap_err().field;
        assert_eq!(field("{nope"), "");
        assert_eq!(field("[]"), "");
        assert_eq!(field(r#"{"bearerToken":3}"#), "bearerToken");
        assert_eq!(field(r#"{"proxyUrl":"not a url"}"#), "proxyUrl");
        assert_eq!(field(r#"{"proxyUrl":"ftp://x"}"#), "proxyUrl");
        assert_eq!(field(r#"{"proxyUrl":"::::"}"#), "proxyUrl");
        assert_eq!(field(r#"{"tlsClientConfig":"x"}"#), "tlsClientConfig");
        assert_eq!(
            field(r#"{"tlsClientConfig":{"insecure":"yes"}}"#),
            "tlsClientConfig.insecure"
        );
        assert_eq!(
            field(r#"{"execProviderConfig":{"apiVersion":"client.authentication.k8s.io/v1"}}"#),
            "execProviderConfig.command"
        );
        assert_eq!(
            field(r#"{"execProviderConfig":{"command":"x","apiVersion":"v9"}}"#),
            "execProviderConfig.apiVersion"
        );
        assert_eq!(
            field(
                r#"{"execProviderConfig":{"command":"x","apiVersion":"client.authentication.k8s.io/v1","args":[1]}}"#
            ),
            "execProviderConfig.args"
        );
        assert_eq!(
            field(r#"{"awsAuthConfig":{"clusterName":"a"}}"#),
            "awsAuthConfig"
        );
    }

    #[test]
    fn errors_never_carry_values() {
        let e = ClusterConfig::parse(r#"{"proxyUrl":"http://user:s3cret@"}"#).unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
}
