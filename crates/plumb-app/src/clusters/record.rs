//! Argo CD's `Cluster` object as the API and the CLI speak it, to and from the cluster Secret
//! that stores it (Argo's `clusterToSecret`, `SecretToCluster`, `URIToSecretName` and
//! `Cluster.Sanitized`), so `plumb server` and `plumb cluster` write Secrets Argo CD reads and
//! answer as Argo CD answers: never a credential.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::{Map, Value, json};

pub use crate::argo_secrets::{
    MANAGED_BY as MANAGED_BY_ANNOTATION, MANAGED_BY_ARGOCD, SECRET_TYPE_LABEL,
};

/// `kubectl apply`'s annotation.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Why a `Cluster` cannot become a Secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(pub String);

/// Argo's `URIToSecretName("cluster", server)`: `cluster-<host>-<fnv32a(server)>`.
pub fn secret_name(server: &str) -> Result<String, RecordError> {
    let uri: axum::http::Uri = server
        .parse()
        .map_err(|_| RecordError(format!("parse {server:?}: invalid URI for request")))?;
    let authority = uri
        .authority()
        .map(|a| {
            a.as_str()
                .rsplit('@')
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        let inside = rest.split(']').next().unwrap_or_default();
        let addr: std::net::IpAddr = inside
            .parse()
            .map_err(|_| RecordError(format!("parse {server:?}: invalid IP address")))?;
        addr.to_string().replace(':', "-")
    } else {
        authority.split(':').next().unwrap_or_default().to_string()
    };
    Ok(format!(
        "cluster-{}-{}",
        host.to_lowercase(),
        fnv32a(server.as_bytes())
    ))
}

fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn text(secret: &Secret, key: &str) -> String {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default()
}

/// The Secret as Argo's sanitized `Cluster` (what its API answers): `server`, `name`,
/// `project`, `namespaces`, `shard`, `clusterResources`, `labels`, `annotations`, and of
/// `config` only `tlsClientConfig.insecure`/`serverName`, `proxyUrl`, `disableCompression`
/// and `awsAuthConfig`: never a token, password, key or exec plugin.
pub fn sanitized(secret: &Secret) -> Value {
    let mut c = Map::new();
    c.insert(
        "server".into(),
        json!(text(secret, "server").trim_end_matches('/')),
    );
    let name = text(secret, "name");
    c.insert(
        "name".into(),
        json!(if name.is_empty() {
            text(secret, "server")
        } else {
            name
        }),
    );
    let config: Value = serde_json::from_str(&text(secret, "config")).unwrap_or(json!({}));
    let mut safe = json!({"tlsClientConfig": {
        "insecure": config["tlsClientConfig"]["insecure"].as_bool().unwrap_or(false)
    }});
    if let Some(n) = config["tlsClientConfig"]["serverName"].as_str() {
        safe["tlsClientConfig"]["serverName"] = json!(n);
    }
    if let Some(v) = config.get("awsAuthConfig").filter(|v| !v.is_null()) {
        safe["awsAuthConfig"] = v.clone();
    }
    // Argo shows `proxyUrl` whole, a proxy password included; Plumb drops the user
    // information, as its repository answers do for `proxy`.
    if let Some(v) = config.get("proxyUrl").filter(|v| !v.is_null()) {
        safe["proxyUrl"] = match v.as_str() {
            Some(url) => json!(plumb_source::strip_url_credentials(url)),
            None => v.clone(),
        };
    }
    if config["disableCompression"].as_bool() == Some(true) {
        safe["disableCompression"] = json!(true);
    }
    c.insert("config".into(), safe);
    let namespaces = super::parse_namespaces(&text(secret, "namespaces"));
    if !namespaces.is_empty() {
        c.insert("namespaces".into(), json!(namespaces));
    }
    if let Ok(n) = text(secret, "shard").trim().parse::<i64>() {
        c.insert("shard".into(), json!(n));
    }
    if text(secret, "clusterResources") == "true" {
        c.insert("clusterResources".into(), json!(true));
    }
    let project = text(secret, "project");
    if !project.is_empty() {
        c.insert("project".into(), json!(project));
    }
    let labels: BTreeMap<_, _> = secret
        .metadata
        .labels
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k != SECRET_TYPE_LABEL)
        .collect();
    if !labels.is_empty() {
        c.insert("labels".into(), json!(labels));
    }
    let annotations: BTreeMap<_, _> = secret
        .metadata
        .annotations
        .clone()
        .unwrap_or_default()
        .into_iter()
        // `kubectl apply`'s copy of the Secret holds the credentials (Argo's `SecretToCluster`
        // drops it too).
        .filter(|(k, _)| k != MANAGED_BY_ANNOTATION && k != LAST_APPLIED)
        .collect();
    if !annotations.is_empty() {
        c.insert("annotations".into(), json!(annotations));
    }
    Value::Object(c)
}

