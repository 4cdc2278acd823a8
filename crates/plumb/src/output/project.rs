//! The default text layouts of Argo CD's `argocd proj` commands
//! (`cmd/argocd/commands/project.go`, `projectwindows.go`): the `proj list` table
//! (`printProjectTable`), the `proj get` details (`printProject`, labels padded to 29 columns)
//! and the `proj windows list` table (`printSyncWindows`).

use plumb_model::GroupKind;
use plumb_model::application::{
    AppProject, ClusterResourceRestrictionItem, SourceIntegrityGitPolicy, SyncWindow,
};

use super::tabwriter::Table;

const NONE: &str = "<none>";

fn name(p: &AppProject) -> &str {
    p.metadata.name.as_deref().unwrap_or_default()
}

fn group_kind(gk: &GroupKind) -> String {
    format!("{}/{}", gk.group, gk.kind)
}

/// Argo prints a cluster resource entry's group and kind, not its name pattern.
fn restriction(item: &ClusterResourceRestrictionItem) -> String {
    format!("{}/{}", item.group, item.kind)
}

fn destination(p: &AppProject, i: usize) -> String {
    let d = &p.spec.destinations.as_deref().unwrap_or_default()[i];
    format!(
        "{},{}",
        d.server.as_deref().unwrap_or_default(),
        d.namespace.as_deref().unwrap_or_default()
    )
}

/// `ORPHANED-RESOURCES` / `Orphaned Resources:` (Argo's `formatOrphanedResources`).
pub fn orphaned_resources(p: &AppProject) -> String {
    let Some(o) = &p.spec.orphaned_resources else {
        return "disabled".to_string();
    };
    let mut details = format!("warn={}", o.warn == Some(true));
    let ignored = o.ignore.as_deref().unwrap_or_default().len();
    if ignored > 0 {
        details.push_str(&format!(", ignored {ignored}"));
    }
    format!("enabled ({details})")
}

/// The `proj list` table.
pub fn project_table(projects: &[AppProject]) -> String {
    let mut t = Table::new();
    t.line(
        "NAME\tDESCRIPTION\tDESTINATIONS\tSOURCES\tCLUSTER-RESOURCE-WHITELIST\t\
         NAMESPACE-RESOURCE-BLACKLIST\tSIGNATURE-KEYS\tORPHANED-RESOURCES\t\
         DESTINATION-SERVICE-ACCOUNTS",
    );
    for p in projects {
        let s = &p.spec;
        let count = |n: usize, one: &dyn Fn() -> String, many: &str| match n {
            0 => NONE.to_string(),
            1 => one(),
            n => format!("{n} {many}"),
        };
        let dests = s.destinations.as_deref().unwrap_or_default();
        let accounts = s
            .destination_service_accounts
            .as_deref()
            .unwrap_or_default();
        let repos = s.source_repos.as_deref().unwrap_or_default();
        let whitelist = s.cluster_resource_whitelist.as_deref().unwrap_or_default();
        let blacklist = s
            .namespace_resource_blacklist
            .as_deref()
            .unwrap_or_default()
            .len();
        let keys = s.signature_keys.as_deref().unwrap_or_default().len();
        t.row(&[
            name(p).to_string(),
            s.description.clone().unwrap_or_default(),
            count(dests.len(), &|| destination(p, 0), "destinations"),
            count(repos.len(), &|| repos[0].clone(), "repos"),
            count(whitelist.len(), &|| restriction(&whitelist[0]), "resources"),
            match blacklist {
                0 => NONE.to_string(),
                n => format!("{n} resources"),
            },
            match keys {
                0 => NONE.to_string(),
                n => format!("{n} key(s)"),
            },
            orphaned_resources(p),
            count(
                accounts.len(),
                &|| {
                    let a = &accounts[0];
                    format!(
                        "{},{},{}",
                        a.server,
                        a.namespace.as_deref().unwrap_or_default(),
                        a.default_service_account
                    )
                },
                "destinationServiceAccounts",
            ),
        ]);
    }
    t.render()
}

/// Scoped repositories and clusters as `proj get` shows them; `None` when unknown (no access
/// to Secrets), printed `<unknown>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopedView {
    /// Repository URLs.
    pub repositories: Option<Vec<String>>,
    /// Cluster URLs.
    pub clusters: Option<Vec<String>>,
}

fn list(out: &mut String, label: &str, values: Option<&[String]>) {
    let values = match values {
        None => vec!["<unknown>".to_string()],
        Some([]) => vec![NONE.to_string()],
        Some(v) => v.to_vec(),
    };
    for (i, v) in values.iter().enumerate() {
        out.push_str(&format!("{:<29}{v}\n", if i == 0 { label } else { "" }));
    }
}

