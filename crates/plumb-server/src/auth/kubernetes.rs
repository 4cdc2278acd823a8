//! Kubernetes bearer tokens (Plumb's addition; Argo CD has SSO instead): a token the server did
//! not issue is sent to the API server as a TokenReview, but only when the operator opted in.
//!
//! Every Pod gets a ServiceAccount token mounted, so accepting any token the API server accepts
//! would let every workload of the cluster log in (and get `policy.default`). Logins are
//! therefore limited to the subjects argocd-cm's `plumb.auth.kubernetes.subjects` lists (none
//! by default: disabled). The RBAC subjects of such callers are kept apart from local accounts
//! and roles by construction: a ServiceAccount is `system:serviceaccount:<ns>:<name>`, any other
//! user `k8s:<name>`, a group keeps its name when it starts with `system:` (Kubernetes reserves
//! those) and gets `k8s:` otherwise. Local account names cannot hold `:` (they are ConfigMap
//! keys), so none of these can ever be `admin`, a `role:` or a `proj:` subject.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use kube::Api;
use kube::api::PostParams;

use super::caller::{Caller, CallerKind};
use super::store;
use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};

/// The argocd-cm key listing who may log in with a Kubernetes token: RBAC subjects as
/// [`subject_of`] and [`group_of`] name them, globs allowed, separated by commas or newlines.
pub(crate) const SUBJECTS_KEY: &str = "plumb.auth.kubernetes.subjects";
/// Prefix of Kubernetes users and groups that are not ServiceAccounts or `system:` groups.
const PREFIX: &str = "k8s:";
/// Kubernetes' prefix of ServiceAccount user names.
const SERVICE_ACCOUNT: &str = "system:serviceaccount:";

/// The RBAC subject of the Kubernetes user `name`.
pub(crate) fn subject_of(name: &str) -> String {
    if name.starts_with(SERVICE_ACCOUNT) {
        name.to_string()
    } else {
        format!("{PREFIX}{name}")
    }
}

/// The RBAC subject of the Kubernetes group `name`.
pub(crate) fn group_of(name: &str) -> String {
    if name.starts_with("system:") {
        name.to_string()
    } else {
        format!("{PREFIX}{name}")
    }
}

/// The entries of [`SUBJECTS_KEY`].
fn allowed(value: Option<&String>) -> Vec<String> {
    value
        .map(|v| {
            v.split([',', '\n'])
                .map(str::trim)
                .filter(|e| !e.is_empty() && !e.starts_with('#'))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn matches(pattern: &str, subject: &str) -> bool {
    pattern == subject
        || globset::Glob::new(pattern)
            .map(|g| g.compile_matcher().is_match(subject))
            .unwrap_or(false)
}

/// Whether the caller (its subject or one of its groups) is on the list.
fn listed(list: &[String], caller: &Caller) -> bool {
    list.iter()
        .any(|p| matches(p, &caller.subject) || caller.groups.iter().any(|g| matches(p, g)))
}

fn refused(message: String) -> Error {
    Error::Unauthenticated(format!("invalid session: {message}"))
}

impl AppState {
    /// A token not issued by this server: accepted when the Kubernetes API server does and the
    /// caller is listed in [`SUBJECTS_KEY`]. With an empty list no TokenReview is made at all.
    pub(crate) async fn authenticate_kubernetes(&self, token: &str) -> Result<Caller> {
        let cm = store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await?;
        let list = allowed(cm.get(SUBJECTS_KEY));
        if list.is_empty() {
            return Err(refused(format!(
                "the token is not a session of this server, and Kubernetes tokens are not accepted (argocd-cm {SUBJECTS_KEY} lists no subject)"
            )));
        }
        let caller = self.token_review(token).await?;
        if !listed(&list, &caller) {
            tracing::info!(
                subject = %caller.subject,
                "Kubernetes token refused: subject not listed in {SUBJECTS_KEY}"
            );
            return Err(refused(format!(
                "Kubernetes user {} may not log in: neither it nor its groups are listed in argocd-cm {SUBJECTS_KEY}",
                caller.subject
            )));
        }
        Ok(caller)
    }

    async fn token_review(&self, token: &str) -> Result<Caller> {
        let api: Api<TokenReview> = Api::all(self.client.clone());
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Error::kube("checking a bearer token with a TokenReview", e))?;
        let status = answer.status.unwrap_or_default();
        if status.authenticated != Some(true) {
            return Err(refused(
                "the token is not a session of this server and the Kubernetes API server does not accept it".into(),
            ));
        }
        let user = status.user.unwrap_or_default();
        let name = user.username.unwrap_or_default();
        if name.is_empty() {
            return Err(refused("the Kubernetes API server named no user".into()));
        }
        Ok(Caller {
            subject: subject_of(&name),
            groups: user
                .groups
                .unwrap_or_default()
                .iter()
                .map(|g| group_of(g))
                .collect(),
            kind: CallerKind::Kubernetes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(user: &str, groups: &[&str]) -> Caller {
        Caller {
            subject: subject_of(user),
            groups: groups.iter().map(|g| group_of(g)).collect(),
            kind: CallerKind::Kubernetes,
        }
    }

    #[test]
    fn kubernetes_names_never_equal_local_accounts_or_roles() {
        assert_eq!(
            subject_of("system:serviceaccount:ci:deployer"),
            "system:serviceaccount:ci:deployer"
        );
        assert_eq!(subject_of("admin"), "k8s:admin");
        assert_eq!(subject_of("role:admin"), "k8s:role:admin");
        assert_eq!(subject_of("proj:team:ci"), "k8s:proj:team:ci");
        assert_eq!(
            subject_of("system:kube-scheduler"),
            "k8s:system:kube-scheduler"
        );
        assert_eq!(
            group_of("system:serviceaccounts:ci"),
            "system:serviceaccounts:ci"
        );
        assert_eq!(group_of("admin"), "k8s:admin");
        assert_eq!(group_of("role:admin"), "k8s:role:admin");
    }

    #[test]
    fn the_list_names_subjects_or_groups_with_globs() {
        let list = allowed(Some(
            &"system:serviceaccount:ci:*\n# a comment\n, k8s:alice,system:serviceaccounts:deploy"
                .to_string(),
        ));
        assert_eq!(list.len(), 3);
        assert!(listed(
            &list,
            &caller("system:serviceaccount:ci:builder", &[])
        ));
        assert!(listed(&list, &caller("alice", &[])));
        assert!(!listed(
            &list,
            &caller("system:serviceaccount:other:builder", &[])
        ));
        assert!(listed(
            &list,
            &caller(
                "system:serviceaccount:deploy:x",
                &["system:serviceaccounts", "system:serviceaccounts:deploy"]
            )
        ));
        // A plain name on the list is the prefixed subject's, never a local account's.
        assert!(!listed(
            &allowed(Some(&"alice".into())),
            &caller("alice", &[])
        ));
        assert!(allowed(None).is_empty());
        assert!(allowed(Some(&" \n,".into())).is_empty());
    }
}
