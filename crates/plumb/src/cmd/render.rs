//! `plumb render`: what an Application would deploy, rendered offline from Git (like
//! `argocd app manifests --source git`, with no cluster and no server).

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use plumb_model::application::{ApplicationSource, HelmParameter, HelmSource, KustomizeSource};
use plumb_source::{Config, Limits, Refresh, RenderRequest, Renderer, RepoCredentials, Tools};
use serde_json::Value;

use crate::exit::Outcome;

/// Output format of `plumb render`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A YAML stream, each object after a `---` line (as `argocd app manifests`).
    Yaml,
    /// A JSON array of objects.
    Json,
}

/// Render the manifests of a Git source (or of an Application's sources) offline.
///
/// The repository is fetched into a local cache (`--cache-dir`), the revision resolved to a
/// commit, and the path rendered as Argo CD would: Helm (Chart.yaml), Kustomize (kustomization
/// file) or a plain directory of YAML, JSON and Jsonnet files.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Repository URL (https://, ssh://, git@host:path, file://); required unless --app is given.
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// Revision: HEAD, a branch, a tag, a full or short commit SHA, or refs/... [default: HEAD;
    /// with --app, overrides the source's targetRevision].
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// Path inside the repository [default: the root; with --app, overrides the source's path].
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// A chart of the Helm chart repository --repo (then --revision is a chart version or a
    /// constraint such as 1.2.*) [with --app, overrides the source's chart].
    #[arg(long, value_name = "NAME")]
    pub chart: Option<String>,
    /// Helm parameter NAME=VALUE (repeatable); makes the source a Helm source.
    #[arg(long = "helm-set", value_name = "NAME=VALUE")]
    pub helm_set: Vec<String>,
    /// Helm value file, relative to the chart (repeatable); makes the source a Helm source.
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<String>,
    /// Kustomize image override (`name=image:tag`, repeatable); makes the source a Kustomize source.
    #[arg(long = "kustomize-image", value_name = "IMAGE")]
    pub kustomize_image: Vec<String>,
    /// The config management plugin NAME (`<name>-<version>` when versioned) renders the source;
    /// `--plugin ''` lets discovery choose [with --app, overrides the source's plugin name].
    #[arg(long, value_name = "NAME")]
    pub plugin: Option<String>,
    /// Directory of config management plugin files [default: $PLUMB_PLUGIN_DIR, else the
    /// --settings ConfigMap's plumb.plugins.dir; none: no plugins].
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Option<PathBuf>,
    /// Take the source(s), name and destination namespace from an Application manifest.
    #[arg(long, value_name = "FILE")]
    pub app: Option<PathBuf>,
    /// An AppProject manifest: kustomize remote bases and Helm value-file URLs must then come
    /// from repositories its sourceRepos permit, as in the controller [default: any https/ssh
    /// Git URL, any value-file URL].
    #[arg(long, value_name = "FILE")]
    pub project: Option<PathBuf>,
    /// Argo CD repository Secret manifest(s) with credentials (repeatable).
    #[arg(long = "repo-secret", value_name = "FILE")]
    pub repo_secret: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "yaml")]
    pub output: Format,
    /// Cache directory [default: $PLUMB_CACHE_DIR/source, $XDG_CACHE_HOME/plumb/source, or
    /// ~/.cache/plumb/source].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The helm binary [default: $PLUMB_HELM, else helm on PATH].
    #[arg(long, value_name = "PATH")]
    pub helm: Option<PathBuf>,
    /// The kustomize binary [default: $PLUMB_KUSTOMIZE, else kustomize on PATH].
    #[arg(long, value_name = "PATH")]
    pub kustomize: Option<PathBuf>,
    /// Render again even when the manifest cache has the result.
    #[arg(long)]
    pub hard_refresh: bool,
    /// Settings ConfigMap YAML (argocd-cm): its `plumb.render.timeout` and
    /// `plumb.render.memoryLimit` bound the render, and its `kustomize.buildOptions` apply, as
    /// they do in the controller.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Time allowed for one render (e.g. 90s, 2m) [default: the settings', else 90s].
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub render_timeout: Option<std::time::Duration>,
    /// Memory one render may use (e.g. 512Mi, 2Gi) [default: the settings', else 1Gi].
    #[arg(long, value_name = "QUANTITY", value_parser = quantity)]
    pub render_memory_limit: Option<u64>,
}

fn duration(text: &str) -> Result<std::time::Duration, String> {
    plumb_source::parse_duration(text)
        .ok_or_else(|| format!("{text:?} is not a positive duration such as 90s or 2m"))
}