/// The fields `updatedFields` may name (Argo's `clusterFieldsByPath`).
pub const UPDATABLE_FIELDS: [&str; 8] = [
    "name",
    "namespaces",
    "config",
    "shard",
    "clusterResources",
    "labels",
    "annotations",
    "project",
];

/// The Secret's contents as a full (unsanitized) `Cluster`, for merging an update into it.
pub fn unsanitized(secret: &Secret) -> Value {
    let mut c = sanitized(secret);
    c["config"] = serde_json::from_str(&text(secret, "config")).unwrap_or(json!({}));
    c
}

/// Argo's `Update` with `updatedFields`: those fields from `update`, the rest from `existing`
/// (both full `Cluster` objects); no fields named: `update` whole.
pub fn merge_update(existing: &Value, update: &Value, fields: &[String]) -> Value {
    if fields.is_empty() {
        return update.clone();
    }
    let mut out = existing.clone();
    for f in fields {
        if UPDATABLE_FIELDS.contains(&f.as_str()) {
            match update.get(f) {
                Some(v) => out[f.as_str()] = v.clone(),
                None => {
                    if let Some(o) = out.as_object_mut() {
                        o.remove(f.as_str());
                    }
                }
            }
        }
    }
    out
}

fn string_map(v: &Value, field: &str) -> Result<BTreeMap<String, String>, RecordError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(m) => serde_json::from_value(m.clone())
            .map_err(|_| RecordError(format!("{field}: not a map of strings"))),
    }
}

