//! The text layouts of Argo CD's `argocd appset` commands (`cmd/argocd/commands/
//! applicationset.go`): the list table, the summary of `get`, the CONDITION table; plus
//! Plumb's fleet diff (`appset diff`) and pending deletions.
//!
//! Argo prints two cells of the list with Go's `%s` of structs: SYNCPOLICY is the gogo-protobuf
//! `String()` of `*ApplicationSetSyncPolicy` (`nil` when unset) and CONDITIONS the true
//! conditions as `[{Type Message Time Status Reason}]`; both are reproduced as Argo prints them.

use jiff::tz::TimeZone;
use plumb_appset::api::FleetDiff;
use plumb_model::applicationset::{ApplicationSet, condition};
use serde_json::Value;

use super::tabwriter::Table;
use super::timefmt;

/// Argo's `QualifiedName`: `namespace/name`, or the name when there is no namespace.
pub fn qualified_name(set: &ApplicationSet) -> String {
    match set.namespace() {
        "" => set.name().to_string(),
        ns => format!("{ns}/{}", set.name()),
    }
}

fn template_spec(set: &ApplicationSet) -> &Value {
    &set.spec.template.spec
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The template's source as Argo's `GetSource` returns it: `source`, else the first of
/// `sources`, else nothing.
fn source(set: &ApplicationSet) -> Value {
    let spec = template_spec(set);
    match spec.get("source").filter(|s| !s.is_null()) {
        Some(s) => s.clone(),
        None => spec.pointer("/sources/0").cloned().unwrap_or_default(),
    }
}

/// SYNCPOLICY of the list: `*ApplicationSetSyncPolicy` through Go's `%s`.
pub fn sync_policy_cell(set: &ApplicationSet) -> String {
    let Some(p) = &set.spec.sync_policy else {
        return "nil".into();
    };
    let apps_sync = match p.applications_sync {
        Some(policy) => format!(
            "*{}",
            serde_json::to_value(policy)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
        None => "nil".into(),
    };
    format!(
        "&ApplicationSetSyncPolicy{{PreserveResourcesOnDeletion:{},ApplicationsSync:{apps_sync},}}",
        p.preserve_resources_on_deletion.unwrap_or(false)
    )
}

fn health(set: &ApplicationSet) -> String {
    set.status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.status.clone())
        .unwrap_or_default()
}

/// CONDITIONS of the list: the true conditions as Go prints a slice of structs.
pub fn conditions_cell(set: &ApplicationSet, tz: &TimeZone) -> String {
    let conditions = set.status.as_ref().and_then(|s| s.conditions.as_ref());
    let cells: Vec<String> = conditions
        .into_iter()
        .flatten()
        .filter(|c| c.status == condition::TRUE)
        .map(|c| {
            format!(
                "{{{} {} {} {} {}}}",
                c.r#type,
                c.message,
                timefmt::go_time(c.last_transition_time.as_deref(), tz),
                c.status,
                c.reason
            )
        })
        .collect();
    format!("[{}]", cells.join(" "))
}

/// Argo's `printApplicationSetTable` in its default (wide) form.
pub fn appset_table(sets: &[ApplicationSet], tz: &TimeZone) -> String {
    let mut t = Table::new();
    t.line("NAME\tPROJECT\tSYNCPOLICY\tHEALTH\tCONDITIONS\tREPO\tPATH\tTARGET");
    for set in sets {
        let src = source(set);
        t.row(&[
            qualified_name(set),
            text(template_spec(set), "/project").to_string(),
            sync_policy_cell(set),
            health(set),
            conditions_cell(set, tz),
            text(&src, "/repoURL").to_string(),
            text(&src, "/path").to_string(),
            text(&src, "/targetRevision").to_string(),
        ]);
    }
    t.render()
}

fn kv(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("{label:<20}{value}\n"));
}

