//! `plumb proj windows add|delete|update|enable-manual-sync|disable-manual-sync|
//! enable-sync-overrun|disable-sync-overrun`: Argo's verbs (`projectwindows.go`,
//! `AppProjectSpec.AddWindow`, `DeleteWindow`, `InlineSyncWindow.Update`). Windows are named by
//! their position in the list (`windows list` shows it as ID).

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use plumb_model::application::SyncWindow;
use serde_json::{Value, json};

use super::update::{Change, spec_list};

/// `plumb proj windows add PROJECT`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Project name.
    pub project: String,
    /// Sync window kind, either allow or deny.
    #[arg(short = 'k', long, default_value = "")]
    pub kind: String,
    /// Sync window schedule in cron format. (e.g. --schedule "0 22 * * *")
    #[arg(long, default_value = "")]
    pub schedule: String,
    /// Sync window duration. (e.g. --duration 1h)
    #[arg(long, default_value = "")]
    pub duration: String,
    /// Applications that the schedule will be applied to. Comma separated, wildcards supported.
    #[arg(long, value_delimiter = ',')]
    pub applications: Vec<String>,
    /// Namespaces that the schedule will be applied to. Comma separated, wildcards supported.
    #[arg(long, value_delimiter = ',')]
    pub namespaces: Vec<String>,
    /// Clusters that the schedule will be applied to. Comma separated, wildcards supported.
    #[arg(long, value_delimiter = ',')]
    pub clusters: Vec<String>,
    /// Allow manual syncs for both deny and allow windows.
    #[arg(long)]
    pub manual_sync: bool,
    /// Allow syncs to continue: for deny windows, syncs that started before the window; for
    /// allow windows, syncs that started during the window.
    #[arg(long)]
    pub sync_overrun: bool,
    /// Time zone of the sync window.
    #[arg(long, default_value = "UTC")]
    pub time_zone: String,
    /// Use AND operator for matching applications, namespaces and clusters instead of the
    /// default OR operator.
    #[arg(long)]
    pub use_and_operator: bool,
    /// Sync window description.
    #[arg(long, default_value = "")]
    pub description: String,
}

/// `plumb proj windows update PROJECT ID`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Project name.
    pub project: String,
    /// Window ID (`windows list`).
    pub id: String,
    /// Sync window schedule in cron format.
    #[arg(long, default_value = "")]
    pub schedule: String,
    /// Sync window duration.
    #[arg(long, default_value = "")]
    pub duration: String,
    /// Applications that the schedule will be applied to.
    #[arg(long, value_delimiter = ',')]
    pub applications: Vec<String>,
    /// Namespaces that the schedule will be applied to.
    #[arg(long, value_delimiter = ',')]
    pub namespaces: Vec<String>,
    /// Clusters that the schedule will be applied to.
    #[arg(long, value_delimiter = ',')]
    pub clusters: Vec<String>,
    /// Time zone of the sync window. (e.g. --time-zone "America/New_York")
    #[arg(long, default_value = "UTC")]
    pub time_zone: String,
    /// Sync window description.
    #[arg(long, default_value = "")]
    pub description: String,
}

/// `PROJECT ID`.
#[derive(Debug, Args)]
pub struct IdArgs {
    /// Project name.
    pub project: String,
    /// Window ID (`windows list`).
    pub id: String,
}

/// Go's `strconv.Atoi`.
pub fn window_id(id: &str) -> Result<usize> {
    id.parse()
        .map_err(|_| anyhow!("strconv.Atoi: parsing {id:?}: invalid syntax"))
}

fn check(window: &Value) -> Result<()> {
    let typed: SyncWindow = serde_json::from_value(window.clone()).context("reading the window")?;
    plumb_policy::windows::validate(&typed, 0)?;
    Ok(())
}

/// Appends a window.
pub fn add(project: &mut Value, a: &AddArgs) -> Result<Change> {
    if a.kind.is_empty() || a.schedule.is_empty() || a.duration.is_empty() {
        bail!(
            "cannot create window: require kind, schedule, duration and one or more of applications, namespaces and clusters"
        );
    }
    let mut w = json!({"kind": a.kind, "schedule": a.schedule, "duration": a.duration,
                       "timeZone": a.time_zone});
    for (field, list) in [
        ("applications", &a.applications),
        ("namespaces", &a.namespaces),
        ("clusters", &a.clusters),
    ] {
        if !list.is_empty() {
            w[field] = json!(list);
        }
    }
    for (field, on) in [
        ("manualSync", a.manual_sync),
        ("andOperator", a.use_and_operator),
        ("syncOverrun", a.sync_overrun),
    ] {
        if on {
            w[field] = json!(true);
        }
    }
    if !a.description.is_empty() {
        w["description"] = json!(a.description);
    }
    check(&w)?;
    spec_list(project, "syncWindows").push(w);
    Ok(Change::Write)
}

