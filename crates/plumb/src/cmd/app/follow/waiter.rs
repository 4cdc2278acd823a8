//! What `app wait` and `app sync` wait for, as a state machine fed with every version of the
//! Application the watch delivers (Argo's `waitOnApplicationStatus` and `checkResourceStatus`,
//! `cmd/argocd/commands/app.go`). [`Tracker::step`] decides, for one observed Application,
//! whether the conditions are met, which progress rows to print, or whether health turned
//! Degraded under `--health`; the command drives it and owns the clock and the output.

use std::collections::BTreeMap;

use plumb_model::application::Application;

use crate::cmd::app::flags::resource_filter::{ResourceSelector, include};
use crate::output::rows::{ResourceRow, resource_rows};

/// The conditions to wait for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchFor {
    /// Sync status `Synced`.
    pub sync: bool,
    /// Health `Healthy` (OR'ed with the other health flags).
    pub health: bool,
    /// No operation requested or running (and one reconcile after it finished).
    pub operation: bool,
    /// Health `Suspended`.
    pub suspended: bool,
    /// Health `Degraded`.
    pub degraded: bool,
}

impl WatchFor {
    /// No condition given means sync, health and operation (Argo's default).
    pub fn or_default(self) -> Self {
        if self == Self::default() {
            Self {
                sync: true,
                health: true,
                operation: true,
                ..Self::default()
            }
        } else {
            self
        }
    }

    /// Argo's `checkResourceStatus` for one health/sync pair; `operation_requested` is whether
    /// `.operation` is set.
    pub fn check(&self, health: &str, sync: &str, operation_requested: bool) -> bool {
        let health_checked = self.health || self.suspended || self.degraded;
        let health_ok = !health_checked
            || (self.health && health == "Healthy")
            || (self.suspended && health == "Suspended")
            || (self.degraded && health == "Degraded");
        let synced = !self.sync || sync == "Synced";
        let operational = !self.operation || !operation_requested;
        health_ok && synced && operational
    }
}

fn is_dry_run(app: &Application) -> bool {
    app.operation
        .as_ref()
        .or_else(|| {
            app.status
                .as_ref()
                .and_then(|s| s.operation_state.as_ref())
                .map(|o| &o.operation)
        })
        .and_then(|o| o.sync.as_ref())
        .and_then(|s| s.dry_run)
        == Some(true)
}

/// Whether an operation is in progress, as Argo computes it: requested (`.operation` set), or
/// not finished, or finished (not a dry run) with no reconcile since it finished — the sync
/// status lags behind an operation until the controller compared once more.
pub fn operation_in_progress(app: &Application) -> bool {
    if app.operation.is_some() {
        return true;
    }
    let Some(status) = app.status.as_ref() else {
        return false;
    };
    let Some(state) = status.operation_state.as_ref() else {
        return false;
    };
    let Some(finished) = state.finished_at.as_deref() else {
        return true;
    };
    if is_dry_run(app) {
        return false;
    }
    let finished = crate::output::timefmt::parse(finished);
    let reconciled = status
        .reconciled_at
        .as_deref()
        .and_then(crate::output::timefmt::parse);
    match (reconciled, finished) {
        (None, _) => true,
        (Some(r), Some(f)) => r < f,
        (Some(_), None) => false,
    }
}

/// What one observation of the Application means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The conditions are met.
    Done,
    /// Not yet; these resources changed since the last observation (possibly none).
    Progress(Vec<ResourceRow>),
    /// Waiting on health and a resource turned Degraded: fail fast with this message.
    Degraded(String),
}

/// Remembers each resource's last printed state.
#[derive(Debug, Clone)]
pub struct Tracker {
    watch: WatchFor,
    app_name: String,
    selected: Vec<ResourceSelector>,
    seen: BTreeMap<String, ResourceRow>,
}

