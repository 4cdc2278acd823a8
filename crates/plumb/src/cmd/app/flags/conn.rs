//! The connection flags every `plumb app` command shares.

use std::path::PathBuf;

/// Connection flags shared by every `plumb app` command.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnArgs {
    /// Kubeconfig file to use (default: $KUBECONFIG, ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace of the Applications named without one (`ns/name` names its own); also the
    /// control namespace unless --control-namespace is given.
    #[arg(
        short = 'N',
        long = "app-namespace",
        global = true,
        env = "PLUMB_NAMESPACE",
        default_value = "argocd",
        value_name = "NAMESPACE"
    )]
    pub app_namespace: String,
    /// The control namespace (AppProjects, argocd-cm, repository Secrets) when it differs from
    /// --app-namespace.
    #[arg(
        long = "control-namespace",
        global = true,
        env = "PLUMB_CONTROL_NAMESPACE",
        value_name = "NAMESPACE"
    )]
    pub control_namespace: Option<String>,
}

impl ConnArgs {
    /// The control namespace: `--control-namespace`, else `-N/--app-namespace`.
    pub fn control_namespace(&self) -> &str {
        self.control_namespace
            .as_deref()
            .unwrap_or(&self.app_namespace)
    }
}
