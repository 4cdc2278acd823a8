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
    pub(crate) fn issuer(&self) -> &'static str {
        match self.kind {
            CallerKind::Kubernetes => "kubernetes",
            _ => jwt::ISSUER,
        }
    }

    /// The local account name when the caller is one.
    pub(crate) fn account(&self) -> Option<&str> {
        matches!(self.kind, CallerKind::Account { .. }).then_some(self.subject.as_str())
    }
}
