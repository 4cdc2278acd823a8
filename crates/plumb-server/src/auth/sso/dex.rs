//! The bundled Dex's configuration as Argo's `GenerateDexConfigYAML` writes it from argocd-cm's
//! `dex.config`: issuer `<url>/api/dex`, memory storage unless one is given, the approval screen
//! skipped, Argo's static clients (`argo-cd` with the secret derived from `server.secretkey`,
//! `argo-cd-cli` and `argo-cd-pkce`, public), each connector that needs it sent back to
//! `<url>/api/dex/callback`, and `$key` references resolved from argocd-secret (with `$`
//! escaped in resolved connector values, as Dex expands environment variables there).
//! Differences: Dex listens where it is told (`listen`, plain HTTP; Argo's TLS between the server
//! and Dex is not done), and no gRPC API is configured (Plumb does not use it).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::config::{DEX_CLI_CLIENT_ID, DEX_CLIENT_ID, DEX_PATH, dex_client_secret};

/// Connector types whose configuration takes a `redirectURI` (Argo's `needsRedirectURI`).
const NEED_REDIRECT: [&str; 10] = [
    "oidc",
    "saml",
    "microsoft",
    "linkedin",
    "gitlab",
    "github",
    "bitbucket-cloud",
    "openshift",
    "gitea",
    "google",
];

/// Dex's configuration for `cm` and argocd-secret's `secret`, or `None` when `dex.config` is
/// not set (or `url` is empty, as Argo's `IsDexConfigured`). Errors name the key; they never
/// hold a secret's value.
pub fn generate_dex_config(
    cm: &BTreeMap<String, String>,
    secret: &BTreeMap<String, Vec<u8>>,
    listen: &str,
) -> Result<Option<String>, String> {
    let Some(text) = cm.get("dex.config").filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let url = cm
        .get("url")
        .map(|u| u.trim().trim_end_matches('/'))
        .unwrap_or_default();
    if url.is_empty() {
        return Ok(None);
    }
    let docs = plumb_yaml::read_documents(text, "ConfigMap argocd-cm, key dex.config")
        .map_err(|e| format!("ConfigMap argocd-cm, key dex.config: not valid YAML: {e}"))?;
    let Some(Value::Object(mut cfg)) = docs.into_iter().next().map(|d| d.value) else {
        return Err("ConfigMap argocd-cm, key dex.config: expected a mapping".into());
    };
    let secrets: BTreeMap<String, String> = secret
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    let server_key = secret.get("server.secretkey").cloned().unwrap_or_default();
    cfg.insert("issuer".into(), json!(format!("{url}{DEX_PATH}")));
    cfg.insert("storage".into(), storage(cfg.get("storage")));
    cfg.insert("web".into(), json!({"http": listen}));
    let oauth2 = cfg.entry("oauth2").or_insert_with(|| json!({}));
    if let Some(o) = oauth2.as_object_mut() {
        o.entry("skipApprovalScreen").or_insert(json!(true));
    }
    let mut clients = vec![
        json!({"id": DEX_CLIENT_ID, "name": "Argo CD", "secret": dex_client_secret(&server_key),
               "redirectURIs": [format!("{url}/auth/callback")]}),
        json!({"id": DEX_CLI_CLIENT_ID, "name": "Argo CD CLI", "public": true,
               "redirectURIs": ["http://localhost", "http://localhost:8085/auth/callback"]}),
        json!({"id": "argo-cd-pkce", "name": "Argo CD PKCE", "public": true,
               "redirectURIs": ["http://localhost:4000/auth/callback"]}),
    ];
    if let Some(Value::Array(more)) = cfg.remove("staticClients") {
        clients.extend(more);
    }
    cfg.insert("staticClients".into(), Value::Array(clients));
    connectors(&mut cfg, url, &secrets)?;
    for (k, v) in cfg.iter_mut() {
        if k != "connectors" {
            replace(v, &secrets, false);
        }
    }
    Ok(Some(plumb_yaml::to_yaml_string(&Value::Object(cfg))))
}

