//! The default (`-o wide`) text layouts of Argo CD's `argocd app` commands
//! (`cmd/argocd/commands/app.go`): the summary header (`%-20s%s` lines), the CONDITION table,
//! the operation block, the resource table, the `app list` table and the `app wait`/`app sync`
//! progress rows.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use plumb_model::application::{Application, OperationState, SyncStatusCode};

use super::rows::ResourceRow;
use super::tabwriter::{Table, right};
use super::timefmt;

/// What `Sync Policy:` says for a manual Application. Argo 3.x prints `Manual`; Argo's documented
/// transcripts (shared/mission) print `<none>`, the 2.x text, and those are the layouts Plumb
/// matches.
pub const MANUAL_SYNC_POLICY: &str = "<none>";

/// The sync-window part of the header, computed by `cmd::app::windows`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSummary {
    /// `Sync Allowed`, `Manual Allowed` or `Sync Denied`.
    pub status: String,
    /// `kind:schedule:duration` of every window assigned to the Application.
    pub assigned: Vec<String>,
}

impl Default for WindowSummary {
    fn default() -> Self {
        Self {
            status: "Sync Allowed".to_string(),
            assigned: Vec::new(),
        }
    }
}

/// Inputs of the header that do not come from the Application itself.
#[derive(Debug, Clone, Default)]
pub struct HeaderContext {
    /// The UI URL of the Application, when the settings name one (`url` in argocd-cm).
    pub url: Option<String>,
    /// Sync windows; `None` prints no SyncWindow line (Argo's `app wait` passes no windows and
    /// prints `Sync Allowed`, so callers normally pass the default).
    pub windows: WindowSummary,
}

fn kv(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("{label:<20}{value}\n"));
}

/// `Server:` value: the destination server, else its name (Argo's `getServer`).
pub fn server(app: &Application) -> String {
    let dest = &app.spec.destination;
    match dest.server.as_deref() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => dest.name.clone().unwrap_or_default(),
    }
}

/// `<namespace>/<name>` (Argo's `QualifiedName`).
pub fn qualified_name(app: &Application) -> String {
    if app.namespace().is_empty() {
        app.name().to_string()
    } else {
        format!("{}/{}", app.namespace(), app.name())
    }
}

fn first_source_target(app: &Application) -> String {
    app.sources()
        .first()
        .and_then(|s| s.target_revision.clone())
        .unwrap_or_default()
}

/// Git's `IsCommitSHA` / `IsTruncatedCommitSHA`: 7 to 40 hex digits.
fn looks_like_sha(rev: &str) -> bool {
    (7..=40).contains(&rev.len()) && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `Synced to v1.4.0 (9f3c1ad)` / `OutOfSync from v1.4.0 (9f3c1ad)` / `Unknown`.
pub fn sync_status_text(app: &Application) -> String {
    let target = first_source_target(app);
    let sync = app.status.as_ref().and_then(|s| s.sync.as_ref());
    let mut text = sync.map(|s| s.status.to_string()).unwrap_or_default();
    match sync.map(|s| s.status) {
        Some(SyncStatusCode::Synced) => text.push_str(&format!(" to {target}")),
        Some(SyncStatusCode::OutOfSync) => text.push_str(&format!(" from {target}")),
        _ => {}
    }
    let revision = sync.and_then(|s| s.revision.as_deref()).unwrap_or_default();
    if !looks_like_sha(&target) && revision.len() > 7 {
        text.push_str(&format!(" ({})", &revision[..7]));
    }
    text
}

/// The app-level health code (empty when unknown yet).
pub fn health_code(app: &Application) -> String {
    app.status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.status.clone())
        .unwrap_or_default()
}

/// `Automated`, `Automated (Prune)` or the manual text.
pub fn sync_policy_text(app: &Application) -> String {
    match &app.spec.sync_policy {
        Some(p) if p.is_automated() => {
            let prune = p.automated.as_ref().and_then(|a| a.prune) == Some(true);
            if prune {
                "Automated (Prune)"
            } else {
                "Automated"
            }
            .to_string()
        }
        _ => MANUAL_SYNC_POLICY.to_string(),
    }
}

