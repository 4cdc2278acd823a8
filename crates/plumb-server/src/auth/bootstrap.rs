//! The signing key and the initial admin password, created at the server's start.

use k8s_openapi::ByteString;

use super::password::bcrypt_hash;
use super::random::{random_bytes, random_password};
use super::store;
use crate::error::Result;
use crate::state::SETTINGS_CONFIGMAP;

/// What Argo's server does at start: a signing key in `argocd-secret` (`server.secretkey`) if
/// there is none, and, while the admin account is enabled and has no password, a generated one:
/// its bcrypt hash in `argocd-secret`, the password itself in `argocd-initial-admin-secret`.
pub(crate) async fn bootstrap(client: &kube::Client, ns: &str) -> Result<()> {
    let cm = store::config_map(client, ns, SETTINGS_CONFIGMAP).await?;
    let admin_enabled = cm
        .get("admin.enabled")
        .is_none_or(|v| !matches!(v.trim(), "false" | "0" | "f" | "F" | "FALSE" | "False"));
    let key = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        random_bytes::<32>()?,
    );
    let password = random_password()?;
    let hash = bcrypt_hash(password.clone()).await?;
    let now = jiff::Timestamp::now().to_string();
    let generated = store::update_secret(client, ns, |data| {
        let mut changed = false;
        if data.get("server.secretkey").is_none_or(|v| v.0.is_empty()) {
            data.insert(
                "server.secretkey".into(),
                ByteString(key.clone().into_bytes()),
            );
            changed = true;
        }
        let mut generated = false;
        if admin_enabled && data.get("admin.password").is_none_or(|v| v.0.is_empty()) {
            data.insert(
                "admin.password".into(),
                ByteString(hash.clone().into_bytes()),
            );
            data.insert(
                "admin.passwordMtime".into(),
                ByteString(now.clone().into_bytes()),
            );
            changed = true;
            generated = true;
        }
        Ok((changed, generated))
    })
    .await?;
    if generated {
        store::create_initial_admin_secret(client, ns, &password).await?;
        tracing::info!(
            "generated the admin password; it is in Secret {ns}/{}",
            store::INITIAL_ADMIN_SECRET
        );
    }
    Ok(())
}