/// Argo's `clusterToSecret`: a `Cluster` (the API's or the CLI's) written into `secret` (a new
/// one, or the existing one to update; its name and namespace are kept).
pub fn to_secret(cluster: &Value, mut secret: Secret) -> Result<Secret, RecordError> {
    let server = cluster["server"].as_str().unwrap_or_default();
    if server.is_empty() {
        return Err(RecordError("cluster server is required".into()));
    }
    let server = server.trim_end_matches('/');
    let mut data = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        data.insert(k.to_string(), ByteString(v.into_bytes()));
    };
    put("server", server.to_string());
    put(
        "name",
        match cluster["name"].as_str() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => server.to_string(),
        },
    );
    let namespaces: Vec<String> = match cluster.get("namespaces") {
        None | Some(Value::Null) => Vec::new(),
        Some(n) => serde_json::from_value(n.clone())
            .map_err(|_| RecordError("namespaces: not a list of strings".into()))?,
    };
    if !namespaces.is_empty() {
        put("namespaces", namespaces.join(","));
    }
    let config = cluster.get("config").cloned().unwrap_or(json!({}));
    if let Err(e) = super::ClusterConfig::parse(&config.to_string()) {
        return Err(RecordError(e.to_string()));
    }
    put("config", config.to_string());
    if let Some(shard) = cluster.get("shard").filter(|v| !v.is_null()) {
        let n = shard
            .as_i64()
            .ok_or_else(|| RecordError("shard: not an integer".into()))?;
        put("shard", n.to_string());
    }
    if cluster["clusterResources"].as_bool() == Some(true) {
        put("clusterResources", "true".into());
    }
    if let Some(p) = cluster["project"].as_str().filter(|p| !p.is_empty()) {
        put("project", p.to_string());
    }
    let mut labels = string_map(cluster, "labels")?;
    let mut annotations = string_map(cluster, "annotations")?;
    if annotations.contains_key(LAST_APPLIED) {
        return Err(RecordError(
            "annotation kubectl.kubernetes.io/last-applied-configuration cannot be set".into(),
        ));
    }
    labels.insert(SECRET_TYPE_LABEL.into(), "cluster".into());
    annotations.insert(MANAGED_BY_ANNOTATION.into(), MANAGED_BY_ARGOCD.into());
    secret.data = Some(data);
    secret.string_data = None;
    secret.metadata.labels = Some(labels);
    secret.metadata.annotations = Some(annotations);
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_argos() {
        // Argo CD's `Test_URIToSecretName`.
        for (uri, name) in [
            ("http://foo", "cluster-foo-752281925"),
            (
                "http://thelongestdomainnameintheworld.argocd-project.com:3000",
                "cluster-thelongestdomainnameintheworld.argocd-project.com-2721640553",
            ),
            (
                "http://[fe80::1ff:fe23:4567:890a]",
                "cluster-fe80--1ff-fe23-4567-890a-3877258831",
            ),
            (
                "http://[fe80::1ff:fe23:4567:890a]:8000",
                "cluster-fe80--1ff-fe23-4567-890a-664858999",
            ),
            (
                "http://[FE80::1FF:FE23:4567:890A]:8000",
                "cluster-fe80--1ff-fe23-4567-890a-682802007",
            ),
        ] {
            assert_eq!(secret_name(uri).unwrap(), name, "{uri}");
        }
    }

    #[test]
    fn round_trip_keeps_fields_and_sanitizes_credentials() {
        let cluster = json!({
            "server": "https://k.example:6443/", "name": "prod", "project": "team",
            "namespaces": ["b", "a"], "clusterResources": true, "shard": 2,
            "labels": {"env": "prod"}, "annotations": {"owner": "ops"},
            "config": {"bearerToken": "secret-token", "password": "pw",
                       "tlsClientConfig": {"insecure": false, "serverName": "k", "keyData": "S0VZ"},
                       "execProviderConfig": {"command": "x", "args": ["--key=K"], "apiVersion": "client.authentication.k8s.io/v1"},
                       "proxyUrl": "http://proxy-user:proxy-pw@proxy:3128"}
        });
        let mut secret = to_secret(&cluster, Secret::default()).unwrap();
        secret.metadata.annotations.get_or_insert_default().insert(
            LAST_APPLIED.into(),
            r#"{"stringData":{"config":"{\"bearerToken\":\"secret-token\"}"}}"#.into(),
        );
        let view = sanitized(&secret);
        assert_eq!(view["server"], "https://k.example:6443");
        assert_eq!(view["namespaces"], json!(["b", "a"]));
        assert_eq!(view["shard"], 2);
        assert_eq!(view["labels"], json!({"env": "prod"}));
        assert_eq!(
            view["config"],
            json!({"tlsClientConfig": {"insecure": false, "serverName": "k"}, "proxyUrl": "http://proxy:3128"})
        );
        let text = view.to_string();
        assert_eq!(view["annotations"], json!({"owner": "ops"}));
        for s in [
            "secret-token",
            "pw",
            "S0VZ",
            "--key=K",
            "last-applied",
            "proxy-user",
        ] {
            assert!(!text.contains(s), "{s} in {text}");
        }
        assert_eq!(
            secret.metadata.labels.unwrap()[SECRET_TYPE_LABEL],
            "cluster"
        );
    }

    #[test]
    fn updated_fields_take_only_those() {
        let existing =
            json!({"server": "s", "name": "a", "project": "p", "config": {"bearerToken": "t"}});
        let update = json!({"server": "s", "name": "b", "project": "q"});
        let merged = merge_update(&existing, &update, &["name".into()]);
        assert_eq!(merged["name"], "b");
        assert_eq!(merged["project"], "p");
        assert_eq!(merged["config"]["bearerToken"], "t");
        assert_eq!(merge_update(&existing, &update, &[]), update);
    }

    #[test]
    fn bad_clusters_are_refused_by_field() {
        let e = |c: Value| to_secret(&c, Secret::default()).unwrap_err().0;
        assert!(e(json!({"name": "x"})).contains("server"));
        assert!(
            e(json!({"server": "https://a", "config": {"proxyUrl": "nope"}})).contains("proxyUrl")
        );
        assert!(e(json!({"server": "https://a", "namespaces": "a"})).contains("namespaces"));
        assert!(e(json!({"server": "https://a", "shard": "x"})).contains("shard"));
    }
}