/// Argo's `printAppSummaryTable`.
pub fn summary(app: &Application, ctx: &HeaderContext) -> String {
    let mut out = String::new();
    kv(&mut out, "Name:", &qualified_name(app));
    kv(&mut out, "Project:", &app.spec.project);
    kv(&mut out, "Server:", &server(app));
    kv(
        &mut out,
        "Namespace:",
        app.spec
            .destination
            .namespace
            .as_deref()
            .unwrap_or_default(),
    );
    if let Some(url) = &ctx.url {
        kv(&mut out, "URL:", url);
    }
    let multi = app.spec.sources.as_ref().is_some_and(|s| !s.is_empty());
    out.push_str(if multi { "Sources:\n" } else { "Source:\n" });
    for source in app.sources() {
        kv(&mut out, "- Repo:", &source.repo_url);
        kv(
            &mut out,
            "  Target:",
            source.target_revision.as_deref().unwrap_or_default(),
        );
        if let Some(path) = source.path.as_deref().filter(|p| !p.is_empty()) {
            kv(&mut out, "  Path:", path);
        }
        if let Some(r) = source.reference.as_deref().filter(|r| !r.is_empty()) {
            kv(&mut out, "  Ref:", r);
        }
        if let Some(files) = source
            .helm
            .as_ref()
            .and_then(|h| h.value_files.as_ref())
            .filter(|f| !f.is_empty())
        {
            kv(&mut out, "  Helm Values:", &files.join(","));
        }
        if let Some(prefix) = source
            .kustomize
            .as_ref()
            .and_then(|k| k.name_prefix.as_deref())
            .filter(|p| !p.is_empty())
        {
            kv(&mut out, "  Name Prefix:", prefix);
        }
    }
    kv(&mut out, "SyncWindow:", &ctx.windows.status);
    if !ctx.windows.assigned.is_empty() {
        kv(
            &mut out,
            "Assigned Windows:",
            &ctx.windows.assigned.join(","),
        );
    }
    kv(&mut out, "Sync Policy:", &sync_policy_text(app));
    kv(&mut out, "Sync Status:", &sync_status_text(app));
    kv(&mut out, "Health Status:", &health_code(app));
    out
}

/// The CONDITION table (empty string when there are no conditions).
pub fn conditions(app: &Application, tz: &TimeZone) -> String {
    let conditions = app
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .filter(|c| !c.is_empty());
    let Some(conditions) = conditions else {
        return String::new();
    };
    let mut t = Table::new();
    t.line("CONDITION\tMESSAGE\tLAST TRANSITION");
    for c in conditions {
        t.row(&[
            c.type_.as_str(),
            c.message.as_str(),
            timefmt::go_time(c.last_transition_time.as_deref(), tz).as_str(),
        ]);
    }
    t.render()
}

/// Argo's `printOperationResult`; `now` gives the duration of a running operation.
pub fn operation(state: &OperationState, tz: &TimeZone, now: Timestamp) -> String {
    let mut out = String::new();
    if let Some(result) = &state.sync_result {
        kv(&mut out, "Operation:", "Sync");
        match (&result.sources, &result.revisions) {
            (Some(_), Some(revisions)) => kv(&mut out, "Sync Revision:", &revisions.join(", ")),
            _ => kv(&mut out, "Sync Revision:", &result.revision),
        }
    }
    kv(&mut out, "Phase:", state.phase.as_str());
    kv(
        &mut out,
        "Start:",
        &timefmt::go_time(Some(&state.started_at), tz),
    );
    kv(
        &mut out,
        "Finished:",
        &timefmt::go_time(state.finished_at.as_deref(), tz),
    );
    let start = timefmt::parse(&state.started_at);
    let end = state.finished_at.as_deref().and_then(timefmt::parse);
    let seconds = match (start, end) {
        (Some(s), Some(e)) => timefmt::seconds_between(s, e),
        (Some(s), None) => timefmt::seconds_between(s, now),
        _ => 0,
    };
    kv(&mut out, "Duration:", &timefmt::go_duration(seconds));
    if let Some(message) = state.message.as_deref().filter(|m| !m.is_empty()) {
        kv(&mut out, "Message:", message);
    }
    out
}