/// Removes window `id`.
pub fn delete(project: &mut Value, id: usize) -> Result<Change> {
    let list = spec_list(project, "syncWindows");
    if id >= list.len() {
        bail!("window with id '{id}' not found");
    }
    list.remove(id);
    Ok(Change::Write)
}

/// Changes the given fields of window `id` (and always its time zone, as Argo does).
pub fn update(project: &mut Value, a: &UpdateArgs) -> Result<Change> {
    let id = window_id(&a.id)?;
    let list = spec_list(project, "syncWindows");
    let Some(w) = list.get_mut(id) else {
        // Argo writes the project unchanged when no window has that ID.
        return Ok(Change::Keep);
    };
    if a.schedule.is_empty()
        && a.duration.is_empty()
        && a.applications.is_empty()
        && a.namespaces.is_empty()
        && a.clusters.is_empty()
        && a.description.is_empty()
    {
        bail!(
            "cannot update: require one or more of schedule, duration, application, namespace, cluster or description"
        );
    }
    for (field, v) in [
        ("schedule", &a.schedule),
        ("duration", &a.duration),
        ("description", &a.description),
    ] {
        if !v.is_empty() {
            w[field] = json!(v);
        }
    }
    for (field, list) in [
        ("applications", &a.applications),
        ("namespaces", &a.namespaces),
        ("clusters", &a.clusters),
    ] {
        if !list.is_empty() {
            w[field] = json!(list);
        }
    }
    w["timeZone"] = json!(if a.time_zone.is_empty() {
        "UTC"
    } else {
        &a.time_zone
    });
    Ok(Change::Write)
}

/// Sets or clears a boolean field (`manualSync`, `syncOverrun`) of window `id`.
pub fn toggle(project: &mut Value, id: usize, field: &str, on: bool) -> Result<Change> {
    let list = spec_list(project, "syncWindows");
    let Some(w) = list.get_mut(id).and_then(Value::as_object_mut) else {
        bail!("window with id '{id}' not found");
    };
    if on {
        w.insert(field.to_string(), json!(true));
    } else {
        w.remove(field);
    }
    Ok(Change::Write)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: AddArgs,
    }

    #[test]
    fn add_update_toggle_delete() {
        let cli = Cli::try_parse_from([
            "add",
            "p",
            "--kind",
            "deny",
            "--schedule",
            "0 22 * * *",
            "--duration",
            "1h",
            "--applications",
            "web,api",
            "--manual-sync",
        ])
        .unwrap();
        let mut p = json!({"spec": {}});
        add(&mut p, &cli.args).unwrap();
        assert_eq!(
            p["spec"]["syncWindows"][0],
            json!({"kind": "deny", "schedule": "0 22 * * *", "duration": "1h", "timeZone": "UTC",
                   "applications": ["web", "api"], "manualSync": true})
        );
        toggle(&mut p, 0, "manualSync", false).unwrap();
        assert!(p["spec"]["syncWindows"][0].get("manualSync").is_none());
        assert_eq!(
            toggle(&mut p, 3, "manualSync", true)
                .unwrap_err()
                .to_string(),
            "window with id '3' not found"
        );
        let mut bad = Cli::try_parse_from([
            "add",
            "p",
            "-k",
            "allow",
            "--schedule",
            "0 22 * *",
            "--duration",
            "1h",
        ])
        .unwrap()
        .args;
        assert!(
            add(&mut p, &bad)
                .unwrap_err()
                .to_string()
                .contains("cannot parse schedule '0 22 * *'")
        );
        bad.kind.clear();
        assert!(
            add(&mut p, &bad)
                .unwrap_err()
                .to_string()
                .starts_with("cannot create window")
        );
        let up = UpdateArgs {
            project: "p".into(),
            id: "0".into(),
            schedule: "0 6 * * *".into(),
            duration: String::new(),
            applications: vec![],
            namespaces: vec![],
            clusters: vec![],
            time_zone: "Europe/Paris".into(),
            description: String::new(),
        };
        update(&mut p, &up).unwrap();
        assert_eq!(p["spec"]["syncWindows"][0]["schedule"], "0 6 * * *");
        assert_eq!(p["spec"]["syncWindows"][0]["timeZone"], "Europe/Paris");
        delete(&mut p, 0).unwrap();
        assert_eq!(
            delete(&mut p, 0).unwrap_err().to_string(),
            "window with id '0' not found"
        );
        assert!(window_id("x").is_err());
    }
}
