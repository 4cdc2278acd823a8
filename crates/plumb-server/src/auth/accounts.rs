//! Local accounts as Argo CD keeps them: capabilities and `enabled` in `argocd-cm`
//! (`accounts.<name>: apiKey, login`, `accounts.<name>.enabled`, `admin.enabled`), password hashes,
//! password change times and API-key token records in `argocd-secret`
//! (`admin.password`, `admin.passwordMtime`, `admin.tokens`, `accounts.<name>.password`, ...).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The built-in account.
pub(crate) const ADMIN: &str = "admin";

/// What an account's tokens may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capability {
    /// Sessions from `POST /api/v1/session`.
    Login,
    /// Tokens from `POST /api/v1/account/{name}/token`.
    ApiKey,
}

impl Capability {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Login => "login",
            Self::ApiKey => "apiKey",
        }
    }
}

/// One API-key token record (`{"id", "iat", "exp"}` in the Secret, as Argo stores them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TokenRecord {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) iat: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) exp: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// A local account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Account {
    pub(crate) name: String,
    pub(crate) enabled: bool,
    pub(crate) capabilities: Vec<Capability>,
    /// bcrypt hash; never logged or returned.
    pub(crate) password_hash: Option<String>,
    /// Unix seconds of the last password change: sessions issued before it are refused.
    pub(crate) password_mtime: Option<i64>,
    pub(crate) tokens: Vec<TokenRecord>,
}

