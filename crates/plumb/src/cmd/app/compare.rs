//! The comparison `app diff` and `app manifests` need, computed here with the controller's own
//! code (`plumb_controller::compare`) against the cluster of the kubeconfig, so the CLI and the
//! controller cannot disagree.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use plumb_controller::{
    Cluster, CompareOptions, Comparison, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, Refresh,
};
use plumb_model::application::Application;
use plumb_source::Renderer;

use super::AppClient;

/// What rendering and comparing an Application from the CLI needs, set up as the controller
/// sets it up.
struct Prepared {
    engines: Engines,
    cluster: Cluster,
    renderer: Arc<Renderer>,
    source_repos: Vec<String>,
}

/// Renders the Application's sources and compares them with the live cluster.
pub(crate) async fn compare_app(
    client: &AppClient,
    app: &Application,
    revision: Option<String>,
    hard_refresh: bool,
    attribution: bool,
    local: Option<&plumb_source::LocalSource>,
) -> Result<Comparison> {
    let p = prepare(client, app, local).await?;
    let opts = CompareOptions {
        revision,
        refresh: if hard_refresh {
            Refresh::Hard
        } else {
            Refresh::Normal
        },
        attribution,
        fresh_reads: true,
        sources: None,
        source_repos: p.source_repos,
    };
    plumb_controller::compare(app, &p.engines, &p.cluster, &p.renderer, &opts)
        .await
        .map_err(|e| anyhow::anyhow!("{}", plumb_controller::chain(&e)))
        .with_context(|| format!("comparing Application {}", app.name()))
}

/// The objects `local` renders to with the Application's source settings, as rendered (no
/// tracking, hooks and `Skip` objects included): what `app sync --local` sends in
/// `operation.sync.manifests`, as Argo's CLI sends what it rendered.
pub(crate) async fn render_local(
    client: &AppClient,
    app: &Application,
    local: &plumb_source::LocalSource,
) -> Result<Vec<serde_json::Value>> {
    let p = prepare(client, app, Some(local)).await?;
    let api_versions: std::collections::BTreeSet<String> = p
        .cluster
        .discovery
        .catalog()
        .preferred()
        .map(|k| {
            let r = &k.resource;
            if r.group.is_empty() {
                r.version.clone()
            } else {
                format!("{}/{}", r.group, r.version)
            }
        })
        .collect();
    let request = plumb_source::RenderRequest {
        sources: app.sources().into_iter().cloned().collect(),
        app_name: app.name().to_string(),
        namespace: app.spec.destination.namespace.clone().unwrap_or_default(),
        project: app.spec.project.clone(),
        kube_version: String::new(),
        api_versions: api_versions.into_iter().collect(),
        refresh: plumb_source::Refresh::Normal,
        source_repos: Some(p.source_repos),
        // A local tree never goes through the manifest cache.
        generate_paths: None,
        owner: None,
    };
    let renderer = p.renderer;
    let rendered = tokio::task::spawn_blocking(move || renderer.render(&request))
        .await
        .context("rendering the local directory")?
        .with_context(|| {
            format!(
                "rendering {} for Application {}",
                local.dir.display(),
                app.name()
            )
        })?;
    Ok(rendered.manifests.into_iter().map(|m| m.object).collect())
}

/// Settings, engines, the cluster, the renderer (with the repository Secrets and `local`) and
/// the project's `sourceRepos`, as the controller has them.
async fn prepare(
    client: &AppClient,
    app: &Application,
    local: Option<&plumb_source::LocalSource>,
) -> Result<Prepared> {
    let settings = client.settings().await?;
    // The controller's render limits, from the same settings.
    let limits = plumb_source::Limits::default()
        .with_settings(&settings)
        .context("reading the settings ConfigMap")?;
    let engines = Engines::new(settings.clone(), client.namespace(), &[])
        .context("reading the settings ConfigMap")?;
    let cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, client.kube()?.clone())
        .await
        .context("discovering the cluster's API")?;
    let d = &app.spec.destination;
    if !cluster.is_destination(d.server.as_deref(), d.name.as_deref()) {
        bail!(
            "Application {} targets {:?}, not the cluster of this kubeconfig ({IN_CLUSTER_SERVER}); only in-cluster destinations can be compared from the CLI",
            app.name(),
            d.server.clone().or(d.name.clone()).unwrap_or_default()
        );
    }
    let mut config =
        plumb_source::Config::new(crate::cmd::cache_root()?.join("cli")).limits(limits);
    if let Some(helm) = std::env::var_os("PLUMB_HELM") {
        config.tools.helm = PathBuf::from(helm);
    }
    if let Some(kustomize) = std::env::var_os("PLUMB_KUSTOMIZE") {
        config.tools.kustomize = PathBuf::from(kustomize);
    }
    // Plugins run on this machine: $PLUMB_PLUGIN_DIR, else the settings' plumb.plugins.dir.
    config.plugins_dir = std::env::var_os("PLUMB_PLUGIN_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            settings
                .get(plumb_model::settings::PLUGINS_DIR)
                .map(|d| PathBuf::from(d.trim()))
        });
    let mut renderer = Renderer::new(config).context("preparing the source cache")?;
    if let Some(local) = local {
        if app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
            bail!("plumb cli does not work on multi-source app with --local flag");
        }
        renderer = renderer.with_local(local.clone());
    }
    let renderer = Arc::new(renderer);
    // The repository Secrets and CA certificates the controller renders with (private Git and
    // Helm repositories), when this kubeconfig may read them.
    plumb_controller::load_repositories(client.kube()?, client.namespace(), &renderer).await;
    // Kustomize remote bases are checked against the project's sourceRepos, as in the
    // controller; without the project nothing is rendered.
    let project_name = if app.spec.project.is_empty() {
        "default"
    } else {
        app.spec.project.as_str()
    };
    let project = client
        .project(project_name)
        .await?
        .with_context(|| {
            format!(
                "Application {} references AppProject {project_name}, which does not exist in namespace {}",
                app.name(),
                client.namespace()
            )
        })?;
    Ok(Prepared {
        engines,
        cluster,
        renderer,
        source_repos: project.spec.source_repos.clone().unwrap_or_default(),
    })
}
