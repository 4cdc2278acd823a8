//! Plumb's ApplicationSet controller against what Argo CD's real one did for the cases of
//! conformance/appset/ that need a controller (those argo_fixtures.rs skips): a second step
//! (`set-2.yaml`: the applications sync policies, two sets generating the same Application) or
//! a rollout strategy (RollingSync's `status.applicationStatus`).
//!
//! Each case runs in a fresh namespace with the controller in this process (as
//! tests/it/controller/ runs it, progressive syncs on and no refresh grace period, the flags the
//! recording gives Argo): `before.yaml` and `set.yaml` applied with kubectl, the state polled
//! until it is Argo's `argo.json` (bounded: on the deadline the last state is reported), then a
//! reconcile of each set started after that must leave it so; the same for `set-2.yaml` and `argo-2.json`. Both sides go
//! through conformance/appset/normalize.jq with the real `jq`, as the recording does; the
//! namespace is written `argocd` and the repository `@REPO@`, as in the fixtures.
//!
//! No application controller runs here; this test plays the part Argo's played while recording.
//! A deleted Application's resources finalizer is removed (nothing was synced). A RollingSync
//! reads the Applications' status, so for a case with a strategy also: every Application compared
//! (OutOfSync at the repository's revision) and refreshed when asked, a sync the rollout asked
//! for run (Synced, Progressing), then Healthy.
//!
//! Documented differences: `controller-differences` in the case, one a line,
//! `STEP<TAB>jq-path<TAB>reason` (STEP 1: argo.json, 2: argo-2.json); the path is deleted on
//! both sides before comparing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::agen_support::apply;
use crate::argo_fixtures::make_repo;
use crate::controller::support::{DEADLINE, Running, eventually};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/appset")
}

/// `(kind, name, spec.strategy present)` of each document of `text`.
fn sets_of(text: &str, file: &str) -> Vec<(String, bool)> {
    plumb_yaml::read_documents(text, file)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .into_iter()
        .filter(|d| d.value["kind"] == "ApplicationSet")
        .map(|d| {
            let name = d.value["metadata"]["name"].as_str().unwrap_or_default();
            (name.to_string(), !d.value["spec"]["strategy"].is_null())
        })
        .collect()
}

/// The cases that need the controller: the ones argo_fixtures.rs skips.
fn controller_cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    cases.sort();
    cases
        .into_iter()
        .filter(|c| c.join("argo.json").exists())
        .filter(|c| {
            let set = std::fs::read_to_string(c.join("set.yaml")).unwrap_or_default();
            c.join("set-2.yaml").exists() || sets_of(&set, "set.yaml").iter().any(|(_, s)| *s)
        })
        .collect()
}

