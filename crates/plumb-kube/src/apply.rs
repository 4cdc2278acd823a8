//! Writing objects: server-side apply, server-side dry-run apply (the predicted live object the
//! diff engine compares with), get and delete. Every request resolves its kind through
//! [`ApiDiscovery`], so CRDs with irregular plurals work and scope mistakes are caught before the
//! API server sees them.

use std::sync::Arc;

use kube::api::{
    Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, PropagationPolicy,
    ValidationDirective,
};
use plumb_model::{FIELD_MANAGER, GroupKind, ResourceKey};
use serde_json::Value;

use crate::body::{apply_body, strip_nulls};
use crate::discovery::{ApiDiscovery, ApiKind};
use crate::error::{Error, Result};
use crate::migrate::{migrated_managed_fields, migration_patch};

/// What a delete request did.
#[derive(Debug, Clone, PartialEq)]
pub enum Deleted {
    /// The object is gone.
    Gone,
    /// Deletion started; finalizers or foreground propagation keep the object for now.
    Pending(Box<Value>),
    /// There was nothing to delete.
    NotFound,
}

/// How a sync writes one object (Argo CD's per-object sync options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Reject unknown or duplicate fields (`fieldValidation=Strict`, as `kubectl apply` does);
    /// `Validate=false` turns it off (`Ignore`).
    pub validate: bool,
    /// Only ask the API server what it would store (`dryRun=All`).
    pub dry_run: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            validate: true,
            dry_run: false,
        }
    }
}

/// Applies, dry-runs, reads and deletes objects with one field manager (`plumb-controller` by
/// default). Dry-run and real apply must use the same manager, or fields the real manager owns
/// would not show up as removals in the prediction.
#[derive(Clone)]
pub struct Applier {
    discovery: Arc<ApiDiscovery>,
    /// The client requests go through: the discovery's, unless [`Applier::with_client`] gave
    /// another (a sync impersonating a ServiceAccount).
    client: kube::Client,
    field_manager: String,
}

impl std::fmt::Debug for Applier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier")
            .field("discovery", &self.discovery)
            .field("field_manager", &self.field_manager)
            .finish_non_exhaustive()
    }
}

impl Applier {
    /// An applier using [`FIELD_MANAGER`].
    pub fn new(discovery: Arc<ApiDiscovery>) -> Self {
        Self {
            client: discovery.client().clone(),
            discovery,
            field_manager: FIELD_MANAGER.to_string(),
        }
    }

    /// Sends every request through `client` (e.g. one that impersonates a ServiceAccount);
    /// kinds are still resolved with the discovery's own client.
    pub fn with_client(mut self, client: kube::Client) -> Self {
        self.client = client;
        self
    }

