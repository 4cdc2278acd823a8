//! `plumb proj create NAME ...` or `-f project.yaml`: builds an AppProject from Argo's flags
//! (`cmd/util/project.go`; given flags override the file), checks it as Argo's API server does
//! (`AppProject.ValidateProject`), then creates it. When it exists with another spec, `--upsert`
//! replaces the spec, otherwise it is Argo's error; an identical one is left alone. Like
//! `argocd proj create`, it prints nothing on success.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::GroupKind;
use plumb_model::application::{
    AppProject, AppProjectSpec, ApplicationDestination, ClusterResourceRestrictionItem,
    DestinationServiceAccount, ObjectMeta, OrphanedResourcesMonitorSettings, SignatureKey,
};
use serde_json::Value;

use super::ProjClient;
use super::client::Created;
use super::update::Change;
use crate::exit::Outcome;

/// `plumb proj create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Project name (must match the file's, when both are given).
    #[arg(required_unless_present = "file")]
    pub name: Option<String>,
    /// Read the AppProject from this YAML or JSON file (`-`: standard input); flags override
    /// its fields.
    #[arg(short = 'f', long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The spec's fields.
    #[command(flatten)]
    pub flags: SpecFlags,
    /// Replace the spec of an existing project of that name when it differs.
    #[arg(long)]
    pub upsert: bool,
}

/// The spec flags `create` and `set` share (Argo's `AddProjFlags`).
#[derive(Debug, Args)]
pub struct SpecFlags {
    /// Project description.
    #[arg(long)]
    pub description: Option<String>,
    /// Permitted destination `SERVER,NAMESPACE` (repeatable).
    #[arg(short = 'd', long = "dest", value_name = "SERVER,NAMESPACE")]
    pub dests: Vec<String>,
    /// Permitted source repository URL (repeatable).
    #[arg(short = 's', long = "src", value_name = "URL")]
    pub srcs: Vec<String>,
    /// GnuPG key IDs commits must be signed with (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "KEY-ID")]
    pub signature_keys: Vec<String>,
    /// Monitor orphaned resources.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub orphaned_resources: Option<bool>,
    /// Give Applications a warning condition when orphaned resources are found (enables
    /// monitoring).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub orphaned_resources_warn: Option<bool>,
    /// Allowed cluster-scoped resource `GROUP/KIND/NAME`, `GROUP/KIND` or `KIND`; NAME is a
    /// glob (repeatable).
    #[arg(long = "allow-cluster-resource", value_name = "GROUP/KIND[/NAME]")]
    pub allow_cluster_resources: Vec<String>,
    /// Denied cluster-scoped resource, as `--allow-cluster-resource` (repeatable).
    #[arg(long = "deny-cluster-resource", value_name = "GROUP/KIND[/NAME]")]
    pub deny_cluster_resources: Vec<String>,
    /// Allowed namespaced kind (repeatable).
    #[arg(long = "allow-namespaced-resource", value_name = "GROUP/KIND")]
    pub allow_namespaced_resources: Vec<String>,
    /// Denied namespaced kind (repeatable).
    #[arg(long = "deny-namespaced-resource", value_name = "GROUP/KIND")]
    pub deny_namespaced_resources: Vec<String>,
    /// Namespaces the project's Applications may live in (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "NAMESPACE")]
    pub source_namespaces: Vec<String>,
    /// Service account to impersonate per destination, `SERVER,NAMESPACE,ACCOUNT` (repeatable).
    #[arg(
        long = "dest-service-accounts",
        value_name = "SERVER,NAMESPACE,ACCOUNT"
    )]
    pub dest_service_accounts: Vec<String>,
}

fn from_file(path: &PathBuf) -> Result<(AppProject, Value)> {
    let (text, origin) = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("unable to read manifest from stdin")?;
        (text, "stdin".to_string())
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        (text, path.display().to_string())
    };
    let docs =
        plumb_yaml::read_documents(&text, &origin).with_context(|| format!("parsing {origin}"))?;
    let [doc] = docs.as_slice() else {
        bail!(
            "{origin}: expected one AppProject, found {} documents",
            docs.len()
        );
    };
    let typed = serde_json::from_value(doc.value.clone())
        .with_context(|| format!("{origin}: not an AppProject"))?;
    Ok((typed, doc.value.clone()))
}

