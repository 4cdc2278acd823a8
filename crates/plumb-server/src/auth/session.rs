//! What every token check reads: the signing key and the local accounts, and the shared
//! authentication state (absent with `--disable-auth`).

use super::accounts::{self, Account};
use super::shared::Auth;
use super::{jwt, store};
use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};

impl AppState {
    pub(super) fn auth_state(&self) -> Result<&Auth> {
        self.auth
            .as_deref()
            .ok_or_else(|| Error::FailedPrecondition("authentication is disabled".into()))
    }

    /// The signing key and the accounts, read now.
    pub(crate) async fn accounts(
        &self,
    ) -> Result<(Vec<u8>, std::collections::BTreeMap<String, Account>)> {
        let cm = store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await?;
        let secret = store::secret(&self.client, &self.namespace, store::SECRET).await?;
        let data = store::secret_data(secret.as_ref());
        let key = data.get("server.secretkey").cloned().unwrap_or_default();
        let accounts = accounts::parse(&cm, &data).map_err(Error::Internal)?;
        Ok((key, accounts))
    }

    /// Signs claims with `server.secretkey`.
    pub(crate) async fn sign(&self, claims: &jwt::Claims) -> Result<String> {
        let (key, _) = self.accounts().await?;
        if key.is_empty() {
            return Err(Error::Internal(format!(
                "Secret {}/{} has no server.secretkey",
                self.namespace,
                store::SECRET
            )));
        }
        jwt::sign(&key, claims).map_err(Error::Internal)
    }
}
