//! One row per resource of an Application, as Argo CD's `getResourceStates`
//! (`cmd/argocd/commands/app.go`) builds them for the resource table and the progress rows:
//! first the resources of the last sync result, in its order, then the remaining
//! `status.resources` sorted by `group/kind/namespace/name`.
//!
//! STATUS and HEALTH of a non-hook resource come from `status.resources` (its current state);
//! for a hook they are its hook phase and result code. MESSAGE differs from Argo on purpose, to
//! match the layout of Argo's own documented transcripts (shared/mission): a resource whose last
//! sync result is plain `Synced` shows its health message (`Waiting for rollout to finish: ...`),
//! not the apply message (`deployment.apps/x configured`); hooks and resources whose result is
//! not `Synced` (SyncFailed, Pruned, PruneSkipped) keep the sync message, which is what explains
//! them.

use std::collections::BTreeMap;

use plumb_model::application::{Application, ResourceStatus, ResultCode};

/// One resource's line in a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRow {
    /// API group (empty for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty when cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Sync status, or hook phase for hooks.
    pub status: String,
    /// Health, or result code for hooks.
    pub health: String,
    /// Hook type, for hooks.
    pub hook: String,
    /// Message.
    pub message: String,
}

impl ResourceRow {
    /// Argo's `resourceState.Key()`: `group/kind/namespace/name`.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.group, self.kind, self.namespace, self.name
        )
    }
}

fn status_key(r: &ResourceStatus) -> String {
    format!(
        "{}/{}/{}/{}",
        r.group.as_deref().unwrap_or_default(),
        r.kind.as_deref().unwrap_or_default(),
        r.namespace.as_deref().unwrap_or_default(),
        r.name.as_deref().unwrap_or_default()
    )
}

fn health_of(r: &ResourceStatus) -> (String, String) {
    r.health.as_ref().map_or_else(Default::default, |h| {
        (
            h.status.clone().unwrap_or_default(),
            h.message.clone().unwrap_or_default(),
        )
    })
}

/// The rows of an Application, in Argo's order.
pub fn resource_rows(app: &Application) -> Vec<ResourceRow> {
    let status = app.status.as_ref();
    let mut by_key: BTreeMap<String, &ResourceStatus> = status
        .and_then(|s| s.resources.as_ref())
        .into_iter()
        .flatten()
        .map(|r| (status_key(r), r))
        .collect();
    let mut rows = Vec::new();
    let results = status
        .and_then(|s| s.operation_state.as_ref())
        .and_then(|o| o.sync_result.as_ref())
        .and_then(|r| r.resources.as_ref());
    for res in results.into_iter().flatten() {
        let key = format!("{}/{}/{}/{}", res.group, res.kind, res.namespace, res.name);
        let sync_message = res.message.clone().unwrap_or_default();
        let mut row = ResourceRow {
            group: res.group.clone(),
            kind: res.kind.clone(),
            namespace: res.namespace.clone(),
            name: res.name.clone(),
            status: res.hook_phase.map(|p| p.to_string()).unwrap_or_default(),
            health: res.status.map(|c| c.to_string()).unwrap_or_default(),
            hook: res.hook_type.map(|h| h.to_string()).unwrap_or_default(),
            message: sync_message.clone(),
        };
        if let Some(current) = by_key.get(&key).filter(|_| res.hook_type.is_none()) {
            let (health, health_message) = health_of(current);
            row.health = health;
            row.status = current.status.map(|s| s.to_string()).unwrap_or_default();
            if res.status == Some(ResultCode::Synced) || res.status.is_none() {
                row.message = health_message;
            }
        }
        by_key.remove(&key);
        rows.push(row);
    }
    for r in by_key.into_values() {
        let (health, message) = health_of(r);
        rows.push(ResourceRow {
            group: r.group.clone().unwrap_or_default(),
            kind: r.kind.clone().unwrap_or_default(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
            status: r.status.map(|s| s.to_string()).unwrap_or_default(),
            health,
            hook: String::new(),
            message,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app(status: serde_json::Value) -> Application {
        serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"namespace": "payments"},
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git"}},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn sync_result_first_then_remaining_sorted_and_hooks_use_phase() {
        let a = app(json!({
            "resources": [
                {"version": "v1", "kind": "Service", "namespace": "payments", "name": "payments-api", "status": "Synced", "health": {"status": "Healthy"}},
                {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "payments", "name": "payments-api", "status": "Synced",
                 "health": {"status": "Progressing", "message": "Waiting for rollout to finish: 1 of 3 updated replicas are available..."}},
                {"version": "v1", "kind": "ConfigMap", "namespace": "payments", "name": "payments-api", "status": "Synced"}
            ],
            "operationState": {"operation": {"sync": {}}, "phase": "Succeeded", "startedAt": "2026-07-20T10:15:32Z",
              "syncResult": {"revision": "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e", "resources": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "payments", "name": "payments-api",
                 "status": "Synced", "message": "deployment.apps/payments-api serverside-applied", "syncPhase": "Sync"},
                {"group": "batch", "version": "v1", "kind": "Job", "namespace": "payments", "name": "migrate",
                 "status": "Synced", "message": "job.batch/migrate created", "hookType": "PreSync", "hookPhase": "Succeeded", "syncPhase": "PreSync"},
                {"group": "", "version": "v1", "kind": "Secret", "namespace": "payments", "name": "old",
                 "status": "PruneSkipped", "message": "ignored (requires pruning)", "syncPhase": "Sync"}
              ]}}
        }));
        let rows = resource_rows(&a);
        let keys: Vec<_> = rows.iter().map(ResourceRow::key).collect();
        assert_eq!(
            keys,
            [
                "apps/Deployment/payments/payments-api",
                "batch/Job/payments/migrate",
                "/Secret/payments/old",
                "/ConfigMap/payments/payments-api",
                "/Service/payments/payments-api"
            ]
        );
        assert_eq!(rows[0].status, "Synced");
        assert_eq!(rows[0].health, "Progressing");
        assert!(rows[0].message.starts_with("Waiting for rollout"));
        assert_eq!(
            (
                rows[1].status.as_str(),
                rows[1].health.as_str(),
                rows[1].hook.as_str()
            ),
            ("Succeeded", "Synced", "PreSync")
        );
        assert_eq!(rows[1].message, "job.batch/migrate created");
        // Not in status.resources: Argo shows the hook phase (empty) and the result code.
        assert_eq!(
            (rows[2].status.as_str(), rows[2].health.as_str()),
            ("", "PruneSkipped")
        );
        assert_eq!(rows[2].message, "ignored (requires pruning)");
        assert_eq!(rows[3].health, "");
    }
}