/// The resource table `GROUP KIND NAMESPACE NAME STATUS HEALTH HOOK MESSAGE`.
pub fn resources(rows: &[ResourceRow]) -> String {
    let mut t = Table::new();
    t.line("GROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tHOOK\tMESSAGE");
    for r in rows {
        t.row(&[
            &r.group,
            &r.kind,
            &r.namespace,
            &r.name,
            &r.status,
            &r.health,
            &r.hook,
            &r.message,
        ]);
    }
    t.render()
}

/// `SYNCPOLICY` of `app list`: `Auto`, `Auto-Prune` or the manual text.
pub fn list_sync_policy(app: &Application) -> String {
    match &app.spec.sync_policy {
        Some(p) if p.is_automated() => {
            let prune = p.automated.as_ref().and_then(|a| a.prune) == Some(true);
            if prune { "Auto-Prune" } else { "Auto" }.to_string()
        }
        _ => MANUAL_SYNC_POLICY.to_string(),
    }
}

/// `CONDITIONS` of `app list`: sorted condition types, `Type(n)` when repeated, else `<none>`.
pub fn conditions_summary(app: &Application) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for c in app
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
    {
        *counts.entry(c.type_.as_str()).or_default() += 1;
    }
    if counts.is_empty() {
        return "<none>".to_string();
    }
    let items: Vec<String> = counts
        .into_iter()
        .map(|(t, n)| {
            if n > 1 {
                format!("{t}({n})")
            } else {
                t.to_string()
            }
        })
        .collect();
    items.join(",")
}

/// The `app list` table; `wide` adds `REPO PATH TARGET`.
pub fn app_list(apps: &[Application], wide: bool) -> String {
    let mut t = Table::new();
    let mut header = vec![
        "NAME",
        "CLUSTER",
        "NAMESPACE",
        "PROJECT",
        "STATUS",
        "HEALTH",
        "SYNCPOLICY",
        "CONDITIONS",
    ];
    if wide {
        header.extend(["REPO", "PATH", "TARGET"]);
    }
    t.row(&header);
    for app in apps {
        let sync = app
            .status
            .as_ref()
            .and_then(|s| s.sync.as_ref())
            .map(|s| s.status.to_string())
            .unwrap_or_default();
        let mut cells = vec![
            qualified_name(app),
            server(app),
            app.spec.destination.namespace.clone().unwrap_or_default(),
            app.spec.project.clone(),
            sync,
            health_code(app),
            list_sync_policy(app),
            conditions_summary(app),
        ];
        if wide {
            let source = app.sources().first().copied().cloned().unwrap_or_default();
            cells.push(source.repo_url);
            cells.push(source.path.unwrap_or_default());
            cells.push(source.target_revision.unwrap_or_default());
        }
        t.row(&cells);
    }
    t.render()
}

/// Argo's `waitFormatString` (`%s\t%5s\t%10s\t%10s\t%20s\t%8s\t%7s\t%10s\t%s\n`) as one line.
pub fn progress_line(timestamp: &str, r: &ResourceRow) -> String {
    progress_cells(
        timestamp,
        &r.group,
        &r.kind,
        &r.namespace,
        &r.name,
        &r.status,
        &r.health,
        &r.hook,
        &r.message,
    )
}

/// The header of the progress rows.
pub fn progress_header() -> String {
    progress_cells(
        "TIMESTAMP",
        "GROUP",
        "KIND",
        "NAMESPACE",
        "NAME",
        "STATUS",
        "HEALTH",
        "HOOK",
        "MESSAGE",
    )
}

#[allow(clippy::too_many_arguments)]
fn progress_cells(
    ts: &str,
    group: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    status: &str,
    health: &str,
    hook: &str,
    message: &str,
) -> String {
    format!(
        "{ts}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{message}",
        right(group, 5),
        right(kind, 10),
        right(namespace, 10),
        right(name, 20),
        right(status, 8),
        right(health, 7),
        right(hook, 10),
    )
}

/// A batch of progress lines, aligned together as Argo's tabwriter (minwidth 5, padding 2)
/// aligns the lines of one flush.
pub fn progress_block(lines: &[String]) -> String {
    let mut t = Table::with(5, 2);
    for l in lines {
        t.line(l);
    }
    t.render()
}