/// Runs the real `jq` with `args`, `input` on its standard input; its output parsed.
fn jq(args: &[&str], input: &str) -> Value {
    let mut child = Command::new("jq")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jq runs (the recording's normaliser; install jq)");
    child
        .stdin
        .take()
        .expect("jq's stdin")
        .write_all(input.as_bytes())
        .expect("writing to jq");
    let out = child.wait_with_output().expect("jq finishes");
    assert!(
        out.status.success(),
        "jq {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("jq's output is JSON")
}

/// Documented differences of a step: the jq paths with their reasons.
fn differences(case: &Path, step: u8) -> Vec<String> {
    let text = std::fs::read_to_string(case.join("controller-differences")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert!(
                fields.len() == 3 && !fields[2].trim().is_empty(),
                "{}: `STEP<TAB>jq-path<TAB>reason` expected: {line}",
                case.display()
            );
            (fields[0] == step.to_string()).then(|| fields[1].to_string())
        })
        .collect()
}

/// `doc` without the documented paths.
fn without(doc: &Value, paths: &[String]) -> Value {
    paths.iter().fold(doc.clone(), |d, p| {
        jq(&[&format!("del({p})")], &d.to_string())
    })
}

/// One case's run: the controller, the names the fixtures use in its place.
struct Case {
    dir: PathBuf,
    r: Running,
    repo: String,
    revision: String,
    rollout: bool,
}

impl Case {
    fn fill(&self, text: &str) -> String {
        text.replace("@REPO@", &self.repo).replace(
            "namespace: argocd",
            &format!("namespace: {}", self.r.ns.name()),
        )
    }

    /// Plumb's state through normalize.jq, written as the fixtures are.
    async fn snapshot(&self, sets: &[String]) -> Value {
        let dir = tempfile::tempdir().expect("tempdir");
        let apps = json!({"items": self.r.app_list().await});
        let list = self.r.sets().list(&Default::default()).await.expect("sets");
        let appsets = json!({"items": list.items});
        std::fs::write(dir.path().join("apps.json"), apps.to_string()).expect("write");
        std::fs::write(dir.path().join("appsets.json"), appsets.to_string()).expect("write");
        let p = |f: &str| dir.path().join(f).display().to_string();
        let normalized = jq(
            &[
                "-n",
                "--argjson",
                "sets",
                &json!(sets).to_string(),
                "--slurpfile",
                "apps",
                &p("apps.json"),
                "--slurpfile",
                "appsets",
                &p("appsets.json"),
                "-f",
                &cases_dir().join("normalize.jq").display().to_string(),
            ],
            "",
        );
        let text = normalized
            .to_string()
            .replace(&self.repo, "@REPO@")
            .replace(self.r.ns.name(), "argocd");
        serde_json::from_str(&text).expect("JSON")
    }

    /// Applies `file` and waits until the normalised state is `fixture`'s; then a forced
    /// reconcile of every set must leave it so. A difference is returned, not panicked on.
    async fn step(&self, file: &str, fixture: &str, sets: &[String], step: u8) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join(file)).expect(file);
        apply(&self.fill(&text));
        let argo: Value =
            serde_json::from_str(&std::fs::read_to_string(self.dir.join(fixture)).expect(fixture))
                .expect("fixture JSON");
        let documented = differences(&self.dir, step);
        let argo = without(&argo, &documented);
        let start = Instant::now();
        let mut ours = Value::Null;
        while start.elapsed() < DEADLINE {
            self.play_application_controller().await;
            ours = without(&self.snapshot(sets).await, &documented);
            if ours == argo {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if ours == argo {
            for set in sets {
                self.reconciled_again(set).await;
            }
            ours = without(&self.snapshot(sets).await, &documented);
            if ours == argo {
                return None;
            }
        }
        Some(format!(
            "{} {fixture} (after {file}, {:?}):\n{}",
            self.dir.file_name().unwrap_or_default().to_string_lossy(),
            start.elapsed(),
            diff(&argo, &ours)
        ))
    }
}

impl Case {
    /// Reconciles of `set` so far (the controller's `argocd_appset_reconcile` histogram).
    fn reconciles(&self, set: &str) -> u64 {
        let wanted = format!("name=\"{set}\"");
        self.r
            .metrics_text()
            .lines()
            .filter(|l| l.starts_with("argocd_appset_reconcile_count{") && l.contains(&wanted))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }

    /// Waits for a reconcile of `set` that started after now. Argo's refresh annotation cannot
    /// say so for a set in error (neither controller removes it then), so a label is touched
    /// twice: the second reconcile counted after the first touch started after it, even if
    /// the first one counted was already running.
    async fn reconciled_again(&self, set: &str) {
        for touch in 0..2 {
            let before = self.reconciles(set);
            self.r
                .patch_set(
                    set,
                    json!({"metadata": {"labels": {"aconf.plumb.dev/recheck": format!("{touch}")}}}),
                )
                .await;
            eventually(&format!("a reconcile of {set}"), || async {
                (self.reconciles(set) > before).then_some(())
            })
            .await;
        }
    }
}

/// Where the two documents differ: each differing field by its JSON pointer, with both values.
fn diff(argo: &Value, ours: &Value) -> String {
    let mut out = Vec::new();
    diff_at(argo, ours, String::new(), &mut out);
    out.join("\n")
}

fn diff_at(argo: &Value, ours: &Value, at: String, out: &mut Vec<String>) {
    match (argo, ours) {
        (Value::Object(a), Value::Object(o)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(o.keys()).collect();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    o.get(k).unwrap_or(&Value::Null),
                );
                diff_at(x, y, format!("{at}/{k}"), out);
            }
        }
        (Value::Array(a), Value::Array(o)) if a.len() == o.len() => {
            for (i, (x, y)) in a.iter().zip(o).enumerate() {
                diff_at(x, y, format!("{at}/{i}"), out);
            }
        }
        (a, o) if a != o => out.push(format!("  {at}:\n    Argo:  {a}\n    Plumb: {o}")),
        _ => {}
    }
}

