//! SSH host keys from Argo CD's `argocd-ssh-known-hosts-cm` (key `ssh_known_hosts`, OpenSSH's
//! `known_hosts` format): the only host keys Git over SSH accepts. An empty or missing list
//! accepts none, so every SSH repository then needs `insecure: "true"` (as in Argo CD, whose
//! repo server checks against that file alone, never the user's `~/.ssh/known_hosts`).

use serde_json::Value;

/// The ConfigMap's name.
pub const KNOWN_HOSTS_CM: &str = "argocd-ssh-known-hosts-cm";
/// The key holding the list.
pub const KNOWN_HOSTS_KEY: &str = "ssh_known_hosts";

/// The accepted SSH host keys, as `known_hosts` text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownHosts {
    text: String,
}

impl KnownHosts {
    /// Reads the ConfigMap as the API server returns it.
    pub fn from_config_map(cm: &Value) -> Self {
        let text = cm
            .pointer(&format!("/data/{KNOWN_HOSTS_KEY}"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        Self::from_text(text)
    }

    /// A list in `known_hosts` format.
    pub fn from_text(text: &str) -> Self {
        let mut text = text.to_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Self { text }
    }

    /// The list as written to the file `ssh` reads.
    pub fn as_text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_config_map_key() {
        let cm =
            serde_json::json!({"data": {"ssh_known_hosts": "[127.0.0.1]:22 ssh-ed25519 AAAA"}});
        assert_eq!(
            KnownHosts::from_config_map(&cm).as_text(),
            "[127.0.0.1]:22 ssh-ed25519 AAAA\n"
        );
        assert_eq!(
            KnownHosts::from_config_map(&serde_json::json!({})).as_text(),
            ""
        );
    }
}
