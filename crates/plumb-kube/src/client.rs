//! Building a [`kube::Client`]: from an explicit kubeconfig file, or inferred the way kubectl and
//! in-cluster controllers do (`$KUBECONFIG`, `~/.kube/config`, then the pod's service account).

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::{Error, Result};

/// Where the client configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KubeconfigSource {
    /// `$KUBECONFIG` or `~/.kube/config`, else the in-cluster service account (`Config::infer`).
    #[default]
    Infer,
    /// This kubeconfig file, its current context.
    Path(PathBuf),
}

impl KubeconfigSource {
    /// A kubeconfig path when one is given, else inference.
    pub fn from_option(path: Option<&Path>) -> Self {
        path.map_or(Self::Infer, |p| Self::Path(p.to_path_buf()))
    }
}

/// Loads the client configuration.
pub async fn load_config(source: &KubeconfigSource) -> Result<Config> {
    match source {
        KubeconfigSource::Infer => Config::infer().await.map_err(Error::InferConfig),
        KubeconfigSource::Path(path) => {
            let wrap = |source| Error::Kubeconfig {
                path: path.clone(),
                source,
            };
            let kubeconfig = Kubeconfig::read_from(path).map_err(wrap)?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(wrap)
        }
    }
}

/// Connects a client (no request is made until the client is used).
pub async fn connect(source: &KubeconfigSource) -> Result<Client> {
    let config = load_config(source).await?;
    client_from(config)
}

/// A client from a loaded configuration.
pub fn client_from(config: Config) -> Result<Client> {
    install_crypto_provider();
    Client::try_from(config).map_err(Error::Client)
}

/// Selects rustls' ring provider for the process. Both ring and aws-lc-rs end up in the
/// dependency graph (kube uses ring, the Git transport aws-lc-rs), and rustls then refuses to
/// guess; the first caller wins and later calls are no-ops.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn explicit_kubeconfig_is_read_and_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("plumb-kube-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("config");
        std::fs::write(
            &good,
            "apiVersion: v1\nkind: Config\ncurrent-context: test\n\
             clusters:\n- name: test\n  cluster:\n    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: true\n\
             contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    namespace: payments\n\
             users:\n- name: test\n  user:\n    token: abc\n",
        )
        .unwrap();
        let config = load_config(&KubeconfigSource::Path(good.clone()))
            .await
            .unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:6443/");
        assert_eq!(config.default_namespace, "payments");

        let missing = dir.join("absent");
        let err = load_config(&KubeconfigSource::Path(missing.clone()))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains(&missing.display().to_string()),
            "{err}"
        );
        assert_eq!(KubeconfigSource::from_option(None), KubeconfigSource::Infer);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