fn quantity(text: &str) -> Result<u64, String> {
    plumb_source::parse_quantity(text)
        .filter(|n| *n >= 128 << 20)
        .ok_or_else(|| {
            format!("{text:?} is not a quantity of at least 128Mi, such as 512Mi or 2Gi")
        })
}

/// The work `plumb render` does once its arguments are read (files loaded, sources built).
struct Plan {
    request: RenderRequest,
    config: Config,
    credentials: Vec<RepoCredentials>,
    output: Format,
    /// argocd-cm's `kustomize.buildOptions` from `--settings`, applied as the controller does.
    build_options: Option<String>,
}

impl Plan {
    fn from_args(args: RenderArgs) -> anyhow::Result<Self> {
        let request = request(&args)?;
        let credentials = load_credentials(&args.repo_secret)?;
        let cache_dir = match &args.cache_dir {
            Some(d) => d.clone(),
            None => super::cache_root()?.join("source"),
        };
        let (limits, plugins_dir, build_options) = limits_and_plugins(&args)?;
        Ok(Self {
            request,
            config: Config::new(cache_dir)
                .tools(tools(&args))
                .limits(limits)
                .plugins_dir(plugins_dir),
            credentials,
            output: args.output,
            build_options,
        })
    }
}

/// The render request: the Application's sources (or `--repo`'s) with the flags' overrides,
/// and the project's `sourceRepos`.
fn request(args: &RenderArgs) -> anyhow::Result<RenderRequest> {
    let mut request = RenderRequest {
        refresh: if args.hard_refresh {
            Refresh::Hard
        } else {
            Refresh::Normal
        },
        ..Default::default()
    };
    match (&args.app, &args.repo) {
        (Some(file), None) => load_app(file, &mut request)?,
        (None, Some(repo)) => {
            request.app_name = "plumb-render".into();
            request.sources = vec![ApplicationSource {
                repo_url: repo.clone(),
                ..Default::default()
            }];
        }
        (Some(_), Some(_)) => bail!("--repo and --app cannot be combined"),
        (None, None) => bail!("give --repo URL or --app FILE"),
    }
    let overrides = args.revision.is_some()
        || args.path.is_some()
        || args.chart.is_some()
        || !args.helm_set.is_empty()
        || !args.values.is_empty()
        || !args.kustomize_image.is_empty()
        || args.plugin.is_some();
    if overrides && request.sources.len() != 1 {
        bail!(
            "--revision, --path, --chart, --helm-set, --values, --kustomize-image and --plugin need a single source"
        );
    }
    if let Some(source) = request.sources.first_mut() {
        apply_overrides(source, args)?;
    }
    if let Some(file) = &args.project {
        request.source_repos = Some(load_source_repos(file)?);
    }
    Ok(request)
}

/// `--revision`, `--path`, `--chart`, `--plugin`, `--values`, `--helm-set` and
/// `--kustomize-image` on the single source.
fn apply_overrides(source: &mut ApplicationSource, args: &RenderArgs) -> anyhow::Result<()> {
    if let Some(rev) = &args.revision {
        source.target_revision = Some(rev.clone());
    }
    if let Some(path) = &args.path {
        source.path = Some(path.clone());
    }
    if let Some(chart) = &args.chart {
        source.chart = Some(chart.clone());
    }
    if let Some(name) = &args.plugin {
        let plugin = source.plugin.get_or_insert_with(Default::default);
        plugin.name = (!name.is_empty()).then(|| name.clone());
    }
    if !args.helm_set.is_empty() || !args.values.is_empty() {
        let helm = source.helm.get_or_insert_with(HelmSource::default);
        helm.value_files
            .get_or_insert_with(Vec::new)
            .extend(args.values.iter().cloned());
        for kv in &args.helm_set {
            let (name, value) = kv
                .split_once('=')
                .with_context(|| format!("--helm-set {kv:?}: expected NAME=VALUE"))?;
            helm.parameters
                .get_or_insert_with(Vec::new)
                .push(HelmParameter {
                    name: Some(name.into()),
                    value: Some(value.into()),
                    force_string: None,
                });
        }
    }
    if !args.kustomize_image.is_empty() {
        let k = source
            .kustomize
            .get_or_insert_with(KustomizeSource::default);
        k.images
            .get_or_insert_with(Vec::new)
            .extend(args.kustomize_image.iter().cloned());
    }
    Ok(())
}

