//! What SSO is read from (argocd-cm, argocd-secret, the labelled Secrets `oidc.config` refers
//! to), and SSO as it stands for a request.

use std::collections::BTreeMap;

use super::Status;
use super::config::{self, Inputs, SsoSettings};
use crate::auth::store;
use crate::error::Result;
use crate::state::{AppState, SETTINGS_CONFIGMAP};

/// What argocd-cm and the Secrets say, read now.
pub(crate) struct SsoInputs {
    pub(crate) cm: BTreeMap<String, String>,
    pub(crate) secrets: BTreeMap<String, String>,
    pub(crate) server_key: Vec<u8>,
}

impl SsoInputs {
    pub(crate) fn settings(&self) -> std::result::Result<Option<SsoSettings>, String> {
        config::parse(&Inputs {
            cm: &self.cm,
            secrets: &self.secrets,
            server_key: &self.server_key,
        })
    }
}

/// Argo's label on the Secrets `$<secret>:<key>` may refer to.
const PART_OF: (&str, &str) = ("app.kubernetes.io/part-of", "argocd");

impl AppState {
    /// argocd-cm, argocd-secret and the labelled Secrets `oidc.config` refers to.
    pub(crate) async fn sso_inputs(&self) -> Result<SsoInputs> {
        let cm = store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await?;
        let secret = store::secret(&self.client, &self.namespace, store::SECRET).await?;
        let data = store::secret_data(secret.as_ref());
        let server_key = data.get("server.secretkey").cloned().unwrap_or_default();
        let mut secrets: BTreeMap<String, String> = data
            .iter()
            .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        for name in config::referenced_secrets(&cm) {
            if crate::state::check_name("Secret", &name).is_err() {
                continue;
            }
            let Some(other) = store::secret(&self.client, &self.namespace, &name).await? else {
                continue;
            };
            let labelled = other
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(PART_OF.0))
                .is_some_and(|v| v == PART_OF.1);
            if !labelled {
                tracing::warn!(
                    "oidc.config refers to Secret {name}, which lacks the label {}={}; ignored",
                    PART_OF.0,
                    PART_OF.1
                );
                continue;
            }
            for (k, v) in store::secret_data(Some(&other)) {
                secrets.insert(
                    format!("{name}:{k}"),
                    String::from_utf8_lossy(&v).into_owned(),
                );
            }
        }
        Ok(SsoInputs {
            cm,
            secrets,
            server_key,
        })
    }

    /// SSO now: off, unavailable (and why) or a discovered provider; with what it was read from.
    pub(crate) async fn sso_now(&self) -> Result<(SsoInputs, Status)> {
        let inputs = self.sso_inputs().await?;
        let Some(auth) = self.auth.as_deref() else {
            return Ok((inputs, Status::Off));
        };
        let status = match inputs.settings() {
            Ok(None) => Status::Off,
            Err(why) => Status::Unavailable(why),
            Ok(Some(settings)) => auth.sso.provider(settings).await,
        };
        Ok((inputs, status))
    }

    /// [`Sso::use_state`] (false without authentication).
    pub(crate) fn sso_use_state(&self, state: &str, expires: i64, now: i64) -> bool {
        self.auth
            .as_deref()
            .is_some_and(|a| a.sso.use_state(state, expires, now))
    }

    /// Keeps a login's access token for the userinfo endpoint (`enableUserInfoGroups`).
    pub(crate) fn sso_remember_access_token(&self, subject: &str, token: &str, expires: i64) {
        if let Some(a) = self.auth.as_deref() {
            a.sso.userinfo.remember(subject, token, expires);
        }
    }
}