/// The `proj get` details.
pub fn project_detail(p: &AppProject, scoped: &ScopedView) -> String {
    let s = &p.spec;
    let mut out = String::new();
    out.push_str(&format!("{:<29}{}\n", "Name:", name(p)));
    out.push_str(&format!(
        "{:<29}{}\n",
        "Description:",
        s.description.as_deref().unwrap_or_default()
    ));
    let dests: Vec<String> = (0..s.destinations.as_deref().unwrap_or_default().len())
        .map(|i| destination(p, i))
        .collect();
    list(&mut out, "Destinations:", Some(&dests));
    list(
        &mut out,
        "Repositories:",
        Some(s.source_repos.as_deref().unwrap_or_default()),
    );
    list(
        &mut out,
        "Source Namespaces:",
        Some(s.source_namespaces.as_deref().unwrap_or_default()),
    );
    list(
        &mut out,
        "Scoped Repositories:",
        scoped.repositories.as_deref(),
    );
    let gks = |l: &Option<Vec<GroupKind>>| -> Vec<String> {
        l.as_deref()
            .unwrap_or_default()
            .iter()
            .map(group_kind)
            .collect()
    };
    list(
        &mut out,
        "Allowed Cluster Resources:",
        Some(
            &s.cluster_resource_whitelist
                .iter()
                .flatten()
                .map(restriction)
                .collect::<Vec<_>>(),
        ),
    );
    list(&mut out, "Scoped Clusters:", scoped.clusters.as_deref());
    list(
        &mut out,
        "Denied Namespaced Resources:",
        Some(&gks(&s.namespace_resource_blacklist)),
    );
    let keys: Vec<&str> = s
        .signature_keys
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|k| k.key_id.as_str())
        .collect();
    let keys = if keys.is_empty() {
        NONE.to_string()
    } else {
        keys.join(", ")
    };
    out.push_str(&format!("{:<29}{keys}\n", "Signature keys:"));
    out.push_str(&format!(
        "{:<29}{}\n",
        "Orphaned Resources:",
        orphaned_resources(p)
    ));
    out
}

fn list_or_dash(l: &Option<Vec<String>>) -> String {
    match l.as_deref() {
        None | Some([]) => "-".to_string(),
        Some(v) => v.join(","),
    }
}

fn enabled(b: Option<bool>) -> &'static str {
    if b == Some(true) {
        "Enabled"
    } else {
        "Disabled"
    }
}

/// The `proj windows list` table; `statuses[i]` is the STATUS of `windows[i]` (`Active`,
/// `Inactive`, or `Invalid` for a window that cannot be evaluated). Every cell is
/// tab-terminated in Argo, so the last column is padded too.
pub fn windows_table(windows: &[SyncWindow], statuses: &[&str]) -> String {
    let mut t = Table::new();
    t.line(
        "ID\tSTATUS\tKIND\tSCHEDULE\tDURATION\tAPPLICATIONS\tNAMESPACES\tCLUSTERS\t\
         MANUALSYNC\tSYNCOVERRUN\tTIMEZONE\tUSEANDOPERATOR\t",
    );
    for (i, (w, status)) in windows.iter().zip(statuses).enumerate() {
        t.row(&[
            i.to_string(),
            status.to_string(),
            w.kind.clone().unwrap_or_default(),
            w.schedule.clone().unwrap_or_default(),
            w.duration.clone().unwrap_or_default(),
            list_or_dash(&w.applications),
            list_or_dash(&w.namespaces),
            list_or_dash(&w.clusters),
            enabled(w.manual_sync).to_string(),
            enabled(w.sync_overrun).to_string(),
            w.time_zone.clone().unwrap_or_default(),
            enabled(w.and_operator).to_string(),
            String::new(),
        ]);
    }
    t.render()
}

/// Argo's `listGitGpgPolicies`: `ID GPG-MODE GPG-KEYS REPO-URLS`, `<none>` for what is unset.
pub fn integrity_table(policies: &[SourceIntegrityGitPolicy]) -> String {
    let mut t = Table::new();
    t.line("ID\tGPG-MODE\tGPG-KEYS\tREPO-URLS");
    let or_none = |v: Vec<&str>| {
        if v.is_empty() {
            "<none>".to_string()
        } else {
            v.join(", ")
        }
    };
    for (i, p) in policies.iter().enumerate() {
        let (mode, keys) = match &p.gpg {
            Some(g) => (
                g.mode.clone(),
                or_none(g.keys.iter().map(String::as_str).collect()),
            ),
            None => ("<none>".to_string(), "<none>".to_string()),
        };
        let urls = or_none(p.repos.iter().map(|r| r.url.as_str()).collect());
        t.row(&[i.to_string(), mode, keys, urls]);
    }
    t.render()
}