/// The repository credentials of the `--repo-secret` manifests.
fn load_credentials(files: &[PathBuf]) -> anyhow::Result<Vec<RepoCredentials>> {
    let mut credentials = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        for doc in plumb_yaml::read_documents(&text, &file.display().to_string())? {
            credentials.push(RepoCredentials::from_secret(&doc.value)?);
        }
    }
    Ok(credentials)
}

/// The helm and kustomize this machine renders with: `$PLUMB_HELM` and `$PLUMB_KUSTOMIZE`, else
/// on PATH (`plumb render`, the CLI's local comparisons and `plumb version` alike).
pub(crate) fn local_tools() -> Tools {
    let env_path = |var: &str, default: &str| {
        std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from)
    };
    Tools {
        helm: env_path("PLUMB_HELM", "helm"),
        kustomize: env_path("PLUMB_KUSTOMIZE", "kustomize"),
        ..Tools::default()
    }
}

/// The helm and kustomize binaries: the flag, else [`local_tools`].
fn tools(args: &RenderArgs) -> Tools {
    let local = local_tools();
    Tools {
        helm: args.helm.clone().unwrap_or(local.helm),
        kustomize: args.kustomize.clone().unwrap_or(local.kustomize),
        ..local
    }
}

/// The render limits (the settings', then the flags'), the plugin directory (the flag, else
/// `$PLUMB_PLUGIN_DIR`, else the settings') and the settings' `kustomize.buildOptions`.
fn limits_and_plugins(
    args: &RenderArgs,
) -> anyhow::Result<(Limits, Option<PathBuf>, Option<String>)> {
    let mut build_options = None;
    let mut limits = Limits::default();
    let mut plugins_dir = args
        .plugin_dir
        .clone()
        .or_else(|| std::env::var_os("PLUMB_PLUGIN_DIR").map(PathBuf::from));
    if let Some(file) = &args.settings {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let docs = plumb_yaml::read_documents(&text, &file.display().to_string())?;
        let cm = docs
            .into_iter()
            .next()
            .with_context(|| format!("{}: no settings ConfigMap", file.display()))?;
        let settings = plumb_model::Settings::from_config_map(&cm.value);
        limits = limits
            .with_settings(&settings)
            .with_context(|| format!("{}", file.display()))?;
        build_options = settings.get("kustomize.buildOptions").map(str::to_owned);
        if plugins_dir.is_none() {
            plugins_dir = settings
                .get(plumb_model::settings::PLUGINS_DIR)
                .map(|d| PathBuf::from(d.trim()));
        }
    }
    if let Some(t) = args.render_timeout {
        limits = limits.render_timeout(t);
    }
    if let Some(m) = args.render_memory_limit {
        limits = limits.render_memory_bytes(m);
    }
    Ok((limits, plugins_dir, build_options))
}

