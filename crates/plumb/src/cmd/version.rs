//! `plumb version`: the client's version and build (`argocd version` layout: commit, tree state,
//! build date, compiler, platform, and the helm and kustomize it would render with), and where
//! the cluster of the kubeconfig can be read, the versions of the controller and API server
//! Deployments of the control namespace (their `app.kubernetes.io/version` label, else their
//! image tag). `--client` skips the cluster.

use anyhow::Result;
use clap::{Args, ValueEnum};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use plumb_server::BuildInfo;
use plumb_source::SourceType;
use serde::Serialize;

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

/// What this binary was built from, as `build.rs` stamped it (`src/stamp.rs`); the server's
/// `GET /api/version` answers the same.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_commit: env!("PLUMB_GIT_COMMIT").to_owned(),
        git_tree_state: env!("PLUMB_GIT_TREE_STATE").to_owned(),
        build_date: env!("PLUMB_BUILD_DATE").to_owned(),
        rustc_version: env!("PLUMB_RUSTC_VERSION").to_owned(),
    }
}

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
    /// `v0.1.0+1a2b3c4` (`.dirty` after it when built from a dirty tree), or what the
    /// Deployment says; absent when not found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// RFC 3339 UTC (client only): `SOURCE_DATE_EPOCH` at build time, else the commit's date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_date: Option<String>,
    /// The full commit hash, or `unknown` (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    /// `clean`, `dirty` or `unknown` (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_tree_state: Option<String>,
    /// `rustc 1.95.0 (…)` (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// `linux/amd64`, Go's names as Argo prints them (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// What the helm Plumb would run prints (`$PLUMB_HELM`, else `helm` on `PATH`), or
    /// `not found` (client, not with `--short`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm_version: Option<String>,
    /// The same for kustomize (`$PLUMB_KUSTOMIZE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kustomize_version: Option<String>,
    /// The Deployment's image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Why the version is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ComponentVersion {
    /// An entry with the name only.
    fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            version: None,
            build_date: None,
            git_commit: None,
            git_tree_state: None,
            compiler: None,
            platform: None,
            helm_version: None,
            kustomize_version: None,
            image: None,
            note: None,
        }
    }
}

/// The client's entry from `build`, without the tool versions.
pub fn client_version(build: &BuildInfo) -> ComponentVersion {
    ComponentVersion {
        version: Some(build.full_version()),
        build_date: Some(build.build_date.clone()),
        git_commit: Some(build.git_commit.clone()),
        git_tree_state: Some(build.git_tree_state.clone()),
        compiler: Some(build.rustc_version.clone()),
        platform: Some(BuildInfo::platform()),
        ..ComponentVersion::named("plumb")
    }
}

/// The helm and kustomize Plumb runs here (`$PLUMB_HELM`, `$PLUMB_KUSTOMIZE`, else on `PATH`,
/// as `plumb render` and local comparisons find them), asked through the render worker with
/// its time bound; `not found` when missing, never an error.
fn tool_versions(v: &mut ComponentVersion) {
    let tools = crate::cmd::render::local_tools();
    let ask = |kind| plumb_server::tool_version_text(plumb_source::tool_version(&tools, kind));
    v.helm_version = Some(ask(SourceType::Helm));
    v.kustomize_version = Some(ask(SourceType::Kustomize));
}

/// A component's entry from its Deployment (`None`: not found).
pub fn from_deployment(name: &str, d: Option<&Deployment>) -> ComponentVersion {
    let mut v = ComponentVersion::named(name);
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
            ("BuildDate", &c.build_date),
            ("GitCommit", &c.git_commit),
            ("GitTreeState", &c.git_tree_state),
            ("Compiler", &c.compiler),
            ("Platform", &c.platform),
            ("Helm Version", &c.helm_version),
            ("Kustomize Version", &c.kustomize_version),
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
                note: Some(format!("not reachable: {e}")),
                ..ComponentVersion::named(name)
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
    let mut client = client_version(&build_info());
    // `--short` prints one line per component: no need to run the tools.
    if !(args.short && args.output == VersionOutput::Wide) {
        tool_versions(&mut client);
    }
    let mut components = vec![client];
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
                version: Some("v9.9.9+0123456.dirty".into()),
                build_date: Some("2023-11-14T22:13:20Z".into()),
                git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
                git_tree_state: Some("dirty".into()),
                compiler: Some("rustc 1.95.0 (59807616e 2026-04-14)".into()),
                platform: Some("linux/amd64".into()),
                helm_version: Some("v4.3.1".into()),
                kustomize_version: Some("not found".into()),
                ..ComponentVersion::named("plumb")
            },
            from_deployment("plumb-controller", Some(&deployment)),
            from_deployment("plumb-server", None),
        ];
        crate::snapshot::check("version.txt", &render(&components, false));
        assert_eq!(
            render(&components, true),
            "plumb: v9.9.9+0123456.dirty\nplumb-controller: v0.1.0\nplumb-server: unknown\n"
        );
    }
}
