//! Who is calling, and how they authenticated.

use super::jwt;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// The RBAC subject: the account name, `proj:<project>:<role>`, or the Kubernetes user's
    /// (`system:serviceaccount:<ns>:<name>`, `k8s:<name>`; [`super::kubernetes::subject_of`]).
    pub(crate) subject: String,
    /// Groups (Kubernetes users' groups, as [`super::kubernetes::group_of`] names them).
    pub(crate) groups: Vec<String>,
    pub(crate) kind: CallerKind,
}

/// How the caller authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallerKind {
    /// `--disable-auth`: everything is allowed.
    Unrestricted,
    /// A local account's session or API key.
    Account {
        capability: &'static str,
        jti: String,
        exp: Option<i64>,
    },
    /// A project role token.
    ProjectRole { project: String, role: String },
    /// A bearer token the Kubernetes API server accepted, of a subject argocd-cm lists.
    Kubernetes,
    /// An ID token of the single sign-on provider (the `argocd.token` cookie after an SSO
    /// login, or a bearer token from `login --sso`): its verified claims, for the RBAC scopes.
    Sso {
        issuer: String,
        claims: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
    },
    /// No token, with `users.anonymous.enabled`: only `policy.default` applies.
    Anonymous,
}

impl Caller {
    pub(crate) fn unrestricted() -> Self {
        Self {
            subject: String::new(),
            groups: Vec::new(),
            kind: CallerKind::Unrestricted,
        }
    }

    /// The issuer shown by userinfo.
    pub(crate) fn issuer(&self) -> &str {
        match &self.kind {
            CallerKind::Kubernetes => "kubernetes",
            CallerKind::Sso { issuer, .. } => issuer,
            _ => jwt::ISSUER,
        }
    }

    /// Argo's `GetScopeValues`: the values of the claims `scopes` names (strings, or lists of
    /// strings), the subjects RBAC tries after the caller's own. Callers without claims have
    /// their groups under the `groups` scope.
    pub(crate) fn scope_values(&self, scopes: &[String]) -> Vec<String> {
        let CallerKind::Sso { claims, .. } = &self.kind else {
            return if scopes.iter().any(|s| s == "groups") {
                self.groups.clone()
            } else {
                Vec::new()
            };
        };
        let mut out = Vec::new();
        for scope in scopes {
            match claims.get(scope) {
                Some(serde_json::Value::String(s)) => out.push(s.clone()),
                Some(serde_json::Value::Array(items)) => out.extend(
                    items
                        .iter()
                        .filter_map(serde_json::Value::as_str)
                        .map(str::to_string),
                ),
                _ => {}
            }
        }
        out
    }

    /// The local account name when the caller is one.
    pub(crate) fn account(&self) -> Option<&str> {
        matches!(self.kind, CallerKind::Account { .. }).then_some(self.subject.as_str())
    }
}