/// `spec.sourceRepos` of the AppProject in `file`.
fn load_source_repos(file: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {name}"))?;
    let project = plumb_yaml::read_documents(&text, &name)?
        .into_iter()
        .map(|d| d.value)
        .find(|v| v.get("kind").and_then(Value::as_str) == Some("AppProject"))
        .with_context(|| format!("{name}: no AppProject object"))?;
    Ok(project
        .pointer("/spec/sourceRepos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect())
}

fn load_app(file: &std::path::Path, request: &mut RenderRequest) -> anyhow::Result<()> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {name}"))?;
    let docs = plumb_yaml::read_documents(&text, &name)?;
    let app = docs
        .into_iter()
        .map(|d| d.value)
        .find(|v| v.get("kind").and_then(Value::as_str) == Some("Application"))
        .with_context(|| format!("{name}: no Application object"))?;
    request.app_name = app
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("plumb-render")
        .to_owned();
    request.namespace = app
        .pointer("/spec/destination/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    request.project = app
        .pointer("/spec/project")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let spec = app
        .get("spec")
        .with_context(|| format!("{name}: Application has no spec"))?;
    request.sources = match (spec.get("sources"), spec.get("source")) {
        (Some(many), _) => {
            serde_json::from_value(many.clone()).with_context(|| format!("{name}: spec.sources"))?
        }
        (None, Some(one)) => vec![
            serde_json::from_value(one.clone()).with_context(|| format!("{name}: spec.source"))?,
        ],
        (None, None) => bail!("{name}: Application has neither spec.source nor spec.sources"),
    };
    Ok(())
}

/// Runs `plumb render`.
pub fn run(args: RenderArgs) -> anyhow::Result<Outcome> {
    let plan = Plan::from_args(args)?;
    let renderer = Renderer::new(plan.config)?.with_credentials(plan.credentials);
    renderer.set_kustomize_build_options(plan.build_options.as_deref());
    // A local render trusts the SSH host keys its user does (as `git` would); the controller
    // trusts argocd-ssh-known-hosts-cm only.
    if let Some(home) = std::env::var_os("HOME") {
        let file = std::path::Path::new(&home).join(".ssh/known_hosts");
        if let Ok(text) = std::fs::read_to_string(&file) {
            renderer.set_known_hosts(plumb_source::KnownHosts::from_text(&text));
        }
    }
    let rendered = renderer.render(&plan.request).context("rendering")?;
    for s in &rendered.sources {
        tracing::info!(url = %s.url, revision = %s.revision, commit = %s.commit, cache_hit = s.cache_hit, "source");
    }
    let mut out = String::new();
    match plan.output {
        Format::Yaml => {
            for m in &rendered.manifests {
                out.push_str("---\n");
                out.push_str(&plumb_yaml::to_yaml_string(&m.object));
            }
        }
        Format::Json => {
            let objects: Vec<&Value> = rendered.manifests.iter().map(|m| &m.object).collect();
            out = serde_json::to_string_pretty(&objects)?;
            out.push('\n');
        }
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: RenderArgs,
    }

    fn parse(argv: &[&str]) -> RenderArgs {
        Cli::try_parse_from(std::iter::once("render").chain(argv.iter().copied()))
            .unwrap()
            .args
    }

    #[test]
    fn test_repo_revision_path_and_output() {
        let a = parse(&[
            "--repo",
            "https://git.example.com/a.git",
            "--revision",
            "v1",
            "--path",
            "deploy",
            "-o",
            "json",
        ]);
        assert_eq!(a.repo.as_deref(), Some("https://git.example.com/a.git"));
        assert_eq!(
            (a.revision.as_deref(), a.path.as_deref(), a.output),
            (Some("v1"), Some("deploy"), Format::Json)
        );
        assert_eq!(parse(&["--repo", "x"]).output, Format::Yaml);
    }

    #[test]
    fn test_helm_and_kustomize_flags_build_the_source() {
        let a = parse(&[
            "--repo",
            "file:///r",
            "--helm-set",
            "image.tag=1.2",
            "--helm-set",
            "replicas=3",
            "--values",
            "prod.yaml",
            "--cache-dir",
            "/tmp/c",
        ]);
        let plan = Plan::from_args(a).unwrap();
        let helm = plan.request.sources[0].helm.as_ref().unwrap();
        assert_eq!(
            helm.value_files.as_deref(),
            Some(&["prod.yaml".to_owned()][..])
        );
        let params = helm.parameters.as_ref().unwrap();
        assert_eq!(params[1].name.as_deref(), Some("replicas"));
        assert_eq!(params[1].value.as_deref(), Some("3"));
        let k = Plan::from_args(parse(&[
            "--repo",
            "file:///r",
            "--kustomize-image",
            "nginx=nginx:1.27",
            "--cache-dir",
            "/tmp/c",
        ]))
        .unwrap();
        assert_eq!(
            k.request.sources[0]
                .kustomize
                .as_ref()
                .unwrap()
                .images
                .as_deref(),
            Some(&["nginx=nginx:1.27".to_owned()][..])
        );
        assert!(
            Plan::from_args(parse(&[
                "--repo",
                "x",
                "--helm-set",
                "novalue",
                "--cache-dir",
                "/tmp/c"
            ]))
            .is_err()
        );
        assert!(Plan::from_args(parse(&["--cache-dir", "/tmp/c"])).is_err());
    }

    #[test]
    fn test_app_file_supplies_sources_name_and_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("app.yaml");
        std::fs::write(
            &file,
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: payments-api\n  namespace: argocd\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: payments\n  source:\n    repoURL: https://git.example.com/payments.git\n    path: deploy/prod\n    targetRevision: main\n",
        )
        .unwrap();
        let a = parse(&[
            "--app",
            file.to_str().unwrap(),
            "--revision",
            "v2",
            "--cache-dir",
            "/tmp/c",
        ]);
        let plan = Plan::from_args(a).unwrap();
        assert_eq!(plan.request.app_name, "payments-api");
        assert_eq!(plan.request.namespace, "payments");
        assert_eq!(plan.request.sources[0].path.as_deref(), Some("deploy/prod"));
        assert_eq!(
            plan.request.sources[0].target_revision.as_deref(),
            Some("v2")
        );
    }
}