impl Tracker {
    /// A tracker for `app_name` (as the user typed it, for messages).
    pub fn new(watch: WatchFor, app_name: &str, selected: Vec<ResourceSelector>) -> Self {
        Self {
            watch: watch.or_default(),
            app_name: app_name.to_string(),
            selected,
            seen: BTreeMap::new(),
        }
    }

    /// The conditions waited for.
    pub fn watch(&self) -> WatchFor {
        self.watch
    }

    fn rows(&self, app: &Application) -> Vec<ResourceRow> {
        resource_rows(app)
            .into_iter()
            .filter(|r| {
                self.selected.is_empty()
                    || include(&self.selected, &r.group, &r.kind, &r.namespace, &r.name)
            })
            .collect()
    }

    /// Whether the conditions hold for this Application (no state change).
    pub fn satisfied(&self, app: &Application) -> bool {
        let requested = app.operation.is_some();
        let ready = if self.selected.is_empty() {
            let health = crate::output::wide::health_code(app);
            let sync = app
                .status
                .as_ref()
                .and_then(|s| s.sync.as_ref())
                .map(|s| s.status.to_string())
                .unwrap_or_default();
            self.watch.check(&health, &sync, requested)
        } else {
            self.rows(app)
                .iter()
                .all(|r| self.watch.check(&r.health, &r.status, requested))
        };
        ready && (!self.watch.operation || !operation_in_progress(app))
    }

    /// Argo's `groupResourceStates`: one row per resource key, in the order of the rows, a
    /// resource listed twice (a hook run in two phases) merged into its first row.
    fn grouped(&self, app: &Application) -> Vec<ResourceRow> {
        let mut rows: Vec<ResourceRow> = Vec::new();
        let mut index = BTreeMap::new();
        for row in self.rows(app) {
            match index.get(&row.key()) {
                Some(&i) => {
                    fill(&mut rows[i], &row);
                }
                None => {
                    index.insert(row.key(), rows.len());
                    rows.push(row);
                }
            }
        }
        rows
    }

    /// Observes one version of the Application.
    pub fn step(&mut self, app: &Application) -> Step {
        if self.satisfied(app) {
            return Step::Done;
        }
        let mut changed = Vec::new();
        for row in self.grouped(app) {
            let key = row.key();
            match self.seen.get_mut(&key) {
                Some(prev) => {
                    if self.watch.health
                        && prev.health != "Unknown"
                        && prev.health != "Degraded"
                        && row.health == "Degraded"
                    {
                        return Step::Degraded(format!(
                            "application '{}' health state has transitioned from {} to Degraded",
                            self.app_name, prev.health
                        ));
                    }
                    if merge(prev, &row) {
                        changed.push(prev.clone());
                    }
                }
                None => {
                    self.seen.insert(key, row.clone());
                    changed.push(row);
                }
            }
        }
        Step::Progress(changed)
    }
}

// Argo's `resourceState.Merge` as `groupResourceStates` uses it: every field only ever changes
// to a non-blank value.
fn fill(prev: &mut ResourceRow, new: &ResourceRow) {
    for (cur, next) in [
        (&mut prev.status, &new.status),
        (&mut prev.health, &new.health),
        (&mut prev.hook, &new.hook),
        (&mut prev.message, &new.message),
    ] {
        if !next.is_empty() {
            cur.clone_from(next);
        }
    }
}