impl Account {
    pub(crate) fn has(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// The Secret key holding this account's token records.
    pub(crate) fn tokens_key(name: &str) -> String {
        if name == ADMIN {
            "admin.tokens".into()
        } else {
            format!("accounts.{name}.tokens")
        }
    }
}

/// Go's `strconv.ParseBool`, which Argo uses for `enabled` keys.
fn parse_bool(v: &str) -> Option<bool> {
    match v.trim() {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn text(secret: &BTreeMap<String, Vec<u8>>, key: &str) -> Option<String> {
    secret
        .get(key)
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
        .filter(|v| !v.is_empty())
}

fn mtime(secret: &BTreeMap<String, Vec<u8>>, key: &str) -> Option<i64> {
    text(secret, key).and_then(|t| t.parse::<jiff::Timestamp>().ok().map(|ts| ts.as_second()))
}

fn tokens(secret: &BTreeMap<String, Vec<u8>>, key: &str) -> Result<Vec<TokenRecord>, String> {
    match text(secret, key) {
        None => Ok(Vec::new()),
        Some(t) => serde_json::from_str(&t)
            .map_err(|e| format!("Secret argocd-secret, key {key}: not a list of tokens: {e}")),
    }
}

/// Every account, by name. Errors name the ConfigMap or Secret key, as Argo refuses
/// unknown capabilities and unparsable `enabled` values.
pub(crate) fn parse(
    cm: &BTreeMap<String, String>,
    secret: &BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Account>, String> {
    let mut accounts: BTreeMap<String, Account> = BTreeMap::new();
    let new = |name: &str| Account {
        name: name.to_string(),
        enabled: true,
        capabilities: Vec::new(),
        password_hash: None,
        password_mtime: None,
        tokens: Vec::new(),
    };
    for (key, value) in cm {
        let Some(rest) = key.strip_prefix("accounts.") else {
            continue;
        };
        let parts: Vec<&str> = rest.split('.').collect();
        let (name, suffix) = match parts.as_slice() {
            [name] => (*name, ""),
            [name, suffix] => (*name, *suffix),
            _ => {
                tracing::warn!("ConfigMap argocd-cm: unexpected key {key}; ignored");
                continue;
            }
        };
        let account = accounts
            .entry(name.to_string())
            .or_insert_with(|| new(name));
        match suffix {
            "" => {
                for cap in value.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    let cap = match cap {
                        "login" => Capability::Login,
                        "apiKey" => Capability::ApiKey,
                        other => {
                            return Err(format!(
                                "ConfigMap argocd-cm, key {key}: account {name} has unknown capability {other}"
                            ));
                        }
                    };
                    if !account.capabilities.contains(&cap) {
                        account.capabilities.push(cap);
                    }
                }
            }
            "enabled" => {
                account.enabled = parse_bool(value).ok_or_else(|| {
                    format!("ConfigMap argocd-cm, key {key}: expected true or false, got {value:?}")
                })?;
            }
            _ => {}
        }
    }
    for (name, account) in accounts.iter_mut() {
        account.password_hash = text(secret, &format!("accounts.{name}.password"));
        account.password_mtime = mtime(secret, &format!("accounts.{name}.passwordMtime"));
        account.tokens = tokens(secret, &Account::tokens_key(name))?;
    }
    let mut admin = new(ADMIN);
    admin.capabilities = vec![Capability::Login];
    if let Some(v) = cm.get("admin.enabled") {
        admin.enabled = parse_bool(v).ok_or_else(|| {
            format!("ConfigMap argocd-cm, key admin.enabled: expected true or false, got {v:?}")
        })?;
    }
    admin.password_hash = text(secret, "admin.password");
    admin.password_mtime = mtime(secret, "admin.passwordMtime");
    admin.tokens = tokens(secret, "admin.tokens")?;
    accounts.insert(ADMIN.to_string(), admin);
    Ok(accounts)
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

    #[test]
    fn accounts_as_argo_reads_them() {
        let cm = cm(&[
            ("accounts.alice", "apiKey, login"),
            ("accounts.ci", "apiKey"),
            ("accounts.ci.enabled", "false"),
            ("accounts.a.b.c", "login"),
            ("admin.enabled", "true"),
            ("url", "https://x"),
        ]);
        let mut secret = BTreeMap::new();
        secret.insert("accounts.alice.password".to_string(), b"$2a$10$x".to_vec());
        secret.insert(
            "accounts.alice.passwordMtime".to_string(),
            b"2024-01-02T03:04:05Z".to_vec(),
        );
        secret.insert(
            "accounts.ci.tokens".to_string(),
            br#"[{"id":"t1","iat":10,"exp":20},{"id":"t2","iat":11}]"#.to_vec(),
        );
        secret.insert("admin.password".to_string(), b"$2a$10$y".to_vec());
        let accounts = parse(&cm, &secret).expect("parses");
        assert_eq!(
            accounts.keys().collect::<Vec<_>>(),
            ["admin", "alice", "ci"]
        );
        let alice = &accounts["alice"];
        assert!(alice.enabled && alice.has(Capability::Login) && alice.has(Capability::ApiKey));
        assert_eq!(alice.password_mtime, Some(1_704_164_645));
        let ci = &accounts["ci"];
        assert!(!ci.enabled && !ci.has(Capability::Login));
        assert_eq!(ci.tokens.len(), 2);
        assert_eq!(ci.tokens[1].exp, 0);
        let admin = &accounts["admin"];
        assert_eq!(admin.capabilities, [Capability::Login]);
        assert_eq!(admin.password_hash.as_deref(), Some("$2a$10$y"));
    }

    #[test]
    fn unknown_capabilities_and_bad_booleans_are_reported_with_their_key() {
        let e = parse(&cm(&[("accounts.bob", "login, sudo")]), &BTreeMap::new()).unwrap_err();
        assert!(e.contains("accounts.bob") && e.contains("sudo"), "{e}");
        let e = parse(&cm(&[("admin.enabled", "nope")]), &BTreeMap::new()).unwrap_err();
        assert!(e.contains("admin.enabled"), "{e}");
        let mut secret = BTreeMap::new();
        secret.insert("admin.tokens".to_string(), b"{not json".to_vec());
        let e = parse(&BTreeMap::new(), &secret).unwrap_err();
        assert!(e.contains("admin.tokens"), "{e}");
    }
}