fn storage(given: Option<&Value>) -> Value {
    match given.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some(t) if !t.is_empty() => {
            let mut out = json!({"type": t});
            if let Some(c) = given
                .and_then(|s| s.get("config"))
                .filter(|c| c.is_object())
            {
                out["config"] = c.clone();
            }
            out
        }
        _ => json!({"type": "memory"}),
    }
}

fn connectors(
    cfg: &mut Map<String, Value>,
    url: &str,
    secrets: &BTreeMap<String, String>,
) -> Result<(), String> {
    let malformed =
        || "ConfigMap argocd-cm, key dex.config: malformed Dex configuration found".to_string();
    let Some(Value::Array(list)) = cfg.get_mut("connectors") else {
        return Err(malformed());
    };
    for c in list.iter_mut() {
        let obj = c.as_object_mut().ok_or_else(malformed)?;
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(malformed)?
            .to_string();
        if NEED_REDIRECT.contains(&kind.as_str()) {
            let conf = obj
                .get_mut("config")
                .and_then(Value::as_object_mut)
                .ok_or_else(malformed)?;
            conf.insert(
                "redirectURI".into(),
                json!(format!("{url}{DEX_PATH}/callback")),
            );
        }
        for (k, v) in obj.iter_mut() {
            replace(v, secrets, k == "config");
        }
    }
    Ok(())
}

/// Argo's `ReplaceMapSecrets`; `escape`: `$` in resolved values doubled (Argo's
/// `EscapeDollarSignsInConnectorConfig`, for Dex's expansion of connector configuration).
fn replace(v: &mut Value, secrets: &BTreeMap<String, String>, escape: bool) {
    match v {
        Value::String(s) => {
            if let Some(found) = s.strip_prefix('$').and_then(|k| secrets.get(k)) {
                let found = found.trim();
                *s = if escape {
                    found.replace('$', "$$")
                } else {
                    found.to_string()
                };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| replace(i, secrets, escape)),
        Value::Object(m) => m.values_mut().for_each(|i| replace(i, secrets, escape)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argos_clients_redirects_and_secrets() {
        let cm: BTreeMap<String, String> = [
            ("url", "https://cd.example.com/"),
            (
                "dex.config",
                "connectors:\n- type: github\n  id: gh\n  name: GitHub\n  config:\n    clientID: x\n    clientSecret: $dex.github.clientSecret\n- type: mockCallback\n  id: mock\n  name: Mock\n",
            ),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let secret: BTreeMap<String, Vec<u8>> = [
            ("server.secretkey", b"key".to_vec()),
            ("dex.github.clientSecret", b"gh$ecret\n".to_vec()),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
        let yaml = generate_dex_config(&cm, &secret, "127.0.0.1:5556")
            .expect("generates")
            .expect("configured");
        let doc = plumb_yaml::read_documents(&yaml, "out").expect("yaml");
        let v = &doc[0].value;
        assert_eq!(v["issuer"], "https://cd.example.com/api/dex");
        assert_eq!(v["storage"]["type"], "memory");
        assert_eq!(v["web"]["http"], "127.0.0.1:5556");
        assert_eq!(v["oauth2"]["skipApprovalScreen"], true);
        assert_eq!(v["staticClients"][0]["id"], "argo-cd");
        assert_eq!(
            v["staticClients"][0]["secret"],
            dex_client_secret(b"key").as_str()
        );
        assert_eq!(
            v["staticClients"][0]["redirectURIs"][0],
            "https://cd.example.com/auth/callback"
        );
        assert_eq!(v["staticClients"][1]["id"], "argo-cd-cli");
        let gh = &v["connectors"][0]["config"];
        assert_eq!(gh["redirectURI"], "https://cd.example.com/api/dex/callback");
        assert_eq!(gh["clientSecret"], "gh$$ecret");
        assert!(v["connectors"][1].get("config").is_none());
        let mut no_url = cm.clone();
        no_url.remove("url");
        assert_eq!(generate_dex_config(&no_url, &secret, "x"), Ok(None));
        let mut bad = cm;
        bad.insert("dex.config".into(), "connectors: [{type: github}]".into());
        assert!(generate_dex_config(&bad, &secret, "x").is_err());
    }
}