// Argo's `resourceState.Merge`: status, health and hook only ever change to a non-blank value.
// The message follows the resource (it may clear), so that a row for a rollout that became
// Healthy no longer repeats "Waiting for rollout to finish", as in Argo's documented output.
fn merge(prev: &mut ResourceRow, new: &ResourceRow) -> bool {
    let mut updated = false;
    for (cur, next) in [
        (&mut prev.status, &new.status),
        (&mut prev.health, &new.health),
        (&mut prev.hook, &new.hook),
    ] {
        if !next.is_empty() && cur != next {
            cur.clone_from(next);
            updated = true;
        }
    }
    if prev.message != new.message {
        prev.message.clone_from(&new.message);
        updated = true;
    }
    updated
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn app(extra: Value) -> Application {
        let mut base = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "targetRevision": "v1.4.0", "path": "k8s"}},
        });
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    fn status(sync: &str, health: &str, deploy_health: &str) -> Value {
        json!({
            "sync": {"status": sync, "revision": "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e"},
            "health": {"status": health},
            "reconciledAt": "2026-07-20T10:15:45Z",
            "resources": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "payments", "name": "payments-api",
                 "status": sync, "health": {"status": deploy_health}},
                {"version": "v1", "kind": "Service", "namespace": "payments", "name": "payments-api", "status": "Synced", "health": {"status": "Healthy"}}
            ]
        })
    }

    #[test]
    fn no_flags_means_sync_health_operation() {
        let w = WatchFor::default().or_default();
        assert!(w.sync && w.health && w.operation && !w.suspended && !w.degraded);
        let only = WatchFor {
            suspended: true,
            ..Default::default()
        }
        .or_default();
        assert!(!only.sync && only.suspended);
        assert!(only.check("Suspended", "OutOfSync", true));
        let hd = WatchFor {
            health: true,
            degraded: true,
            ..Default::default()
        };
        assert!(
            hd.check("Degraded", "", false)
                && hd.check("Healthy", "", false)
                && !hd.check("Progressing", "", false)
        );
    }

    #[test]
    fn operation_in_progress_follows_argo() {
        assert!(!operation_in_progress(&app(
            json!({"status": status("Synced", "Healthy", "Healthy")})
        )));
        assert!(operation_in_progress(&app(
            json!({"operation": {"sync": {}}})
        )));
        let mut st = status("Synced", "Healthy", "Healthy");
        st["operationState"] = json!({"operation": {"sync": {}}, "phase": "Running", "startedAt": "2026-07-20T10:15:32Z"});
        assert!(operation_in_progress(&app(json!({"status": st.clone()}))));
        // Finished after the last reconcile: wait for one more comparison.
        st["operationState"]["phase"] = json!("Succeeded");
        st["operationState"]["finishedAt"] = json!("2026-07-20T10:15:50Z");
        assert!(operation_in_progress(&app(json!({"status": st.clone()}))));
        st["reconciledAt"] = json!("2026-07-20T10:15:51Z");
        assert!(!operation_in_progress(&app(json!({"status": st.clone()}))));
        // A dry run does not change the sync status: no reconcile needed.
        st["reconciledAt"] = json!("2026-07-20T10:15:40Z");
        st["operationState"]["operation"] = json!({"sync": {"dryRun": true}});
        assert!(!operation_in_progress(&app(json!({"status": st}))));
    }

    #[test]
    fn already_satisfied_is_done_at_once() {
        let mut t = Tracker::new(WatchFor::default(), "payments-api", vec![]);
        assert_eq!(
            t.step(&app(
                json!({"status": status("Synced", "Healthy", "Healthy")})
            )),
            Step::Done
        );
    }

    #[test]
    fn rows_print_on_change_only_and_degraded_fails_fast_under_health() {
        let mut t = Tracker::new(
            WatchFor {
                health: true,
                ..Default::default()
            },
            "payments-api",
            vec![],
        );
        let Step::Progress(first) = t.step(&app(
            json!({"status": status("Synced", "Progressing", "Progressing")}),
        )) else {
            panic!()
        };
        assert_eq!(first.len(), 2);
        let Step::Progress(same) = t.step(&app(
            json!({"status": status("Synced", "Progressing", "Progressing")}),
        )) else {
            panic!()
        };
        assert!(same.is_empty());
        assert_eq!(
            t.step(&app(json!({"status": status("Synced", "Degraded", "Degraded")}))),
            Step::Degraded("application 'payments-api' health state has transitioned from Progressing to Degraded".into())
        );
        // Without --health, Degraded is just another row.
        let mut s = Tracker::new(
            WatchFor {
                sync: true,
                ..Default::default()
            },
            "payments-api",
            vec![],
        );
        s.step(&app(
            json!({"status": status("OutOfSync", "Progressing", "Progressing")}),
        ));
        let Step::Progress(rows) = s.step(&app(
            json!({"status": status("OutOfSync", "Degraded", "Degraded")}),
        )) else {
            panic!()
        };
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].health, "Degraded");
    }

    fn rows_of(step: Step) -> Vec<[String; 5]> {
        let Step::Progress(rows) = step else {
            panic!("{step:?}")
        };
        rows.into_iter()
            .map(|r| [r.kind, r.name, r.status, r.hook, r.message])
            .collect()
    }

    fn row(kind: &str, name: &str, status: &str, hook: &str, message: &str) -> [String; 5] {
        [kind, name, status, hook, message].map(str::to_string)
    }

    /// A named hook run in two phases has two results with one key: Argo's
    /// `groupResourceStates` merges them into one row (the later result's fields win), printed
    /// once per change.
    #[test]
    fn a_hook_in_two_phases_is_one_row() {
        let mut st = status("OutOfSync", "Healthy", "Healthy");
        let job = |hook_type: &str, phase: &str, message: &str| {
            json!({"group": "batch", "version": "v1", "kind": "Job", "namespace": "payments", "name": "payments-notify",
                   "status": "Synced", "message": message, "hookType": hook_type, "hookPhase": phase, "syncPhase": hook_type})
        };
        st["operationState"] = json!({"operation": {"sync": {}}, "phase": "Running", "startedAt": "2026-07-20T10:15:32Z",
            "message": "waiting for completion of hook batch/Job/payments-notify",
            "syncResult": {"revision": "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e", "resources": [
                job("PreSync", "Running", "job.batch/payments-notify created")]}});
        let mut t = Tracker::new(
            WatchFor {
                operation: true,
                ..Default::default()
            },
            "payments-api",
            vec![],
        );
        assert_eq!(
            rows_of(t.step(&app(json!({"status": st.clone()})))),
            [
                row(
                    "Job",
                    "payments-notify",
                    "Running",
                    "PreSync",
                    "job.batch/payments-notify created"
                ),
                row("Service", "payments-api", "Synced", "", ""),
                row("Deployment", "payments-api", "OutOfSync", "", ""),
            ]
        );
        st["operationState"]["syncResult"]["resources"] = json!([
            job(
                "PreSync",
                "Succeeded",
                "Reached expected number of succeeded pods"
            ),
            job("PostSync", "Running", "job.batch/payments-notify created"),
        ]);
        assert_eq!(
            rows_of(t.step(&app(json!({"status": st.clone()})))),
            [row(
                "Job",
                "payments-notify",
                "Running",
                "PostSync",
                "job.batch/payments-notify created"
            )]
        );
        // The same results again print nothing; the second run finishing prints the row once.
        assert!(rows_of(t.step(&app(json!({"status": st.clone()})))).is_empty());
        st["operationState"]["syncResult"]["resources"][1] = job(
            "PostSync",
            "Succeeded",
            "Reached expected number of succeeded pods",
        );
        assert_eq!(
            rows_of(t.step(&app(json!({"status": st})))),
            [row(
                "Job",
                "payments-notify",
                "Succeeded",
                "PostSync",
                "Reached expected number of succeeded pods"
            )]
        );
    }

    #[test]
    fn selected_resources_decide_alone() {
        let sel = vec![":Service:payments-api".parse().unwrap()];
        let mut t = Tracker::new(
            WatchFor {
                health: true,
                sync: true,
                ..Default::default()
            },
            "payments-api",
            sel,
        );
        assert_eq!(
            t.step(&app(
                json!({"status": status("OutOfSync", "Progressing", "Progressing")})
            )),
            Step::Done
        );
    }
}