    /// Uses another field manager.
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = manager.into();
        self
    }

    /// The discovery this applier resolves kinds with.
    pub fn discovery(&self) -> &Arc<ApiDiscovery> {
        &self.discovery
    }

    /// The body to write: [`apply_body`], keeping `status` for a kind that has no status
    /// subresource. There `status` is an ordinary part of the object, and what Git declares is
    /// written, as `kubectl apply` (Argo CD) writes it (found by the conformance harness: a
    /// custom resource's status from Git reached the cluster under Argo CD, not under Plumb).
    fn body(&self, desired: &Value) -> Value {
        let mut body = apply_body(desired);
        let status = desired.get("status").filter(|s| !s.is_null());
        if let (Some(status), Some(map)) = (status, body.as_object_mut()) {
            let api_version = desired
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kind = desired
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let plain = self
                .discovery
                .catalog()
                .resolve_api_version(api_version, kind)
                .is_some_and(|k| !k.status_subresource);
            if plain {
                let mut status = status.clone();
                strip_nulls(&mut status);
                map.insert("status".into(), status);
            }
        }
        body
    }

    /// Server-side apply with force (Plumb takes over conflicting fields), returning the object
    /// as stored. When `live` is given and still has fields owned by client-side apply, ownership
    /// is migrated first so fields removed from Git are removed from the cluster.
    pub async fn apply(&self, desired: &Value, live: Option<&Value>) -> Result<Value> {
        let (key, api) = self.target(desired).await?;
        if let Some(fields) = live.and_then(|l| migrated_managed_fields(l, &self.field_manager)) {
            let patch = migration_patch(live.unwrap_or(desired), fields);
            tracing::debug!(%key, "moving client-side apply field ownership to {}", self.field_manager);
            api.patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(request_error(&key, "field manager migration"))?;
        }
        let params = PatchParams::apply(&self.field_manager).force();
        let stored = api
            .patch(&key.name, &params, &Patch::Apply(&self.body(desired)))
            .await
            .map_err(request_error(&key, "server-side apply"))?;
        to_value(&key, stored)
    }

    /// Server-side apply with `dryRun=All`: the object the API server would store (defaults,
    /// webhooks and field ownership applied), without storing it.
    pub async fn dry_run_apply(&self, desired: &Value) -> Result<Value> {
        let (key, api) = self.target(desired).await?;
        let params = PatchParams::apply(&self.field_manager).force().dry_run();
        let predicted = api
            .patch(&key.name, &params, &Patch::Apply(&self.body(desired)))
            .await
            .map_err(request_error(&key, "server-side dry-run apply"))?;
        to_value(&key, predicted)
    }

    /// Server-side apply for a sync, with its validation and dry-run choice.
    pub async fn apply_with(
        &self,
        desired: &Value,
        live: Option<&Value>,
        opts: WriteOptions,
    ) -> Result<Value> {
        let (key, api) = self.target(desired).await?;
        if !opts.dry_run
            && let Some(fields) = live.and_then(|l| migrated_managed_fields(l, &self.field_manager))
        {
            let patch = migration_patch(live.unwrap_or(desired), fields);
            api.patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(request_error(&key, "field manager migration"))?;
        }
        let mut params = PatchParams::apply(&self.field_manager).force();
        if opts.dry_run {
            params = params.dry_run();
        }
        params.field_validation = Some(if opts.validate {
            ValidationDirective::Strict
        } else {
            ValidationDirective::Ignore
        });
        let action = if opts.dry_run {
            "server-side dry-run apply"
        } else {
            "server-side apply"
        };
        let stored = api
            .patch(&key.name, &params, &Patch::Apply(&self.body(desired)))
            .await
            .map_err(request_error(&key, action))?;
        to_value(&key, stored)
    }

    /// Creates an object (`POST`): hooks with `metadata.generateName`, and the second half of a
    /// forced replacement. Returns the object as stored (with its generated name).
    pub async fn create(&self, desired: &Value, dry_run: bool) -> Result<Value> {
        let (key, api) = self.target_allowing_generate_name(desired).await?;
        let params = PostParams {
            dry_run,
            field_manager: Some(self.field_manager.clone()),
        };
        let mut body = self.body(desired);
        if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let obj: DynamicObject = serde_json::from_value(body).map_err(|e| Error::Request {
            key: key.clone(),
            action: "create",
            source: Box::new(kube::Error::SerdeError(e)),
        })?;
        let stored = api
            .create(&params, &obj)
            .await
            .map_err(request_error(&key, "create"))?;
        to_value(&key, stored)
    }

    /// Replaces an object (`PUT`, kubectl's `replace`): every field not in `desired` is dropped,
    /// whoever owned it. `live` gives the resourceVersion the replacement is based on.
    pub async fn replace(&self, desired: &Value, live: &Value, dry_run: bool) -> Result<Value> {
        let (key, api) = self.target(desired).await?;
        let mut body = self.body(desired);
        if let (Some(meta), Some(rv)) = (
            body.get_mut("metadata").and_then(Value::as_object_mut),
            live.pointer("/metadata/resourceVersion"),
        ) {
            meta.insert("resourceVersion".into(), rv.clone());
        }
        let obj: DynamicObject = serde_json::from_value(body).map_err(|e| Error::Request {
            key: key.clone(),
            action: "replace",
            source: Box::new(kube::Error::SerdeError(e)),
        })?;
        let params = PostParams {
            dry_run,
            field_manager: Some(self.field_manager.clone()),
        };
        let stored = api
            .replace(&key.name, &params, &obj)
            .await
            .map_err(request_error(&key, "replace"))?;
        to_value(&key, stored)
    }

    /// A JSON merge patch on an existing object (finalizer bookkeeping of hooks).
    pub async fn merge_patch(&self, key: &ResourceKey, patch: &Value) -> Result<Value> {
        let api = self.api_for_key(key).await?;
        let stored = api
            .patch(&key.name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(request_error(key, "merge patch"))?;
        to_value(key, stored)
    }

    /// Reads an object; `None` when it does not exist.
    pub async fn get(&self, key: &ResourceKey) -> Result<Option<Value>> {
        let api = self.api_for_key(key).await?;
        match api.get_opt(&key.name).await {
            Ok(Some(obj)) => to_value(key, obj).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(request_error(key, "get")(e)),
        }
    }

    /// Deletes an object with a propagation policy.
    pub async fn delete(
        &self,
        key: &ResourceKey,
        propagation: PropagationPolicy,
    ) -> Result<Deleted> {
        let api = self.api_for_key(key).await?;
        let params = DeleteParams {
            propagation_policy: Some(propagation),
            ..DeleteParams::default()
        };
        match api.delete(&key.name, &params).await {
            Ok(either) => match either.left() {
                Some(obj) => Ok(Deleted::Pending(Box::new(to_value(key, obj)?))),
                None => Ok(Deleted::Gone),
            },
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(Deleted::NotFound),
            Err(e) => Err(request_error(key, "delete")(e)),
        }
    }

    async fn target(&self, obj: &Value) -> Result<(ResourceKey, Api<DynamicObject>)> {
        let key = ResourceKey::of(obj);
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = api_version.rsplit('/').next().unwrap_or_default();
        for (field, missing) in [
            ("apiVersion", api_version.is_empty()),
            ("kind", key.kind.is_empty()),
            ("metadata.name", key.name.is_empty()),
        ] {
            if missing {
                return Err(Error::MissingField { key, field });
            }
        }
        let kind = self
            .discovery
            .resolve(&key.group_kind(), Some(version))
            .await?;
        let api = scoped_api(&self.client, &kind, &key)?;
        Ok((key, api))
    }

    async fn target_allowing_generate_name(
        &self,
        obj: &Value,
    ) -> Result<(ResourceKey, Api<DynamicObject>)> {
        let has_generate_name = obj
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .is_some_and(|g| !g.is_empty());
        if !has_generate_name {
            return self.target(obj).await;
        }
        let mut named = obj.clone();
        if let Some(meta) = named.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("name".into(), Value::String("generated".into()));
        }
        let (mut key, api) = self.target(&named).await?;
        key.name = String::new();
        Ok((key, api))
    }

    async fn api_for_key(&self, key: &ResourceKey) -> Result<Api<DynamicObject>> {
        let kind = self
            .discovery
            .resolve(&GroupKind::new(&key.group, &key.kind), None)
            .await?;
        scoped_api(&self.client, &kind, key)
    }
}