const INITIATOR: &str = "applicationset-controller";
const REFRESH: &str = "argocd.argoproj.io/refresh";

/// Argo's metav1.Time: whole seconds.
fn seconds(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl Case {
    /// One pass of the application controller's part, each Application by what it shows: a
    /// deleted one loses its resources finalizer (every case). With a rollout also: a sync the
    /// rollout asked for is run (then the operation cleared, as that controller does); an
    /// Application synced by it and seen Progressing by the rollout becomes Healthy; one never
    /// compared, or with a refresh asked for, is compared (OutOfSync at the revision until
    /// synced). The other cases' Applications name GitHub, which Argo could not reach while
    /// recording either; their status is not compared and the set does not read it.
    async fn play_application_controller(&self) {
        let set_status = self.rollout_status().await;
        for app in self.r.app_list().await {
            let name = app["metadata"]["name"].as_str().unwrap_or_default();
            let status = &app["status"];
            if !app["metadata"]["deletionTimestamp"].is_null() {
                self.finish_deletion(name).await;
                continue;
            }
            if !self.rollout {
                continue;
            }
            let seen = set_status
                .iter()
                .find(|e| e["application"] == name)
                .cloned()
                .unwrap_or(Value::Null);
            if app["operation"]["initiatedBy"]["username"] == INITIATOR {
                self.sync(name, &app, &seen).await;
            } else if status["health"]["status"] == "Progressing" && seen["status"] == "Progressing"
            {
                self.write_status(name, json!({"health": {"status": "Healthy"}}))
                    .await;
            } else if status["reconciledAt"].is_null()
                || app["metadata"]["annotations"][REFRESH].is_string()
            {
                self.compare(name, status).await;
            }
        }
    }

    /// A deleted Application's resources finalizer removed: nothing was synced, so the
    /// cascade has nothing to delete.
    async fn finish_deletion(&self, name: &str) {
        let patch = json!({"metadata": {"finalizers": null}});
        match self
            .r
            .apps()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => panic!("removing {name}'s finalizer: {e}"),
        }
    }

    async fn rollout_status(&self) -> Vec<Value> {
        let list = self.r.sets().list(&Default::default()).await.expect("sets");
        list.items
            .iter()
            .filter_map(|s| s.data["status"]["applicationStatus"].as_array())
            .flatten()
            .cloned()
            .collect()
    }

    /// The sync: started in a later second than the rollout's Pending transition (times are
    /// whole seconds, and a sync must be seen to start after it), Synced at the revision, the
    /// workload still Progressing; then the operation cleared.
    async fn sync(&self, name: &str, app: &Value, seen: &Value) {
        let now = jiff::Timestamp::now();
        let pending = seen["lastTransitionTime"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(now, |t| t + jiff::SignedDuration::from_secs(1));
        let at = seconds(now.max(pending));
        let mut operation = app["operation"].clone();
        if let Some(o) = operation.as_object_mut() {
            o.remove("initiatedBy");
            o.remove("info");
        }
        self.write_status(
            name,
            json!({
                "sync": {"status": "Synced", "revision": self.revision},
                "health": {"status": "Progressing"},
                "reconciledAt": at,
                "operationState": {"operation": operation, "phase": "Succeeded",
                                   "message": "successfully synced (all tasks run)",
                                   "startedAt": at, "finishedAt": at,
                                   "syncResult": {"revision": self.revision}}
            }),
        )
        .await;
        self.r
            .apps()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"operation": null})),
            )
            .await
            .expect("clear the operation");
    }

    /// A comparison: OutOfSync at the revision (Missing) until a sync, then as it was; the
    /// refresh annotation removed, as the application controller does.
    async fn compare(&self, name: &str, status: &Value) {
        let now = seconds(jiff::Timestamp::now());
        let mut patch = json!({"reconciledAt": now});
        if status["sync"].is_null() {
            patch["sync"] = json!({"status": "OutOfSync", "revision": self.revision});
            patch["health"] = json!({"status": "Missing"});
        }
        self.write_status(name, patch).await;
        self.r
            .apps()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"annotations": {REFRESH: null}}})),
            )
            .await
            .expect("remove the refresh annotation");
    }

    async fn write_status(&self, name: &str, status: Value) {
        self.r
            .apps()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": status})),
            )
            .await
            .expect("write an Application's status");
    }
}

