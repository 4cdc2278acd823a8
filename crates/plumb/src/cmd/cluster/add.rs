//! `plumb cluster add CONTEXT`: Argo's `argocd cluster add`. The target cluster is the one the
//! user's kubeconfig context names; its credentials are `argocd-manager`'s token (installed
//! there, or `--service-account`'s), or an exec plugin (`--exec-command`); the cluster Secret
//! is stored in the control namespace. `--aws-*` (Argo's `awsAuthConfig`) is refused.

use std::io::IsTerminal as _;

use anyhow::{Context, Result, bail};
use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};
use plumb_app::clusters::manager;
use serde_json::{Value, json};

use super::client::ClusterClient;
use super::kubeconfig;
use super::spec::{self, Endpoint, Gathered};
use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

/// `plumb cluster add CONTEXT`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The kubeconfig context of the cluster to add.
    context: Option<String>,
    /// Overwrite the cluster name
    #[arg(long)]
    name: Option<String>,
    /// List of namespaces which are allowed to manage
    #[arg(long = "namespace")]
    namespaces: Vec<String>,
    /// Indicates if cluster level resources should be managed. The setting is used only if list of managed namespaces is not empty.
    #[arg(long)]
    cluster_resources: bool,
    /// project of the cluster
    #[arg(long)]
    project: Option<String>,
    /// Cluster shard number; inferred from hostname if not set
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    shard: i64,
    /// Set metadata labels (e.g. --label key=value)
    #[arg(long = "label")]
    labels: Vec<String>,
    /// Set metadata annotations (e.g. --annotation key=value)
    #[arg(long = "annotation")]
    annotations: Vec<String>,
    /// Override an existing cluster with the same name even if the spec differs
    #[arg(long)]
    upsert: bool,
    /// Indicates Argo CD resides inside this cluster and should connect using the internal k8s hostname (kubernetes.default.svc)
    #[arg(long)]
    in_cluster: bool,
    /// Cluster endpoint to use. Can be one of the following: 'kubeconfig', 'kube-public', or 'internal'.
    #[arg(long)]
    cluster_endpoint: Option<String>,
    /// System namespace service account to use for kubernetes resource management. If not set then default "argocd-manager" SA will be created
    #[arg(long)]
    service_account: Option<String>,
    /// Use different system namespace
    #[arg(long, default_value = manager::DEFAULT_SYSTEM_NAMESPACE)]
    system_namespace: String,
    /// Skip explicit confirmation
    #[arg(short = 'y', long = "yes")]
    yes: bool,
    /// use proxy to connect cluster
    #[arg(long)]
    proxy_url: Option<String>,
    /// use a different proxy URL (or "" for no proxy) for the ArgoCD server to connect to the cluster; if omitted the value from --proxy-url or the kubeconfig is used
    #[arg(long)]
    server_proxy_url: Option<String>,
    /// Bypasses automatic GZip compression requests to the server
    #[arg(long)]
    disable_compression: bool,
    /// Command to run to provide client credentials to the cluster. You may need to build a custom ArgoCD image to ensure the command is available at runtime.
    #[arg(long)]
    exec_command: Option<String>,
    /// Arguments to supply to the --exec-command executable
    #[arg(long)]
    exec_command_args: Vec<String>,
    /// Environment vars to set when running the --exec-command executable
    #[arg(long)]
    exec_command_env: Vec<String>,
    /// Preferred input version of the ExecInfo for the --exec-command executable
    #[arg(long)]
    exec_command_api_version: Option<String>,
    /// Text shown to the user when the --exec-command executable doesn't seem to be present
    #[arg(long)]
    exec_command_install_hint: Option<String>,
    /// AWS Cluster name if set then aws cli eks token command will be used to access cluster
    #[arg(long)]
    aws_cluster_name: Option<String>,
    /// Optional AWS role arn. If set then AWS IAM Authenticator assumes a role to perform cluster operations instead of the default AWS credential provider chain.
    #[arg(long)]
    aws_role_arn: Option<String>,
    /// Optional AWS profile. If set then AWS IAM Authenticator uses this profile to perform cluster operations instead of the default AWS credential provider chain.
    #[arg(long)]
    aws_profile: Option<String>,
}