/// Argo's `printAppSetSummaryTable`.
pub fn appset_summary(set: &ApplicationSet) -> String {
    let spec = template_spec(set);
    let mut out = String::new();
    kv(&mut out, "Name:", &qualified_name(set));
    kv(&mut out, "Project:", plumb_appset::api::project(set));
    let server = match text(spec, "/destination/server") {
        "" => text(spec, "/destination/name"),
        s => s,
    };
    kv(&mut out, "Server:", server);
    kv(&mut out, "Namespace:", text(spec, "/destination/namespace"));
    kv(&mut out, "Health Status:", &health(set));
    let sources: Vec<Value> = spec
        .get("sources")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .cloned()
        .unwrap_or_else(|| vec![source(set)]);
    out.push_str(
        if spec
            .get("sources")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty())
        {
            "Sources:\n"
        } else {
            "Source:\n"
        },
    );
    for src in &sources {
        kv(&mut out, "- Repo:", text(src, "/repoURL"));
        kv(&mut out, "  Target:", text(src, "/targetRevision"));
        for (label, pointer) in [("  Path:", "/path"), ("  Ref:", "/ref")] {
            if !text(src, pointer).is_empty() {
                kv(&mut out, label, text(src, pointer));
            }
        }
        if let Some(files) = src.pointer("/helm/valueFiles").and_then(Value::as_array)
            && !files.is_empty()
        {
            let files: Vec<&str> = files.iter().filter_map(Value::as_str).collect();
            kv(&mut out, "  Helm Values:", &files.join(","));
        }
        if !text(src, "/kustomize/namePrefix").is_empty() {
            kv(
                &mut out,
                "  Name Prefix:",
                text(src, "/kustomize/namePrefix"),
            );
        }
    }
    kv(&mut out, "SyncPolicy:", &template_sync_policy(spec));
    out
}

/// `SyncPolicy:` of the summary: the template's automated sync (Argo's
/// `IsAutomatedSyncEnabled`: `automated` set and not `enabled: false`).
fn template_sync_policy(spec: &Value) -> String {
    let automated = spec
        .pointer("/syncPolicy/automated")
        .filter(|a| a.is_object());
    match automated {
        Some(a) if a.get("enabled").and_then(Value::as_bool) != Some(false) => {
            if a.get("prune").and_then(Value::as_bool) == Some(true) {
                "Automated (Prune)".into()
            } else {
                "Automated".into()
            }
        }
        _ => "<none>".into(),
    }
}

/// Argo's `printAppSetConditions` (empty when there are none).
pub fn appset_conditions(set: &ApplicationSet, tz: &TimeZone) -> String {
    let conditions = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .filter(|c| !c.is_empty());
    let Some(conditions) = conditions else {
        return String::new();
    };
    let mut t = Table::new();
    t.line("CONDITION\tSTATUS\tMESSAGE\tLAST TRANSITION");
    for c in conditions {
        t.row(&[
            c.r#type.as_str(),
            c.status.as_str(),
            c.message.as_str(),
            timefmt::go_time(c.last_transition_time.as_deref(), tz).as_str(),
        ]);
    }
    t.render()
}

/// The deletions the brake holds (Plumb's): a line per Application and how to let them go.
pub fn pending_deletions(set: &ApplicationSet, pending: &[String]) -> String {
    if pending.is_empty() {
        return String::new();
    }
    let mut out = format!("Deletions held by the brake ({}):\n", pending.len());
    for name in pending {
        out.push_str(&format!("- {name}\n"));
    }
    out.push_str(&format!(
        "Let them go with: plumb appset confirm-deletion {} --all (or name them)\n",
        qualified_name(set)
    ));
    out
}

/// `plumb appset diff`'s text: a summary line, then each added, changed (its fields and a
/// normal diff of the YAML, as `plumb app diff` prints objects) and deleted Application.
pub fn fleet_diff(diff: &FleetDiff, namespace: &str) -> String {
    let mut out = format!(
        "{} to add, {} to change, {} to delete, {} unchanged\n",
        diff.added.len(),
        diff.changed.len(),
        diff.deleted.len(),
        diff.unchanged
    );
    let yaml = |v: &Value| plumb_yaml::to_yaml_string(v);
    for added in &diff.added {
        let name = text(added, "/metadata/name");
        out.push_str(&format!(
            "\n===== added: argoproj.io/Application {namespace}/{name} ======\n"
        ));
        out.push_str(&plumb_diff::normal_diff("", &yaml(added)));
    }
    for changed in &diff.changed {
        out.push_str(&format!(
            "\n===== changed: argoproj.io/Application {namespace}/{} ======\n",
            changed.name
        ));
        out.push_str(&format!("fields: {}\n", changed.fields.join(", ")));
        out.push_str(&plumb_diff::normal_diff(
            &yaml(&changed.live),
            &yaml(&changed.desired),
        ));
    }
    for name in &diff.deleted {
        out.push_str(&format!(
            "\n===== deleted: argoproj.io/Application {namespace}/{name} ======\n"
        ));
    }
    out
}