/// One case, both steps; its differences.
async fn run_case(dir: &Path) -> Vec<String> {
    let short = dir.file_name().unwrap_or_default().to_string_lossy();
    let r = Running::start(&format!("aconf-{short}"), |c| {
        c.progressive_syncs = true;
        c.refresh_grace_period = Duration::ZERO;
    })
    .await;
    let repo_dir = tempfile::tempdir().expect("a repository directory");
    let repo = make_repo(dir, repo_dir.path());
    let revision = git_head(repo_dir.path());
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let first = sets_of(&read("set.yaml"), "set.yaml");
    let case = Case {
        dir: dir.to_path_buf(),
        r,
        repo,
        revision,
        rollout: first.iter().any(|(_, s)| *s),
    };
    let before = read("before.yaml");
    if !before.is_empty() {
        apply(&case.fill(&before));
    }
    let mut names: Vec<String> = first.into_iter().map(|(n, _)| n).collect();
    let mut out = Vec::new();
    out.extend(case.step("set.yaml", "argo.json", &names, 1).await);
    if dir.join("set-2.yaml").exists() {
        names.extend(
            sets_of(&read("set-2.yaml"), "set-2.yaml")
                .into_iter()
                .map(|(n, _)| n),
        );
        names.sort();
        names.dedup();
        out.extend(case.step("set-2.yaml", "argo-2.json", &names, 2).await);
    }
    out
}

fn git_head(dir: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test]
async fn argo_controller_fixtures() {
    let cases = controller_cases();
    assert!(
        !cases.is_empty(),
        "no controller cases under {}",
        cases_dir().display()
    );
    let mut differences = Vec::new();
    for case in &cases {
        println!("controller case {}", case.display());
        differences.extend(run_case(case).await);
    }
    let records = cases
        .iter()
        .map(|c| 1 + usize::from(c.join("argo-2.json").exists()))
        .sum::<usize>();
    println!(
        "argo controller fixtures: {} cases, {records} records compared",
        cases.len()
    );
    assert!(
        differences.is_empty(),
        "differences from Argo's controller:\n{}",
        differences.join("\n\n")
    );
}

/// A documented difference is deleted on both sides, for its step only.
#[test]
fn controller_differences_are_deleted_for_their_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("controller-differences"),
        "# comment\n2\t.applicationSets[].conditions[].message\tthe message names a run\n",
    )
    .expect("write");
    assert!(differences(dir.path(), 1).is_empty());
    let paths = differences(dir.path(), 2);
    let doc =
        json!({"applicationSets": [{"name": "s", "conditions": [{"type": "T", "message": "m"}]}]});
    assert_eq!(
        without(&doc, &paths),
        json!({"applicationSets": [{"name": "s", "conditions": [{"type": "T"}]}]})
    );
}

/// A difference without its reason is refused, naming the line.
#[test]
#[should_panic(expected = "`STEP<TAB>jq-path<TAB>reason` expected: 1\t.applications")]
fn a_controller_difference_needs_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("controller-differences"),
        "1\t.applications\t\n",
    )
    .expect("write");
    differences(dir.path(), 1);
}
