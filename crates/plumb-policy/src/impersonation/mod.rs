//! The identity a sync writes with when argocd-cm's `application.sync.impersonation.enabled` is
//! `"true"`: the ServiceAccount the AppProject's `spec.destinationServiceAccounts` names for the
//! destination, as Argo CD's `DeriveServiceAccountToImpersonate` (`util/settings/impersonation.go`)
//! and `SyncAppState` (`controller/sync.go`) choose it, with Argo's messages.
//!
//! Entries are tried in order and the first whose `server` glob matches the destination's server
//! URL and whose `namespace` glob matches the Application's destination namespace wins. Its
//! `defaultServiceAccount` is `name` (in the destination namespace, else the Application's own
//! namespace) or `namespace:name`. Beyond Argo, a matched name that Kubernetes could not have
//! as a ServiceAccount (spaces, an empty half around `:`, upper case) is refused naming the
//! field, rather than impersonating a user that cannot exist.

use plumb_model::Settings;
use plumb_model::application::AppProject;
use plumb_model::settings::{IMPERSONATION_ENABLED, IMPERSONATION_ENFORCED};

use crate::pattern;

/// Argo's `serviceAccountDisallowedCharSet`.
const DISALLOWED: &[char] = &['!', '*', '[', ']', '{', '}', '\\', '/'];

/// The user name Kubernetes gives a ServiceAccount.
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";

/// Whether, and how strictly, syncs impersonate (argocd-cm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Syncs use the controller's own credentials (Argo's default).
    Off,
    /// Syncs impersonate the matched ServiceAccount; with `enforced` (the default) a
    /// destination without one is refused, else it falls back to the controller's credentials.
    On {
        /// `application.sync.impersonation.enforced` is not `"false"`.
        enforced: bool,
    },
}

impl Mode {
    /// The mode the settings ask for. Only `"true"` turns impersonation on, as in Argo (blanks
    /// around it are forgiven: reading a typo as "on" fails closed); only `"false"` turns
    /// enforcement off.
    pub fn of(settings: &Settings) -> Self {
        if settings.get(IMPERSONATION_ENABLED).map(str::trim) != Some("true") {
            return Self::Off;
        }
        Self::On {
            enforced: settings.get(IMPERSONATION_ENFORCED) != Some("false"),
        }
    }
}

/// Why no ServiceAccount could be derived: Argo's messages, naming the entry's field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeriveError {
    /// An entry's `server` is not a glob.
    #[error(
        "invalid glob pattern for destination server: spec.destinationServiceAccounts[{index}].server {pattern:?} is not a valid glob pattern"
    )]
    ServerGlob {
        /// The entry's position.
        index: usize,
        /// The pattern.
        pattern: String,
    },
    /// An entry's `namespace` is not a glob.
    #[error(
        "invalid glob pattern for destination namespace: spec.destinationServiceAccounts[{index}].namespace {pattern:?} is not a valid glob pattern"
    )]
    NamespaceGlob {
        /// The entry's position.
        index: usize,
        /// The pattern.
        pattern: String,
    },
    /// The matched `defaultServiceAccount` is blank or holds one of `!*[]{}\/`.
    #[error(
        "default service account contains invalid chars '{name}' (spec.destinationServiceAccounts[{index}].defaultServiceAccount)"
    )]
    InvalidChars {
        /// The entry's position.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// The matched `defaultServiceAccount` cannot name a ServiceAccount (Plumb).
    #[error("spec.destinationServiceAccounts[{index}].defaultServiceAccount {name:?}: {reason}")]
    NotAServiceAccount {
        /// The entry's position.
        index: usize,
        /// The name as written.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// The user to impersonate (`system:serviceaccount:<namespace>:<name>`) for an Application in
/// `app_namespace` whose destination is `server` / `dest_namespace`, or `None` when no entry
/// matches. Argo's `DeriveServiceAccountToImpersonate`.
pub fn derive(
    project: &AppProject,
    app_namespace: &str,
    dest_namespace: &str,
    server: &str,
) -> Result<Option<String>, DeriveError> {
    let entries = project.spec.destination_service_accounts.as_deref();
    for (index, item) in entries.unwrap_or_default().iter().enumerate() {
        let server_matched = pattern::glob_checked(&item.server, server, &[]).ok_or_else(|| {
            DeriveError::ServerGlob {
                index,
                pattern: item.server.clone(),
            }
        })?;
        let ns_pattern = item.namespace.as_deref().unwrap_or_default();
        let ns_matched =
            pattern::glob_checked(ns_pattern, dest_namespace, &[]).ok_or_else(|| {
                DeriveError::NamespaceGlob {
                    index,
                    pattern: ns_pattern.to_string(),
                }
            })?;
        if server_matched && ns_matched {
            let sa_namespace = if dest_namespace.is_empty() {
                app_namespace
            } else {
                dest_namespace
            };
            return user_of(index, &item.default_service_account, sa_namespace).map(Some);
        }
    }
    Ok(None)
}

/// What a sync in `mode` writes as: `Ok(None)` for the controller's own credentials, the user to
/// impersonate, or the operation's message when the sync must not run (Argo's texts).
pub fn sync_identity(
    mode: Mode,
    project: &AppProject,
    app_namespace: &str,
    dest_namespace: &str,
    server: &str,
) -> Result<Option<String>, String> {
    let Mode::On { enforced } = mode else {
        return Ok(None);
    };
    match derive(project, app_namespace, dest_namespace, server) {
        Err(e) => Err(format!(
            "failed to derive service account to impersonate: {e}"
        )),
        Ok(None) if enforced => Err(format!(
            "no matching service account found for destination server {server} and namespace {dest_namespace}"
        )),
        Ok(found) => Ok(found),
    }
}

/// The user name of the matched entry's `defaultServiceAccount`.
fn user_of(index: usize, name: &str, sa_namespace: &str) -> Result<String, DeriveError> {
    if name.trim_matches(' ').is_empty() || name.contains(DISALLOWED) {
        return Err(DeriveError::InvalidChars {
            index,
            name: name.to_string(),
        });
    }
    let refuse = |reason| DeriveError::NotAServiceAccount {
        index,
        name: name.to_string(),
        reason,
    };
    let (namespace, account) = match name.split_once(':') {
        Some((ns, account)) => {
            if !is_dns_label(ns) {
                return Err(refuse(
                    "the part before ':' is not a namespace name (lower-case letters, digits and '-', at most 63)",
                ));
            }
            (ns, account)
        }
        None => (sa_namespace, name),
    };
    if !is_dns_subdomain(account) {
        return Err(refuse(
            "not a ServiceAccount name (lower-case letters, digits, '-' and '.', at most 253; no spaces, at most one ':')",
        ));
    }
    Ok(format!(
        "{SERVICE_ACCOUNT_USER_PREFIX}{namespace}:{account}"
    ))
}

/// A DNS-1123 label (a namespace name).
fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A DNS-1123 subdomain (a ServiceAccount name).
fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

#[cfg(test)]
mod tests;
