//! Argo CD's REST gateway conventions: query strings with repeated keys (`projects=a&projects=b`,
//! grpc-gateway's encoding of repeated fields), list envelopes, and the request bodies of the
//! write calls (`ApplicationSyncRequest`, `ApplicationRollbackRequest`).

use plumb_model::application::{RetryStrategy, SyncOperationResource, SyncStrategy};
use serde::Deserialize;
use serde_json::{Value, json};

/// A query string, keys in order, repeated keys kept.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    /// Parses a raw query string (absent: empty).
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first value of `key`, empty values counting as absent.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key` (a repeated field; comma-separated values split too).
    pub(crate) fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// A boolean: `true`/`false` (absent or empty: `default`).
    pub(crate) fn bool(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(other) => Err(format!(
                "query parameter {key}: expected true or false, got {other:?}"
            )),
        }
    }
}

/// A list in Argo's envelope: `{"metadata": {"resourceVersion"?}, "items": [...]}` (`items`
/// always present, never null, so clients can iterate it).
pub(crate) fn list(resource_version: Option<String>, items: Vec<Value>) -> Value {
    let mut metadata = serde_json::Map::new();
    if let Some(rv) = resource_version.filter(|r| !r.is_empty()) {
        metadata.insert("resourceVersion".into(), Value::String(rv));
    }
    json!({"metadata": metadata, "items": items})
}

/// `ApplicationSyncRequest` as Argo's gateway receives it (the fields Plumb acts on; unknown
/// fields such as `infos` are accepted and ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncRequestBody {
    #[serde(default)]
    pub revision: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub prune: bool,
    #[serde(default)]
    pub strategy: Option<SyncStrategy>,
    #[serde(default)]
    pub resources: Option<Vec<SyncOperationResource>>,
    #[serde(default)]
    pub retry_strategy: Option<RetryStrategy>,
    #[serde(default)]
    pub sync_options: Option<SyncOptionsBody>,
    /// Local manifests (`argocd app sync --local`): one YAML or JSON document per entry, written
    /// to `operation.sync.manifests`.
    #[serde(default)]
    pub manifests: Option<Vec<String>>,
    /// The Application's namespace (absent: the control namespace).
    #[serde(default)]
    pub app_namespace: Option<String>,
}

/// `{"items": [...]}`, grpc-gateway's encoding of `SyncOptions`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SyncOptionsBody {
    #[serde(default)]
    pub items: Vec<String>,
}

impl SyncRequestBody {
    /// The request the controller crate turns into an operation.
    pub(crate) fn request(self) -> plumb_app::request::SyncRequest {
        plumb_app::request::SyncRequest {
            revision: self.revision.filter(|r| !r.is_empty()),
            prune: self.prune,
            dry_run: self.dry_run,
            strategy: self.strategy,
            resources: self.resources.filter(|r| !r.is_empty()),
            sync_options: self.sync_options.map(|o| o.items).filter(|o| !o.is_empty()),
            retry: self.retry_strategy,
        }
    }
}

/// `ApplicationRollbackRequest`: `id` is the history id; absent or -1 (what argocd sends
/// without an id) means the previous deployment.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RollbackRequestBody {
    #[serde(default, deserialize_with = "int_or_string")]
    pub id: Option<i64>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub prune: bool,
    /// The Application's namespace (absent: the control namespace).
    #[serde(default)]
    pub app_namespace: Option<String>,
}

/// grpc-gateway writes int64 as a JSON string; accept both.
fn int_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("id: expected an integer")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("id: expected an integer, got {s:?}"))),
        Some(other) => Err(serde::de::Error::custom(format!(
            "id: expected an integer, got {other}"
        ))),
    }
}

/// An integer that JSON may carry as a number or (int64 in grpc-gateway) a string.
pub(crate) fn json_i64(v: &serde_json::Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_and_comma_separated_keys() {
        let q = Query::parse(Some(
            "projects=a&projects=b,c&name=&selector=app%3Dx&refresh=hard",
        ));
        assert_eq!(q.all("projects"), ["a", "b", "c"]);
        assert_eq!(q.get("name"), None);
        assert_eq!(q.get("selector"), Some("app=x"));
        assert_eq!(q.bool("cascade", true), Ok(true));
        assert!(
            Query::parse(Some("cascade=maybe"))
                .bool("cascade", true)
                .is_err()
        );
        assert_eq!(
            Query::parse(Some("cascade=false")).bool("cascade", true),
            Ok(false)
        );
    }

    #[test]
    fn sync_body_as_argocd_sends_it() {
        let body: SyncRequestBody = serde_json::from_value(json!({
            "name": "payments-api", "revision": "v1.4.0", "prune": true, "dryRun": false,
            "strategy": {"hook": {"force": false}},
            "resources": [{"group": "apps", "kind": "Deployment", "name": "payments-api", "namespace": "payments"}],
            "syncOptions": {"items": ["ServerSideApply=true"]},
            "appNamespace": "argocd"
        }))
        .unwrap();
        let req = body.request();
        assert_eq!(req.revision.as_deref(), Some("v1.4.0"));
        assert!(req.prune && !req.dry_run);
        assert_eq!(
            req.sync_options,
            Some(vec!["ServerSideApply=true".to_string()])
        );
        assert_eq!(req.resources.as_ref().map(Vec::len), Some(1));
        let empty: SyncRequestBody =
            serde_json::from_value(json!({"syncOptions": {"items": []}, "revision": ""})).unwrap();
        let req = empty.request();
        assert_eq!((req.revision, req.sync_options), (None, None));
    }

    #[test]
    fn rollback_id_as_number_or_string() {
        let a: RollbackRequestBody =
            serde_json::from_value(json!({"id": "3", "prune": true})).unwrap();
        assert_eq!((a.id, a.prune), (Some(3), true));
        let b: RollbackRequestBody = serde_json::from_value(json!({"id": -1})).unwrap();
        assert_eq!(b.id, Some(-1));
        assert!(serde_json::from_value::<RollbackRequestBody>(json!({"id": "x"})).is_err());
    }
}