/// `execProviderConfig` from the `--exec-command*` flags; refusals of what Plumb cannot honour.
fn exec_provider(args: &AddArgs) -> Result<Option<Value>> {
    if args.aws_cluster_name.is_some() || args.aws_role_arn.is_some() || args.aws_profile.is_some()
    {
        bail!(
            "--aws-cluster-name/--aws-role-arn/--aws-profile (config.awsAuthConfig): AWS IAM authentication is not supported by Plumb; use --exec-command aws --exec-command-args eks,get-token,--cluster-name,NAME --exec-command-api-version client.authentication.k8s.io/v1beta1"
        );
    }
    let Some(command) = args.exec_command.as_ref() else {
        return Ok(None);
    };
    let Some(api_version) = args.exec_command_api_version.as_ref() else {
        bail!(
            "--exec-command-api-version is required with --exec-command: one of {}",
            plumb_app::clusters::config::EXEC_API_VERSIONS.join(", ")
        );
    };
    let mut exec = json!({"command": command, "args": args.exec_command_args,
                          "env": spec::exec_env(&args.exec_command_env)?, "apiVersion": api_version});
    if let Some(h) = &args.exec_command_install_hint {
        exec["installHint"] = json!(h);
    }
    // The whole `config` is checked as the controller will read it, flags named.
    let check = json!({ "execProviderConfig": exec }).to_string();
    if let Err(e) = plumb_app::clusters::ClusterConfig::parse(&check) {
        bail!("--exec-command*: {e}");
    }
    Ok(Some(exec))
}

/// The target cluster's client through the context (and `--proxy-url`).
async fn target_client(
    path: &std::path::Path,
    context: &str,
    proxy: Option<&str>,
) -> Result<kube::Client> {
    let kubeconfig =
        Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| format!("context {context} of {}", path.display()))?;
    if let Some(p) = proxy {
        config.proxy_url = Some(p.parse().context("--proxy-url: not a URL")?);
    }
    Ok(plumb_kube::client_from(config)?)
}

/// Argo's question before installing `argocd-manager` on a terminal.
fn confirmed(args: &AddArgs, context: &str) -> Result<bool> {
    if !std::io::stdout().is_terminal() || args.yes {
        return Ok(true);
    }
    let level = if args.namespaces.is_empty() {
        "cluster"
    } else {
        "namespace"
    };
    let question = format!(
        "WARNING: This will create a service account `argocd-manager` on the cluster referenced by context `{context}` with full {level} level privileges. Do you want to continue [y/N]? "
    );
    let mut input = std::io::stdin().lock();
    crate::cmd::app::ask_to_proceed(&question, &mut input, &mut std::io::stdout())
}

/// The bearer token to store: `--service-account`'s, or `argocd-manager`'s once installed;
/// `None` when the user declined.
async fn manager_token(
    target: &kube::Client,
    args: &AddArgs,
    context: &str,
) -> Result<Option<String>> {
    let timeout = manager::BEARER_TOKEN_TIMEOUT;
    if let Some(sa) = &args.service_account {
        return Ok(Some(
            manager::bearer_token(target, &args.system_namespace, sa, timeout).await?,
        ));
    }
    if !confirmed(args, context)? {
        return Ok(None);
    }
    let ns = &args.system_namespace;
    Ok(Some(
        manager::install(target, ns, &args.namespaces, timeout).await?,
    ))
}

/// `--namespace` and `--cluster-resources`, as Argo's `NewCluster` stores them.
fn scope_flags(cluster: &mut Value, args: &AddArgs) {
    if !args.namespaces.is_empty() {
        cluster["namespaces"] = json!(args.namespaces);
    }
    // Stored as given; it counts only with namespaces.
    if args.cluster_resources {
        cluster["clusterResources"] = json!(true);
    }
}

/// The flags Argo applies after `NewCluster`: server proxy, endpoint, shard, project, labels.
async fn apply_flags(
    cluster: &mut Value,
    args: &AddArgs,
    endpoint: Endpoint,
    target: &kube::Client,
) -> Result<()> {
    if let Some(p) = &args.server_proxy_url {
        match p.as_str() {
            "" => {
                if let Some(c) = cluster["config"].as_object_mut() {
                    c.remove("proxyUrl");
                }
            }
            p => cluster["config"]["proxyUrl"] = json!(spec::proxy_url("--server-proxy-url", p)?),
        }
    }
    if args.disable_compression {
        cluster["config"]["disableCompression"] = json!(true);
    }
    match endpoint {
        Endpoint::Internal => cluster["server"] = json!(plumb_app::IN_CLUSTER_SERVER),
        Endpoint::KubePublic => match spec::kube_public_endpoint(target).await {
            Ok((server, ca)) if !server.is_empty() => {
                cluster["server"] = json!(server);
                cluster["config"]["tlsClientConfig"]["caData"] = json!(ca);
            }
            other => {
                let why = other.err().map(|e| format!("{e:#}")).unwrap_or_default();
                eprintln!("Failed to find the cluster endpoint from kube-public data: {why}");
                eprintln!(
                    "Falling back to the endpoint '{}' as listed in the kubeconfig context",
                    cluster["server"].as_str().unwrap_or_default()
                );
            }
        },
        Endpoint::Kubeconfig => {}
    }
    scope_flags(cluster, args);
    if args.shard >= 0 {
        cluster["shard"] = json!(args.shard);
    }
    if let Some(p) = args.project.as_ref().filter(|p| !p.is_empty()) {
        cluster["project"] = json!(p);
    }
    cluster["labels"] = json!(spec::key_values(&args.labels)?);
    cluster["annotations"] = json!(spec::key_values(&args.annotations)?);
    Ok(())
}

