//! Authentication, as Argo CD's session manager does it: local accounts (`argocd-cm`,
//! `argocd-secret`) logging in for HS256 session JWTs ([`login`]), API keys and project role
//! tokens of the same kind, revocable by their id; and, Plumb's addition, bearer tokens the
//! Kubernetes API server accepts (ServiceAccount tokens) of the subjects the operator listed,
//! checked with a TokenReview ([`kubernetes`]). [`csrf`] holds the checks that keep other sites
//! from using a browser's session cookie.
//!
//! Tokens arrive as `Authorization: Bearer` or Argo's `argocd.token` cookie. Nothing here logs a
//! token, password or hash.

pub(crate) mod accounts;
mod bootstrap;
mod caller;
mod csrf;
pub(crate) mod jwt;
mod kubernetes;
mod login;
pub(crate) mod middleware;
mod password;
mod random;
mod revocation;
mod session;
mod shared;
pub(crate) mod sso;
pub(crate) mod store;
pub(crate) mod throttle;
pub(crate) mod token_cookie;
mod verify;

pub use crate::config::DEFAULT_DEX_SERVER;
pub(crate) use bootstrap::bootstrap;
pub(crate) use caller::{Caller, CallerKind};
pub(crate) use csrf::{ApiContentTypes, RequestGuard};
pub(crate) use password::hash_password;
pub(crate) use random::new_token_id;
pub(crate) use shared::{Auth, LoginCounter};
pub use sso::dex::generate_dex_config;
pub use throttle::ThrottleConfig;
pub(crate) use token_cookie::COOKIE;
pub(crate) use verify::sso_caller;