fn group_kinds(values: &[String]) -> Result<Vec<GroupKind>> {
    values
        .iter()
        .map(|v| match v.split('/').collect::<Vec<_>>().as_slice() {
            [kind] => Ok(GroupKind::new("", *kind)),
            [group, kind] => Ok(GroupKind::new(*group, *kind)),
            _ => bail!("'{v}' is not GROUP/KIND or KIND"),
        })
        .collect()
}

/// Argo's `getClusterResourceRestrictionItemList`: `GROUP/KIND/NAME`, `GROUP/KIND` or `KIND`.
fn restriction_items(values: &[String]) -> Result<Vec<ClusterResourceRestrictionItem>> {
    values
        .iter()
        .map(|v| match v.split('/').collect::<Vec<_>>().as_slice() {
            [group, kind, name] => Ok(ClusterResourceRestrictionItem {
                name: Some(name.to_string()).filter(|n| !n.is_empty()),
                ..ClusterResourceRestrictionItem::new(*group, *kind)
            }),
            [group, kind] => Ok(ClusterResourceRestrictionItem::new(*group, *kind)),
            [kind] => Ok(ClusterResourceRestrictionItem::new("", *kind)),
            _ => bail!("'{v}' is not GROUP/KIND/NAME, GROUP/KIND or KIND"),
        })
        .collect()
}

fn key_id(k: &str) -> Result<SignatureKey> {
    let hex = k.bytes().all(|b| b.is_ascii_hexdigit());
    if !(hex && (k.len() == 8 || k.len() == 16)) {
        bail!("'{k}' is not a valid GnuPG key ID");
    }
    Ok(SignatureKey {
        key_id: k.to_ascii_uppercase(),
    })
}

/// The cluster and namespaced resource list flags: each given replaces its list.
fn apply_resource_flags(spec: &mut AppProjectSpec, args: &SpecFlags) -> Result<()> {
    for (values, field) in [
        (
            &args.allow_cluster_resources,
            &mut spec.cluster_resource_whitelist,
        ),
        (
            &args.deny_cluster_resources,
            &mut spec.cluster_resource_blacklist,
        ),
    ] {
        if !values.is_empty() {
            *field = Some(restriction_items(values)?);
        }
    }
    for (values, field) in [
        (
            &args.allow_namespaced_resources,
            &mut spec.namespace_resource_whitelist,
        ),
        (
            &args.deny_namespaced_resources,
            &mut spec.namespace_resource_blacklist,
        ),
    ] {
        if !values.is_empty() {
            *field = Some(group_kinds(values)?);
        }
    }
    Ok(())
}

/// Argo's `SetProjSpecOptions`: every flag given replaces its field.
pub fn apply_flags(spec: &mut AppProjectSpec, args: &SpecFlags) -> Result<()> {
    if let Some(d) = &args.description {
        spec.description = Some(d.clone());
    }
    if !args.dests.is_empty() {
        let mut dests = Vec::new();
        for d in &args.dests {
            let [server, namespace] = d.split(',').collect::<Vec<_>>()[..] else {
                bail!("Expected destination of the form: server,namespace. Received: {d}");
            };
            dests.push(ApplicationDestination {
                server: Some(server.to_string()),
                namespace: Some(namespace.to_string()),
                name: None,
            });
        }
        spec.destinations = Some(dests);
    }
    if !args.srcs.is_empty() {
        spec.source_repos = Some(args.srcs.clone());
    }
    if !args.signature_keys.is_empty() {
        spec.signature_keys = Some(
            args.signature_keys
                .iter()
                .map(|k| key_id(k))
                .collect::<Result<_>>()?,
        );
    }
    apply_resource_flags(spec, args)?;
    if !args.source_namespaces.is_empty() {
        spec.source_namespaces = Some(args.source_namespaces.clone());
    }
    if !args.dest_service_accounts.is_empty() {
        let mut accounts = Vec::new();
        for d in &args.dest_service_accounts {
            let [server, namespace, account] = d.split(',').collect::<Vec<_>>()[..] else {
                bail!(
                    "Expected destination service account of the form: server,namespace, defaultServiceAccount. Received: {d}"
                );
            };
            accounts.push(DestinationServiceAccount {
                server: server.to_string(),
                namespace: Some(namespace.to_string()),
                default_service_account: account.to_string(),
            });
        }
        spec.destination_service_accounts = Some(accounts);
    }
    if args.orphaned_resources.is_some() || args.orphaned_resources_warn.is_some() {
        spec.orphaned_resources = (args.orphaned_resources == Some(true)
            || args.orphaned_resources_warn.is_some())
        .then_some(OrphanedResourcesMonitorSettings {
            warn: args.orphaned_resources_warn,
            ignore: None,
        });
    }
    Ok(())
}

