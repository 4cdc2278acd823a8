//! The `argocd-manager` ServiceAccount that `cluster add` installs in a cluster, as Argo's
//! `clusterauth.InstallClusterManagerRBAC` does: the ServiceAccount in the system namespace,
//! a ClusterRole `argocd-manager-role` with every right and its binding (or, for a namespaced
//! cluster, a Role and RoleBinding of those names in each namespace), and a long-lived token
//! Secret `argocd-manager-long-lived-token` whose token the cluster Secret then holds.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// Argo's `ArgoCDManagerServiceAccount`.
pub const MANAGER_SERVICE_ACCOUNT: &str = "argocd-manager";
/// Argo's `ArgoCDManagerClusterRole`.
pub const MANAGER_ROLE: &str = "argocd-manager-role";
/// Argo's `ArgoCDManagerClusterRoleBinding`.
pub const MANAGER_ROLE_BINDING: &str = "argocd-manager-role-binding";
/// Argo's `SATokenSecretSuffix`.
pub const TOKEN_SECRET_SUFFIX: &str = "-long-lived-token";
/// Argo's `common.DefaultSystemNamespace`.
pub const DEFAULT_SYSTEM_NAMESPACE: &str = "kube-system";
/// Argo's `common.BearerTokenTimeout`.
pub const BEARER_TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

fn api_error(what: String) -> impl FnOnce(kube::Error) -> Error {
    move |e| Error::Api {
        what,
        source: Box::new(e),
    }
}

/// Creates `obj`, or replaces what is there (Argo's `upsert`: create, then update on
/// AlreadyExists).
async fn upsert<K>(api: &Api<K>, name: &str, obj: Value, kind: &str) -> Result<()>
where
    K: kube::Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    let typed: K = serde_json::from_value(obj).map_err(|e| Error::ClusterConfig {
        server: String::new(),
        reason: format!("building {kind} {name}: {e}"),
    })?;
    match api.create(&PostParams::default(), &typed).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => {
            let patch = serde_json::to_value(&typed).map_err(|e| Error::ClusterConfig {
                server: String::new(),
                reason: format!("building {kind} {name}: {e}"),
            })?;
            api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map(|_| ())
                .map_err(api_error(format!("updating {kind} {name}")))
        }
        Err(e) => Err(api_error(format!("creating {kind} {name}"))(e)),
    }
}

fn all_rights(cluster: bool) -> Value {
    let mut rules = vec![json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]})];
    if cluster {
        rules.push(json!({"nonResourceURLs": ["*"], "verbs": ["*"]}));
    }
    json!(rules)
}

/// Argo's `InstallClusterManagerRBAC`: the ServiceAccount, its rights, and its token.
pub async fn install(
    client: &kube::Client,
    system_namespace: &str,
    namespaces: &[String],
    timeout: Duration,
) -> Result<String> {
    let subject = json!([{"kind": "ServiceAccount", "name": MANAGER_SERVICE_ACCOUNT,
                          "namespace": system_namespace}]);
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), system_namespace);
    upsert(
        &sa,
        MANAGER_SERVICE_ACCOUNT,
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": MANAGER_SERVICE_ACCOUNT, "namespace": system_namespace}}),
        "ServiceAccount",
    )
    .await?;
    if namespaces.is_empty() {
        let roles: Api<ClusterRole> = Api::all(client.clone());
        upsert(
            &roles,
            MANAGER_ROLE,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": MANAGER_ROLE}, "rules": all_rights(true)}),
            "ClusterRole",
        )
        .await?;
        let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
        upsert(&bindings, MANAGER_ROLE_BINDING, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": MANAGER_ROLE_BINDING},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MANAGER_ROLE},
            "subjects": subject}), "ClusterRoleBinding").await?;
    } else {
        for ns in namespaces {
            let roles: Api<Role> = Api::namespaced(client.clone(), ns);
            upsert(
                &roles,
                MANAGER_ROLE,
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": MANAGER_ROLE, "namespace": ns}, "rules": all_rights(false)}),
                "Role",
            )
            .await?;
            let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), ns);
            upsert(&bindings, MANAGER_ROLE_BINDING, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": MANAGER_ROLE_BINDING, "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": MANAGER_ROLE},
                "subjects": subject}), "RoleBinding").await?;
        }
    }
    bearer_token(client, system_namespace, MANAGER_SERVICE_ACCOUNT, timeout).await
}

/// Argo's `GetServiceAccountBearerToken`: the `<sa>-long-lived-token` Secret (created when
/// missing), waited for until the token controller fills in its token.
pub async fn bearer_token(
    client: &kube::Client,
    namespace: &str,
    service_account: &str,
    timeout: Duration,
) -> Result<String> {
    let name = format!("{service_account}{TOKEN_SECRET_SUFFIX}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let obj: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": name, "namespace": namespace,
                     "annotations": {"kubernetes.io/service-account.name": service_account}}
    }))
    .map_err(|e| Error::ClusterConfig {
        server: String::new(),
        reason: format!("building Secret {name}: {e}"),
    })?;
    match secrets.create(&PostParams::default(), &obj).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => {
            return Err(api_error(format!(
                "failed to create secret {name:?} for serviceaccount {service_account:?}"
            ))(e));
        }
    }
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let secret = secrets.get(&name).await.map_err(api_error(format!(
            "failed to get secret {name:?} for serviceaccount {service_account:?}"
        )))?;
        if let Some(token) = secret.data.as_ref().and_then(|d| d.get("token")) {
            return String::from_utf8(token.0.clone()).map_err(|_| Error::ClusterConfig {
                server: String::new(),
                reason: format!("the token of Secret {name} is not UTF-8"),
            });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::ClusterConfig {
                server: String::new(),
                reason: format!(
                    "failed to get token for serviceaccount {service_account:?}: the token controller did not fill in Secret {name} within {}s",
                    timeout.as_secs()
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Argo's `UninstallClusterManagerRBAC`: the ClusterRoleBinding, the ClusterRole and the
/// ServiceAccount in kube-system (each one missing is fine).
pub async fn uninstall(client: &kube::Client) -> Result<()> {
    let gone = |r: std::result::Result<(), kube::Error>, what: &str| match r {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(api_error(format!("failed to delete {what}"))(e)),
    };
    let dp = DeleteParams::default();
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    gone(
        bindings.delete(MANAGER_ROLE_BINDING, &dp).await.map(|_| ()),
        "ClusterRoleBinding",
    )?;
    let roles: Api<ClusterRole> = Api::all(client.clone());
    gone(
        roles.delete(MANAGER_ROLE, &dp).await.map(|_| ()),
        "ClusterRole",
    )?;
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), DEFAULT_SYSTEM_NAMESPACE);
    gone(
        sa.delete(MANAGER_SERVICE_ACCOUNT, &dp).await.map(|_| ()),
        "ServiceAccount",
    )
}