fn scoped_api(
    client: &kube::Client,
    kind: &ApiKind,
    key: &ResourceKey,
) -> Result<Api<DynamicObject>> {
    let client = client.clone();
    match (kind.namespaced, key.namespace.is_empty()) {
        (true, false) => Ok(Api::namespaced_with(client, &key.namespace, &kind.resource)),
        (false, true) => Ok(Api::all_with(client, &kind.resource)),
        (true, true) => Err(Error::Scope {
            key: key.clone(),
            reason: "namespaced kind without metadata.namespace",
        }),
        (false, false) => Err(Error::Scope {
            key: key.clone(),
            reason: "cluster-scoped kind with metadata.namespace",
        }),
    }
}

fn request_error(key: &ResourceKey, action: &'static str) -> impl FnOnce(kube::Error) -> Error {
    let key = key.clone();
    move |source| Error::Request {
        key,
        action,
        source: Box::new(source),
    }
}

fn to_value(key: &ResourceKey, obj: DynamicObject) -> Result<Value> {
    serde_json::to_value(obj).map_err(|e| Error::Request {
        key: key.clone(),
        action: "reading the response",
        source: Box::new(kube::Error::SerdeError(e)),
    })
}

/// Whether an error is the API server's 404.
pub fn is_not_found(error: &Error) -> bool {
    error.status_code() == Some(404)
}