/// The AppProject the flags describe (on top of the file, when given), checked.
#[cfg(test)]
pub fn build(args: &CreateArgs, namespace: &str) -> Result<AppProject> {
    Ok(build_written(args, namespace)?.0)
}

/// The AppProject [`build`] makes, and the JSON to write: the same, plus the spec fields of the
/// file Plumb does not model (a newer Argo's), so that creating or upserting loses nothing.
pub fn build_written(args: &CreateArgs, namespace: &str) -> Result<(AppProject, Value)> {
    let mut file_spec = None;
    let mut project = match &args.file {
        Some(path) => {
            let (p, raw) = from_file(path)?;
            file_spec = raw.get("spec").and_then(Value::as_object).cloned();
            if let Some(name) = &args.name
                && p.metadata.name.as_ref() != Some(name)
            {
                bail!(
                    "project name '{name}' does not match project spec metadata.name '{}'",
                    p.metadata.name.as_deref().unwrap_or_default()
                );
            }
            p
        }
        None => AppProject {
            api_version: None,
            kind: None,
            metadata: ObjectMeta::default(),
            spec: AppProjectSpec::default(),
            status: None,
        },
    };
    if let Some(name) = &args.name {
        project.metadata.name = Some(name.clone());
    }
    let name = project.metadata.name.clone().unwrap_or_default();
    if name.is_empty() {
        bail!("a project name is required");
    }
    if let Some(ns) = project.metadata.namespace.as_deref()
        && ns != namespace
    {
        bail!(
            "project {name} is in namespace '{ns}', but the control namespace is '{namespace}' (use -N)"
        );
    }
    project.metadata.namespace = Some(namespace.to_string());
    project.api_version = Some(plumb_model::application::API_VERSION.to_string());
    project.kind = Some(AppProject::KIND.to_string());
    apply_flags(&mut project.spec, &args.flags)?;
    // Argo's window validation writes the default zone into the stored window.
    for w in project.spec.sync_windows.iter_mut().flatten() {
        if w.time_zone.as_deref().unwrap_or_default().is_empty() {
            w.time_zone = Some("UTC".to_string());
        }
    }
    plumb_policy::project::validate_project(&project).context("error validating project")?;
    let mut written = serde_json::to_value(&project)?;
    if let (Some(raw), Some(spec)) = (file_spec, written["spec"].as_object_mut()) {
        for (field, value) in raw {
            spec.entry(field).or_insert(value);
        }
    }
    Ok((project, written))
}

/// The spec fields that differ, by their Go names in Argo's struct order (Argo's
/// `GenerateSpecIsDifferentErrorMessage` lists changed paths; Plumb names the top-level field).
pub fn different_keys(a: &AppProjectSpec, b: &AppProjectSpec) -> Vec<&'static str> {
    const FIELDS: [(&str, &str); 14] = [
        ("sourceRepos", "SourceRepos"),
        ("destinations", "Destinations"),
        ("description", "Description"),
        ("roles", "Roles"),
        ("clusterResourceWhitelist", "ClusterResourceWhitelist"),
        ("namespaceResourceBlacklist", "NamespaceResourceBlacklist"),
        ("orphanedResources", "OrphanedResources"),
        ("syncWindows", "SyncWindows"),
        ("namespaceResourceWhitelist", "NamespaceResourceWhitelist"),
        ("signatureKeys", "SignatureKeys"),
        ("clusterResourceBlacklist", "ClusterResourceBlacklist"),
        ("sourceNamespaces", "SourceNamespaces"),
        (
            "permitOnlyProjectScopedClusters",
            "PermitOnlyProjectScopedClusters",
        ),
        ("destinationServiceAccounts", "DestinationServiceAccounts"),
    ];
    let (a, b) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    FIELDS
        .iter()
        .filter(|(json, _)| a.get(json) != b.get(json))
        .map(|(_, go)| *go)
        .collect()
}

