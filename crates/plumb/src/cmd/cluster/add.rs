//! `plumb cluster add CONTEXT`: Argo's `argocd cluster add`. The target cluster is the one the
//! user's kubeconfig context names; `argocd-manager` is installed there (or `--service-account`
//! used), and a cluster Secret holding its token is stored in the control namespace. The
//! cluster's TLS settings come from the context as Argo's `NewCluster` takes them (a client
//! certificate pair of the context is kept, and then no token is, as Argo does).

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};
use plumb_app::clusters::manager;
use serde_json::{Value, json};

use super::client::ClusterClient;
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
    /// Indicates if cluster level resources should be managed. This setting is used only if list of managed namespaces is not empty.
    #[arg(long)]
    cluster_resources: bool,
    /// project of the cluster
    #[arg(long)]
    project: Option<String>,
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
}

/// The kubeconfig file the CLI reads (`--kubeconfig`, the first of `$KUBECONFIG`, `~/.kube/config`).
fn kubeconfig_path(conn: &ConnArgs) -> Result<PathBuf> {
    if let Some(p) = &conn.kubeconfig {
        return Ok(p.clone());
    }
    if let Some(k) = std::env::var_os("KUBECONFIG").filter(|k| !k.is_empty())
        && let Some(first) = std::env::split_paths(&k).next()
    {
        return Ok(first);
    }
    let home = std::env::var_os("HOME").context("no --kubeconfig, KUBECONFIG or HOME")?;
    Ok(PathBuf::from(home).join(".kube/config"))
}

/// A `key=value` list as a map (Argo's `label.Parse`).
fn key_values(items: &[String], what: &str) -> Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|i| match i.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => bail!("{what} {i:?} is not key=value"),
        })
        .collect()
}

/// A file's contents, base64, as a kubeconfig `*-data` field holds them.
fn data_or_file(
    entry: &Value,
    data: &str,
    file: &str,
    base: &std::path::Path,
) -> Result<Option<String>> {
    if let Some(d) = entry[data].as_str().filter(|d| !d.is_empty()) {
        return Ok(Some(d.to_string()));
    }
    match entry[file].as_str().filter(|f| !f.is_empty()) {
        Some(f) => {
            let path = base.join(f);
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(Some(STANDARD.encode(bytes)))
        }
        None => Ok(None),
    }
}

/// The `cluster` and `user` entries a kubeconfig context names.
fn context_entries(path: &std::path::Path, context: &str) -> Result<(Value, Value)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc = plumb_yaml::read_documents(&text, &path.display().to_string())?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let named = |list: &str, name: &str| {
        doc[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == name)
            .cloned()
    };
    let ctx = named("contexts", context)
        .with_context(|| format!("context {context} does not exist in kubeconfig"))?;
    let cluster = named(
        "clusters",
        ctx["context"]["cluster"].as_str().unwrap_or_default(),
    )
    .map(|c| c["cluster"].clone())
    .with_context(|| format!("the cluster of context {context} is not in the kubeconfig"))?;
    let user = named("users", ctx["context"]["user"].as_str().unwrap_or_default())
        .map(|u| u["user"].clone())
        .unwrap_or(Value::Null);
    Ok((cluster, user))
}

/// Argo's `NewCluster`: the context's server and TLS settings, the token unless the context
/// authenticates with a client certificate pair.
fn new_cluster(
    path: &std::path::Path,
    context: &str,
    args: &AddArgs,
    token: &str,
) -> Result<Value> {
    let (cluster, user) = context_entries(path, context)?;
    let base = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tls =
        json!({"insecure": cluster["insecure-skip-tls-verify"].as_bool().unwrap_or(false)});
    if let Some(n) = cluster["tls-server-name"].as_str() {
        tls["serverName"] = json!(n);
    }
    for (to, data, file, entry) in [
        (
            "caData",
            "certificate-authority-data",
            "certificate-authority",
            &cluster,
        ),
        (
            "certData",
            "client-certificate-data",
            "client-certificate",
            &user,
        ),
        ("keyData", "client-key-data", "client-key", &user),
    ] {
        if let Some(v) = data_or_file(entry, data, file, base)? {
            tls[to] = json!(v);
        }
    }
    let mut config = json!({"tlsClientConfig": tls});
    if tls.get("certData").is_none() || tls.get("keyData").is_none() {
        config["bearerToken"] = json!(token);
    }
    if let Some(p) = args
        .proxy_url
        .clone()
        .or(cluster["proxy-url"].as_str().map(str::to_string))
    {
        config["proxyUrl"] = json!(p);
    }
    let mut out = json!({
        "server": if args.in_cluster { plumb_app::IN_CLUSTER_SERVER } else { cluster["server"].as_str().unwrap_or_default() },
        "name": args.name.clone().unwrap_or_else(|| context.to_string()),
        "config": config,
        "labels": key_values(&args.labels, "label")?,
        "annotations": key_values(&args.annotations, "annotation")?,
    });
    if !args.namespaces.is_empty() {
        out["namespaces"] = json!(args.namespaces);
    }
    // As Argo's `NewCluster`: stored as given; it counts only with namespaces.
    if args.cluster_resources {
        out["clusterResources"] = json!(true);
    }
    if let Some(p) = args.project.as_ref().filter(|p| !p.is_empty()) {
        out["project"] = json!(p);
    }
    Ok(out)
}

/// Runs `plumb cluster add`.
pub async fn run(client: &ClusterClient, conn: &ConnArgs, args: AddArgs) -> Result<Outcome> {
    let path = kubeconfig_path(conn)?;
    let Some(context) = args.context.clone() else {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let names: Vec<String> = plumb_yaml::read_documents(&text, "kubeconfig")
            .ok()
            .and_then(|d| d.into_iter().next())
            .and_then(|d| d.value["contexts"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect();
        bail!("Choose a context name from:\n{}", names.join("\n"));
    };
    let kubeconfig =
        Kubeconfig::read_from(&path).with_context(|| format!("reading {}", path.display()))?;
    let options = KubeConfigOptions {
        context: Some(context.clone()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| format!("context {context} of {}", path.display()))?;
    let target = plumb_kube::client_from(config)?;
    let token = match &args.service_account {
        Some(sa) => {
            manager::bearer_token(
                &target,
                &args.system_namespace,
                sa,
                manager::BEARER_TOKEN_TIMEOUT,
            )
            .await?
        }
        None => {
            if std::io::stdout().is_terminal() && !args.yes {
                let level = if args.namespaces.is_empty() {
                    "cluster"
                } else {
                    "namespace"
                };
                let question = format!(
                    "WARNING: This will create a service account `argocd-manager` on the cluster referenced by context `{context}` with full {level} level privileges. Do you want to continue [y/N]? "
                );
                let mut input = std::io::stdin().lock();
                if !crate::cmd::app::ask_to_proceed(&question, &mut input, &mut std::io::stdout())?
                {
                    return Ok(Outcome::Negative);
                }
            }
            manager::install(
                &target,
                &args.system_namespace,
                &args.namespaces,
                manager::BEARER_TOKEN_TIMEOUT,
            )
            .await?
        }
    };
    let cluster = new_cluster(&path, &context, &args, &token)?;
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

    const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n";

    fn cluster_of(args: &[&str]) -> Value {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config");
        std::fs::write(&path, KUBECONFIG).expect("kubeconfig");
        let cli = Cli::parse_from(std::iter::once("add").chain(args.iter().copied()));
        new_cluster(&path, "ctx", &cli.add, "token").expect("cluster")
    }

    fn data(cluster: &Value) -> BTreeMap<String, String> {
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
