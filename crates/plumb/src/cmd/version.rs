//! `plumb version`: the client's version (`argocd version` layout), and where the cluster of the
//! kubeconfig can be read, the versions of the controller and API server Deployments of the
//! control namespace (their `app.kubernetes.io/version` label, else their image tag).
//! `--client` skips the cluster.

use anyhow::Result;
use clap::{Args, ValueEnum};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use serde::Serialize;

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

/// The version of this binary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Deployments `plumb version` reports, as `deploy/` names them.
const COMPONENTS: [&str; 2] = ["plumb-controller", "plumb-server"];

/// `-o` of `plumb version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VersionOutput {
    /// Argo's layout.
    Wide,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// `plumb version`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Client and, where reachable, controller and API server versions\n  plumb version\n\n  # The client only\n  plumb version --client\n\n  # One line per component\n  plumb version --short"
)]
pub struct VersionArgs {
    #[command(flatten)]
    conn: ConnArgs,
    /// Print the client version only (no cluster request).
    #[arg(long)]
    client: bool,
    /// Print `name: version` lines only.
    #[arg(long)]
    short: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = VersionOutput::Wide)]
    output: VersionOutput,
}

/// One component's version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentVersion {
    /// `plumb`, `plumb-controller`, `plumb-server`.
    pub name: String,
    /// `v0.1.0`, or what the Deployment says; absent when not found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `linux/x86_64` (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// The Deployment's image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Why the version is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The client's entry.
pub fn client_version() -> ComponentVersion {
    ComponentVersion {
        name: "plumb".into(),
        version: Some(format!("v{VERSION}")),
        platform: Some(format!(
            "{}/{}",
            std::env::consts::OS,
            std::env::consts::ARCH
        )),
        image: None,
        note: None,
    }
}

/// A component's entry from its Deployment (`None`: not found).
pub fn from_deployment(name: &str, d: Option<&Deployment>) -> ComponentVersion {
    let mut v = ComponentVersion {
        name: name.to_string(),
        version: None,
        platform: None,
        image: None,
        note: None,
    };
    let Some(d) = d else {
        v.note = Some("no Deployment of that name in the control namespace".into());
        return v;
    };
    v.image = d
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone());
    v.version = d
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("app.kubernetes.io/version").cloned())
        .or_else(|| {
            v.image
                .as_deref()
                .and_then(|i| i.rsplit_once(':'))
                .map(|(_, tag)| tag.to_string())
                .filter(|t| !t.contains('/'))
        });
    v
}

/// The wide (or `--short`) text.
pub fn render(components: &[ComponentVersion], short: bool) -> String {
    let mut out = String::new();
    for c in components {
        let version = c.version.clone().unwrap_or_else(|| "unknown".to_string());
        out.push_str(&format!("{}: {version}\n", c.name));
        if short {
            continue;
        }
        for (label, value) in [
            ("Platform", &c.platform),
            ("Image", &c.image),
            ("Note", &c.note),
        ] {
            if let Some(v) = value {
                out.push_str(&format!("  {label}: {v}\n"));
            }
        }
    }
    out
}

async fn cluster_versions(conn: &ConnArgs) -> Vec<ComponentVersion> {
    let unreachable = |e: String| {
        COMPONENTS
            .iter()
            .map(|name| ComponentVersion {
                name: name.to_string(),
                version: None,
                platform: None,
                image: None,
                note: Some(format!("not reachable: {e}")),
            })
            .collect::<Vec<_>>()
    };
    let source = plumb_kube::KubeconfigSource::from_option(conn.kubeconfig.as_deref());
    let client = match plumb_kube::connect(&source).await {
        Ok(c) => c,
        Err(e) => return unreachable(e.to_string()),
    };
    let api: Api<Deployment> = Api::namespaced(client, &conn.app_namespace);
    let mut out = Vec::new();
    for name in COMPONENTS {
        match api.get_opt(name).await {
            Ok(d) => out.push(from_deployment(name, d.as_ref())),
            Err(e) => {
                let mut v = from_deployment(name, None);
                v.note = Some(format!("not reachable: {e}"));
                out.push(v);
            }
        }
    }
    out
}

/// Runs `plumb version`.
pub fn run(args: VersionArgs) -> Result<Outcome> {
    let mut components = vec![client_version()];
    if !args.client {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        components.extend(runtime.block_on(cluster_versions(&args.conn)));
    }
    let text = match args.output {
        VersionOutput::Wide => render(&components, args.short),
        VersionOutput::Json => crate::output::json::render(&components)?,
        VersionOutput::Yaml => crate::output::yaml::render(&components)?,
    };
    print!("{text}");
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn layouts() {
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "plumb-controller", "namespace": "argocd"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "controller", "image": "registry.example.com/plumb:v0.1.0"}]}}}
        }))
        .unwrap();
        let components = vec![
            ComponentVersion {
                version: Some("v9.9.9".into()),
                platform: Some("linux/x86_64".into()),
                ..client_version()
            },
            from_deployment("plumb-controller", Some(&deployment)),
            from_deployment("plumb-server", None),
        ];
        crate::snapshot::check("version.txt", &render(&components, false));
        assert_eq!(
            render(&components, true),
            "plumb: v9.9.9\nplumb-controller: v0.1.0\nplumb-server: unknown\n"
        );
    }
}
