//! `plumb proj add-destination`, `remove-destination`, `add-destination-service-account`,
//! `remove-destination-service-account`: Argo's verbs (`cmd/argocd/commands/project.go`), with
//! its duplicate and missing-entry messages.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::update::{Change, spec_list, text};

/// `plumb proj add-destination PROJECT SERVER/NAME NAMESPACE`.
#[derive(Debug, Args)]
pub struct AddDestinationArgs {
    /// Project name.
    pub project: String,
    /// Cluster server URL (or its name with `--name`).
    #[arg(id = "dest_server", value_name = "SERVER")]
    pub server: String,
    /// Namespace (glob).
    pub namespace: String,
    /// Use name as destination instead server.
    #[arg(long)]
    pub name: bool,
}

/// `plumb proj remove-destination PROJECT SERVER NAMESPACE`.
#[derive(Debug, Args)]
pub struct RemoveDestinationArgs {
    /// Project name.
    pub project: String,
    /// Cluster server URL.
    #[arg(id = "dest_server", value_name = "SERVER")]
    pub server: String,
    /// Namespace.
    pub namespace: String,
}

/// `plumb proj add-destination-service-account PROJECT SERVER NAMESPACE SERVICE_ACCOUNT`.
#[derive(Debug, Args)]
pub struct AddServiceAccountArgs {
    /// Project name.
    pub project: String,
    /// Cluster server URL (glob).
    #[arg(id = "dest_server", value_name = "SERVER")]
    pub server: String,
    /// Namespace (glob).
    pub namespace: String,
    /// Service account to impersonate.
    pub service_account: String,
    /// Use service-account-namespace as namespace where the service account is present.
    #[arg(long, default_value = "")]
    pub service_account_namespace: String,
}

/// `plumb proj remove-destination-service-account PROJECT SERVER NAMESPACE SERVICE_ACCOUNT`.
#[derive(Debug, Args)]
pub struct RemoveServiceAccountArgs {
    /// Project name.
    pub project: String,
    /// Cluster server URL.
    #[arg(id = "dest_server", value_name = "SERVER")]
    pub server: String,
    /// Namespace.
    pub namespace: String,
    /// Service account.
    pub service_account: String,
}

/// Adds the destination unless one with that namespace and server (or name) is there.
pub fn add_destination(project: &mut Value, args: &AddDestinationArgs) -> Result<Change> {
    let list = spec_list(project, "destinations");
    for d in list.iter() {
        let server_exists = !args.name && text(d, "server") == args.server;
        let name_exists = args.name && text(d, "name") == args.server;
        if text(d, "namespace") == args.namespace && (server_exists || name_exists) {
            bail!("Specified destination is already defined in project");
        }
    }
    let field = if args.name { "name" } else { "server" };
    list.push(json!({field: args.server, "namespace": args.namespace}));
    Ok(Change::Write)
}

/// Removes the first destination of that server and namespace.
pub fn remove_destination(project: &mut Value, args: &RemoveDestinationArgs) -> Result<Change> {
    let list = spec_list(project, "destinations");
    let Some(i) = list
        .iter()
        .position(|d| text(d, "namespace") == args.namespace && text(d, "server") == args.server)
    else {
        bail!("Specified destination does not exist in project");
    };
    list.remove(i);
    Ok(Change::Write)
}

/// Adds a destination service account (`NAMESPACE:ACCOUNT` with `--service-account-namespace`).
pub fn add_service_account(project: &mut Value, args: &AddServiceAccountArgs) -> Result<Change> {
    if args.service_account_namespace.contains('*') {
        bail!("service-account-namespace for DestinationServiceAccount must not contain wildcards");
    }
    if args.service_account.contains('*') {
        bail!("ServiceAccount for DestinationServiceAccount must not contain wildcards");
    }
    let account = if args.service_account_namespace.is_empty() {
        args.service_account.clone()
    } else {
        format!(
            "{}:{}",
            args.service_account_namespace, args.service_account
        )
    };
    let list = spec_list(project, "destinationServiceAccounts");
    for d in list.iter() {
        let server_exists = !args.server.is_empty() && text(d, "server") == args.server;
        let account_exists = !account.is_empty() && text(d, "defaultServiceAccount") == account;
        if text(d, "namespace") == args.namespace && server_exists && account_exists {
            bail!("Specified destination service account is already defined in project");
        }
    }
    list.push(json!({
        "server": args.server, "namespace": args.namespace, "defaultServiceAccount": account
    }));
    Ok(Change::Write)
}

/// Removes every destination service account of that server, namespace and account.
pub fn remove_service_account(
    project: &mut Value,
    args: &RemoveServiceAccountArgs,
) -> Result<Change> {
    let list = spec_list(project, "destinationServiceAccounts");
    let before = list.len();
    list.retain(|d| {
        !(text(d, "namespace") == args.namespace
            && text(d, "server") == args.server
            && text(d, "defaultServiceAccount") == args.service_account)
    });
    if list.len() == before {
        bail!("Specified destination service account does not exist in project");
    }
    Ok(Change::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(server: &str, ns: &str, name: bool) -> AddDestinationArgs {
        AddDestinationArgs {
            project: "p".into(),
            server: server.into(),
            namespace: ns.into(),
            name,
        }
    }

    #[test]
    fn destinations_added_once_and_removed() {
        let mut p = json!({"spec": {}});
        add_destination(&mut p, &add("https://a", "x", false)).unwrap();
        add_destination(&mut p, &add("in-cluster", "x", true)).unwrap();
        let err = add_destination(&mut p, &add("https://a", "x", false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Specified destination is already defined in project"
        );
        assert_eq!(
            p["spec"]["destinations"],
            json!([{"server": "https://a", "namespace": "x"}, {"name": "in-cluster", "namespace": "x"}])
        );
        let rm = RemoveDestinationArgs {
            project: "p".into(),
            server: "https://a".into(),
            namespace: "x".into(),
        };
        remove_destination(&mut p, &rm).unwrap();
        let err = remove_destination(&mut p, &rm).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Specified destination does not exist in project"
        );
    }

    #[test]
    fn service_accounts() {
        let mut p = json!({"spec": {}});
        let mut a = AddServiceAccountArgs {
            project: "p".into(),
            server: "https://a".into(),
            namespace: "x".into(),
            service_account: "deployer".into(),
            service_account_namespace: "ops".into(),
        };
        add_service_account(&mut p, &a).unwrap();
        assert_eq!(
            p["spec"]["destinationServiceAccounts"][0]["defaultServiceAccount"],
            "ops:deployer"
        );
        assert!(add_service_account(&mut p, &a).is_err());
        a.service_account = "*".into();
        assert_eq!(
            add_service_account(&mut p, &a).unwrap_err().to_string(),
            "ServiceAccount for DestinationServiceAccount must not contain wildcards"
        );
    }
}