/// Runs `plumb proj create`.
pub async fn run(client: &ProjClient, args: CreateArgs) -> Result<Outcome> {
    let (project, written) = build_written(&args, client.namespace())?;
    let Created::Exists(existing) = client.create(&written).await? else {
        return Ok(Outcome::Success);
    };
    if args.upsert {
        // The stored project's JSON with the new spec, written as every other verb writes it
        // (guarded by resourceVersion; what Plumb does not model is kept).
        let name = project.metadata.name.as_deref().unwrap_or_default();
        let spec = written["spec"].clone();
        client
            .update(name, |stored| {
                if stored["spec"] == spec {
                    return Ok(Change::Keep);
                }
                stored["spec"] = spec.clone();
                Ok(Change::Write)
            })
            .await?;
    } else if existing.spec != project.spec {
        let keys = different_keys(&existing.spec, &project.spec);
        let mut msg =
            "existing project spec is different; use upsert flag to force update".to_string();
        if !keys.is_empty() {
            msg.push_str(&format!("; difference in keys \"{}\"", keys.join(",")));
        }
        bail!(msg);
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: CreateArgs,
    }

    fn parse(args: &[&str]) -> CreateArgs {
        Cli::try_parse_from(std::iter::once("create").chain(args.iter().copied()))
            .unwrap()
            .args
    }

    fn build_err(args: &[&str]) -> String {
        format!("{:#}", build(&parse(args), "argocd").unwrap_err())
    }

    #[test]
    fn flags_build_the_project() {
        let args = parse(&[
            "payments",
            "--description",
            "Payments team",
            "-d",
            "https://kubernetes.default.svc,payments",
            "--dest",
            "https://10.0.0.1:6443,payments-*",
            "-s",
            "https://git.acme.internal/apps/*",
            "--signature-keys",
            "4aee18f83afdeb23,d56c4fcf",
            "--orphaned-resources-warn",
            "--allow-cluster-resource",
            "/Namespace",
            "--allow-cluster-resource",
            "rbac.authorization.k8s.io/ClusterRole/app-*",
            "--deny-cluster-resource",
            "rbac.authorization.k8s.io/ClusterRole/cluster-admin",
            "--deny-namespaced-resource",
            "ResourceQuota",
            "--source-namespaces",
            "argocd,payments-apps",
            "--dest-service-accounts",
            "https://kubernetes.default.svc,payments,deployer",
            "--upsert",
        ]);
        assert!(args.upsert);
        let p = build(&args, "argocd").unwrap();
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
                   "metadata": {"name": "payments", "namespace": "argocd"},
                   "spec": {
                       "sourceRepos": ["https://git.acme.internal/apps/*"],
                       "destinations": [
                           {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                           {"server": "https://10.0.0.1:6443", "namespace": "payments-*"}],
                       "description": "Payments team",
                       "clusterResourceWhitelist": [
                           {"group": "", "kind": "Namespace"},
                           {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "app-*"}],
                       "namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}],
                       "clusterResourceBlacklist": [
                           {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}],
                       "orphanedResources": {"warn": true},
                       "signatureKeys": [{"keyID": "4AEE18F83AFDEB23"}, {"keyID": "D56C4FCF"}],
                       "sourceNamespaces": ["argocd", "payments-apps"],
                       "destinationServiceAccounts": [
                           {"server": "https://kubernetes.default.svc", "namespace": "payments",
                            "defaultServiceAccount": "deployer"}]}})
        );
    }

    #[test]
    fn orphaned_resources_flags() {
        let spec = |args: &[&str]| {
            let mut a = vec!["p"];
            a.extend_from_slice(args);
            build(&parse(&a), "argocd").unwrap().spec.orphaned_resources
        };
        assert_eq!(spec(&[]), None);
        assert_eq!(
            spec(&["--orphaned-resources"]),
            Some(OrphanedResourcesMonitorSettings::default())
        );
        assert_eq!(
            spec(&["--orphaned-resources", "--orphaned-resources-warn=false"])
                .unwrap()
                .warn,
            Some(false)
        );
        assert_eq!(spec(&["--orphaned-resources=false"]), None);
        // The name after a bare flag stays the name.
        let a = parse(&["--orphaned-resources", "payments"]);
        assert_eq!(a.name.as_deref(), Some("payments"));
    }

    #[test]
    fn argos_errors() {
        assert_eq!(
            build_err(&["p", "-d", "https://kubernetes.default.svc"]),
            "Expected destination of the form: server,namespace. Received: https://kubernetes.default.svc"
        );
        assert_eq!(
            build_err(&["p", "--signature-keys", "xyz"]),
            "'xyz' is not a valid GnuPG key ID"
        );
        assert_eq!(
            build_err(&["p", "-s", "https://a/b.git", "-s", "https://a/b.git"]),
            "error validating project: source repository 'https://a/b.git' already added"
        );
        assert_eq!(
            build_err(&["p", "-d", "https://x,ns", "-d", "https://x,ns"]),
            "error validating project: destination 'https://x/ns' already added"
        );
        assert_eq!(
            build_err(&["p", "-s", "!*"]),
            "error validating project: source repository has an invalid format, '!*'"
        );
        assert_eq!(
            build_err(&["p", "--allow-cluster-resource", "a/b/c/d"]),
            "'a/b/c/d' is not GROUP/KIND/NAME, GROUP/KIND or KIND"
        );
        assert_eq!(
            build_err(&["p", "--allow-namespaced-resource", "a/b/c"]),
            "'a/b/c' is not GROUP/KIND or KIND"
        );
        assert!(Cli::try_parse_from(["create"]).is_err());
    }

    fn with_windows(windows: serde_json::Value) -> Result<AppProject> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proj.json");
        std::fs::write(
            &path,
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
                   "metadata": {"name": "payments"}, "spec": {"syncWindows": windows}})
            .to_string(),
        )
        .unwrap();
        build(&parse(&["-f", path.to_str().unwrap()]), "argocd")
    }

    #[test]
    fn windows_are_checked_and_get_the_default_zone() {
        let p = with_windows(json!([
            {"kind": "deny", "schedule": "0 22 * * *", "duration": "8h", "namespaces": ["payments"]}
        ]))
        .unwrap();
        assert_eq!(
            p.spec.sync_windows.unwrap()[0].time_zone.as_deref(),
            Some("UTC")
        );
        let err = |w| format!("{:#}", with_windows(w).unwrap_err());
        assert_eq!(
            err(json!([{"kind": "deny", "schedule": "0 22 * * *", "duration": "8h"}])),
            "error validating project: window 'deny':'0 22 * * *':'8h' requires one of application, cluster or namespace"
        );
        assert_eq!(
            err(json!([
                {"kind": "deny", "schedule": "0 22 * * *", "duration": "8h", "namespaces": ["a"]},
                {"kind": "deny", "schedule": "0 22 * * *", "duration": "8h", "namespaces": ["a"]}
            ])),
            "error validating project: sync window with kind 'deny', schedule '0 22 * * *', and duration '8h' already exists (duplicate detected)"
        );
        assert_eq!(
            err(
                json!([{"kind": "deny", "schedule": "0 22 * *", "duration": "8h", "namespaces": ["a"]}])
            ),
            "error validating project: sync window 0 (deny:0 22 * *:8h): cannot parse schedule '0 22 * *': expected exactly 5 fields, found 4: [0 22 * *]"
        );
    }

    #[test]
    fn file_name_must_match_the_argument() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proj.yaml");
        std::fs::write(
            &path,
            "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: payments\n  namespace: argocd\nspec:\n  description: from file\n  sourceRepos:\n  - '*'\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let project = build(&parse(&["-f", p, "--description", "flag"]), "argocd").unwrap();
        assert_eq!(project.spec.description.as_deref(), Some("flag"));
        assert_eq!(project.spec.source_repos.unwrap(), ["*"]);
        assert_eq!(
            build_err(&["billing", "-f", p]),
            "project name 'billing' does not match project spec metadata.name 'payments'"
        );
        let err = format!("{:#}", build(&parse(&["-f", p]), "other").unwrap_err());
        assert!(err.contains("control namespace is 'other'"), "{err}");
    }

    #[test]
    fn different_keys_name_the_go_fields() {
        let a: AppProjectSpec =
            serde_json::from_value(json!({"description": "a", "sourceRepos": ["*"]})).unwrap();
        let b: AppProjectSpec = serde_json::from_value(
            json!({"description": "b", "sourceRepos": ["*"], "sourceNamespaces": ["x"]}),
        )
        .unwrap();
        assert_eq!(different_keys(&a, &b), ["Description", "SourceNamespaces"]);
        assert!(different_keys(&a, &a).is_empty());
    }
}
