//! The comparison `app diff` and `app manifests` need, computed here with the controller's own
//! code (`plumb_app::compare`) against the cluster of the kubeconfig, so the CLI and the
//! controller cannot disagree; and the render of `--local` both backends use.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use plumb_app::{
    Cluster, CompareOptions, Comparison, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, Refresh,
};
use plumb_model::application::Application;
use plumb_source::Renderer;

use crate::cmd::app::client::AppClient;

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
    let refresh = if hard_refresh {
        Refresh::Hard
    } else {
        Refresh::Normal
    };
    let opts = CompareOptions {
        revision,
        attribution,
        fresh_reads: true,
        ..CompareOptions::new(refresh, p.source_repos)
    };
    plumb_app::compare(app, &p.engines, &p.cluster, &p.renderer, &opts)
        .await
        .map_err(|e| anyhow::anyhow!("{}", plumb_app::chain(&e)))
        .with_context(|| format!("comparing Application {}", app.name()))
}

/// The objects `local` renders to with the Application's source settings, as rendered (no
/// tracking, hooks and `Skip` objects included): what `app sync --local` sends in
/// `operation.sync.manifests`, as Argo's CLI sends what it rendered.
///
/// In core mode the settings, the API versions and the repository Secrets come from the
/// cluster of the kubeconfig; through `plumb server`, as with Argo's CLI, the settings from
/// `GET /api/v1/settings`, the API versions from `GET /api/v1/clusters/{server}` (the
/// destination's discovery) and no repository credentials. The render itself is the same code
/// with the local helm and kustomize.
pub(crate) async fn render_local(
    client: &AppClient,
    app: &Application,
    local: &plumb_source::LocalSource,
) -> Result<Vec<serde_json::Value>> {
    let p = prepare(client, app, Some(local)).await?;
    let api_versions = p.cluster.discovery.catalog().preferred_api_versions();
    render_manifests(p.renderer, api_versions, p.source_repos, app, local).await
}

/// Renders `local` with the Application's source settings, `renderer`, the destination's
/// `api_versions` and the project's `source_repos`.
pub(crate) async fn render_manifests(
    renderer: Arc<Renderer>,
    api_versions: Vec<String>,
    source_repos: Vec<String>,
    app: &Application,
    local: &plumb_source::LocalSource,
) -> Result<Vec<serde_json::Value>> {
    let request = plumb_source::RenderRequest {
        refs_asked_at: None,
        sources: app.sources().into_iter().cloned().collect(),
        app_name: app.name().to_string(),
        namespace: app.spec.destination.namespace.clone().unwrap_or_default(),
        project: app.spec.project.clone(),
        kube_version: String::new(),
        api_versions,
        refresh: plumb_source::Refresh::Normal,
        source_repos: Some(source_repos),
        // A local tree never goes through the manifest cache.
        generate_paths: None,
        owner: None,
        source_integrity: None,
    };
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
    let renderer = renderer_for(client, app, &settings, local, true).await?;
    let source_repos = project_source_repos(client, app).await?;
    Ok(Prepared {
        engines,
        cluster,
        renderer,
        source_repos,
    })
}

/// The renderer the CLI renders with, set up as the controller's: the render limits of
/// `settings`, the local helm and kustomize (`$PLUMB_HELM`, `$PLUMB_KUSTOMIZE`), plugins from
/// `$PLUMB_PLUGIN_DIR` or the settings, `local` as the source, and (`repositories`) the
/// repository Secrets and CA certificates the controller renders with, when the kubeconfig may
/// read them.
pub(crate) async fn renderer_for(
    client: &AppClient,
    app: &Application,
    settings: &plumb_model::Settings,
    local: Option<&plumb_source::LocalSource>,
    repositories: bool,
) -> Result<Arc<Renderer>> {
    let limits = plumb_source::Limits::default()
        .with_settings(settings)
        .context("reading the settings ConfigMap")?;
    let mut config =
        plumb_source::Config::new(crate::cmd::cache_root()?.join("cli")).limits(limits);
    let tools = crate::cmd::render::local_tools();
    config.tools.helm = tools.helm;
    config.tools.kustomize = tools.kustomize;
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
    // argocd-cm's kustomize.buildOptions, as the controller applies them.
    renderer.set_kustomize_build_options(settings.get("kustomize.buildOptions"));
    let renderer = Arc::new(renderer);
    if repositories {
        plumb_app::load_repositories(client.kube()?, client.namespace(), &renderer).await;
    }
    Ok(renderer)
}

/// The `sourceRepos` of the Application's project (Kustomize remote bases are checked against
/// them, as in the controller); without the project nothing is rendered.
pub(crate) async fn project_source_repos(
    client: &AppClient,
    app: &Application,
) -> Result<Vec<String>> {
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
    Ok(project.spec.source_repos.clone().unwrap_or_default())
}