/// Runs `plumb cluster add`.
pub async fn run(client: &ClusterClient, conn: &ConnArgs, args: AddArgs) -> Result<Outcome> {
    let path = kubeconfig::path(conn)?;
    let Some(context) = args.context.clone() else {
        eprintln!("Choose a context name from:");
        print!("{}", kubeconfig::contexts_table(&path));
        return Ok(Outcome::Negative);
    };
    let endpoint = spec::endpoint(args.cluster_endpoint.as_deref(), args.in_cluster)?;
    let exec = exec_provider(&args)?;
    spec::key_values(&args.labels)?;
    spec::key_values(&args.annotations)?;
    let proxy = match &args.proxy_url {
        Some(p) => Some(spec::proxy_url("--proxy-url", p)?),
        None => kubeconfig::context_entries(&path, &context)?.0["proxy-url"]
            .as_str()
            .map(str::to_string),
    };
    let target = target_client(&path, &context, args.proxy_url.as_deref()).await?;
    let token = match exec {
        Some(_) => String::new(),
        None => match manager_token(&target, &args, &context).await? {
            Some(t) => t,
            None => return Ok(Outcome::Negative),
        },
    };
    let gathered = Gathered {
        kubeconfig: &path,
        context: &context,
        token: &token,
        exec,
        proxy_url: proxy,
    };
    let mut cluster = spec::new_cluster(&gathered, args.name.as_deref().unwrap_or(&context))?;
    apply_flags(&mut cluster, &args, endpoint, &target).await?;
    let stored = client.create(&cluster, args.upsert).await?;
    println!(
        "Cluster '{}' added",
        stored["server"].as_str().unwrap_or_default()
    );
    Ok(Outcome::Success)
}

#[cfg(test)]
mod namespaced_tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        add: AddArgs,
    }

    fn cluster_of(args: &[&str]) -> Value {
        let cli = Cli::parse_from(std::iter::once("add").chain(args.iter().copied()));
        let mut cluster = json!({"server": "https://10.0.0.1:6443", "name": "ctx",
                                 "config": {"bearerToken": "token"}});
        scope_flags(&mut cluster, &cli.add);
        cluster
    }

    fn data(cluster: &Value) -> std::collections::BTreeMap<String, String> {
        let secret =
            plumb_app::clusters::record::to_secret(cluster, Default::default()).expect("secret");
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
            .collect()
    }

    /// `--namespace` (repeated) and `--cluster-resources` stored as Argo's `NewCluster` and
    /// `clusterToSecret` store them: `namespaces: "a,b"`, `clusterResources: "true"` only when
    /// given.
    #[test]
    fn namespace_and_cluster_resources_are_stored_as_argo_does() {
        let c = cluster_of(&[
            "ctx",
            "--namespace",
            "a",
            "--namespace",
            "b",
            "--cluster-resources",
        ]);
        assert_eq!(c["namespaces"], json!(["a", "b"]));
        assert_eq!(c["clusterResources"], json!(true));
        let d = data(&c);
        assert_eq!(d["namespaces"], "a,b");
        assert_eq!(d["clusterResources"], "true");

        let c = cluster_of(&["ctx", "--namespace", "a"]);
        assert!(c.get("clusterResources").is_none());
        assert!(!data(&c).contains_key("clusterResources"));

        let whole = data(&cluster_of(&["ctx"]));
        assert!(!whole.contains_key("namespaces") && !whole.contains_key("clusterResources"));
        // As Argo: stored even without namespaces, where it means nothing.
        assert_eq!(
            data(&cluster_of(&["ctx", "--cluster-resources"]))["clusterResources"],
            "true"
        );
    }
}
