//! Three `plumb controller` processes sharing one control namespace through shard Leases
//! (issue #17): a dozen automated Applications of one cluster spread over the replicas by name
//! (`--shard-applications`); one replica is killed (SIGKILL) in the middle of a sync; the
//! survivors take over its Applications once its Lease lapses, fail the operation it had started
//! as interrupted (never run twice), and every Application converges once: one history entry
//! each, and the deployed objects are not written again afterwards.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::app::{control_namespace, env, kubectl, kubectl_apply, text};

const APPS: usize = 12;
const REPLICAS: usize = 3;
/// Short, so the test does not wait long for a dead replica's Lease to lapse.
const LEASE_SECONDS: &str = "8";
const DEADLINE: Duration = Duration::from_secs(240);
const OWNER: &str = "plumb.dev/operation-owner";

struct Replica {
    child: Option<Child>,
    pid: u32,
    log: std::path::PathBuf,
}

impl Replica {
    fn start(ctl: &str, shard: usize, dir: &Path) -> Self {
        let log = dir.join(format!("replica-{shard}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ctl, "--metrics-addr", "off"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(dir.join(format!("cache-{shard}")))
            .args(["--replicas", &REPLICAS.to_string()])
            .args(["--shard", &shard.to_string()])
            .args(["--shard-applications", "--lease-duration", LEASE_SECONDS])
            // Three waves with a pause between them: a sync lasts seconds, long enough to be
            // killed in the middle of one.
            .args(["--sync-wave-delay", "5"])
            .env(
                "PLUMB_LOG",
                std::env::var("PLUMB_LOG").unwrap_or_else(|_| "warn,plumb_controller=info".into()),
            )
            .env_remove("ARGOCD_CONTROLLER_REPLICAS")
            .env_remove("ARGOCD_CONTROLLER_SHARD")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap();
        Self {
            pid: child.id(),
            child: Some(child),
            log,
        }
    }

    /// SIGKILL, as a node failure or the OOM killer would.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether an identity written in a Lease or an operation-owner annotation is this process.
    fn is(&self, identity: &str) -> bool {
        identity.contains(&format!("-{}-", self.pid))
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

fn app_name(i: usize) -> String {
    format!("replicas-{i:02}")
}

/// The Applications in name order, read in one request (a consistent moment).
fn apps_state(ns: &str) -> Vec<Value> {
    let out = kubectl(&["-n", ns, "get", "applications.argoproj.io", "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut apps: Vec<Value> = list["items"].as_array().cloned().unwrap_or_default();
    apps.sort_by_key(|a| {
        a["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    apps
}

fn converged(app: &Value) -> bool {
    app["status"]["sync"]["status"] == "Synced"
        && app["status"]["health"]["status"] == "Healthy"
        && app["status"]["operationState"]["phase"] == "Succeeded"
        && app["operation"].is_null()
}

fn owner(app: &Value) -> &str {
    app["metadata"]["annotations"][OWNER]
        .as_str()
        .unwrap_or_default()
}

fn lease_holder(ns: &str, shard: usize) -> String {
    let out = kubectl(&[
        "-n",
        ns,
        "get",
        "lease",
        &format!("plumb-controller-shard-{shard}"),
        "-o",
        "jsonpath={.spec.holderIdentity}",
        "--ignore-not-found",
    ]);
    text(&out.stdout).trim().to_string()
}

/// Every deployed ConfigMap's resourceVersion and managedFields: equal snapshots mean no replica
/// wrote it again.
fn deployed(ns: &str) -> BTreeMap<String, (String, String)> {
    let out = kubectl(&["-n", ns, "get", "configmaps", "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["metadata"]["name"] != "kube-root-ca.crt")
        .map(|o| {
            (
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                (
                    o["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    o["metadata"]["managedFields"].to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn three_replicas_share_the_apps_and_a_killed_ones_move_without_running_twice() {
    let ctl_ns = control_namespace("ctl-replicas");
    let ctl = ctl_ns.name().to_string();
    let dest = env().namespace("dest-replicas");
    let repo = GitRepo::named("replicas");
    let mut files = Vec::new();
    for i in 0..APPS {
        for (wave, part) in [(-1, "a"), (0, "b"), (1, "c")] {
            files.push((
                format!("apps/{i:02}/{part}.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: replicas-{i:02}-{part}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\ndata:\n  value: \"{i}\"\n"
                ),
            ));
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&files, "a dozen applications");

    let dir = tempfile::tempdir().unwrap();
    let mut replicas: Vec<Replica> = (0..REPLICAS)
        .map(|s| Replica::start(&ctl, s, dir.path()))
        .collect();
    let start = Instant::now();
    while (0..REPLICAS).any(|s| lease_holder(&ctl, s).is_empty()) {
        assert!(
            start.elapsed() < DEADLINE,
            "every replica holds its shard Lease; replica 0 says:\n{}",
            replicas[0].log_tail()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    for (s, r) in replicas.iter().enumerate() {
        assert!(
            r.is(&lease_holder(&ctl, s)),
            "shard {s} is held by its own process"
        );
    }

    for i in 0..APPS {
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": app_name(i), "namespace": ctl},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": format!("apps/{i:02}"), "targetRevision": "main"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                     "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}}
        }));
    }

    // The victim: a replica seen running a sync that has not applied its wave 0 yet. Its last
    // wave comes a whole --sync-wave-delay after wave 0, so the kill right after this check lands
    // mid-sync even on a loaded machine (a kill after the last apply would leave nothing to
    // finish, and the Application Synced with its operation failed as interrupted).
    let (victim, interrupted) = loop {
        assert!(
            start.elapsed() < DEADLINE,
            "no sync seen running before its wave 0"
        );
        let running: Vec<(usize, Value)> = apps_state(&ctl)
            .into_iter()
            .filter_map(|a| {
                let holder = replicas.iter().position(|r| {
                    a["status"]["operationState"]["phase"] == "Running" && r.is(owner(&a))
                })?;
                Some((holder, a))
            })
            .collect();
        if !running.is_empty() {
            let applied = deployed(dest.name());
            let early = running.into_iter().find(|(_, a)| {
                let name = a["metadata"]["name"].as_str().unwrap_or_default();
                !applied.contains_key(&format!("{name}-b"))
            });
            if let Some(found) = early {
                break found;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let victim_pid = replicas[victim].pid;
    replicas[victim].kill();
    let interrupted_name = interrupted["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    // Everything converges on the survivors.
    let apps = loop {
        let apps = apps_state(&ctl);
        if apps.len() == APPS && apps.iter().all(converged) {
            break apps;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "not every Application converged after replica {victim} was killed: {:?}\nsurvivor logs:\n{}",
            apps.iter()
                .map(|a| (
                    a["metadata"]["name"].clone(),
                    a["status"]["sync"]["status"].clone(),
                    a["status"]["operationState"]["phase"].clone(),
                    a["status"]["operationState"]["message"].clone(),
                ))
                .collect::<Vec<_>>(),
            replicas
                .iter()
                .filter(|r| r.child.is_some())
                .map(Replica::log_tail)
                .collect::<Vec<_>>()
                .join("\n----\n")
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let survivors: Vec<&Replica> = replicas.iter().filter(|r| r.child.is_some()).collect();
    for app in &apps {
        assert_eq!(
            app["status"]["history"].as_array().map_or(0, Vec::len),
            1,
            "{} was deployed exactly once: {}",
            app["metadata"]["name"],
            app["status"]["history"]
        );
    }
    // Each replica had a share (application sharding spreads one cluster's Applications).
    let first_owners: std::collections::BTreeSet<usize> = apps
        .iter()
        .filter_map(|a| survivors.iter().position(|r| r.is(owner(a))))
        .collect();
    assert_eq!(first_owners.len(), REPLICAS - 1, "both survivors worked");
    let app = apps
        .iter()
        .find(|a| a["metadata"]["name"] == interrupted_name.as_str())
        .unwrap();
    assert_ne!(
        app["status"]["operationState"]["startedAt"],
        interrupted["status"]["operationState"]["startedAt"],
        "the sync the killed replica had started was not the one that finished: it was failed and a new one ran"
    );
    assert!(
        survivors.iter().any(|r| r.is(owner(app))),
        "{interrupted_name} was finished by a live replica, not the killed one (pid {victim_pid}): {}",
        owner(app)
    );
    // The dead replica's Lease is not taken over: its shard is covered, not impersonated.
    assert!(
        !survivors.iter().any(|r| r.is(&lease_holder(&ctl, victim))),
        "shard {victim}'s Lease is still the dead replica's"
    );

    // No double apply: nothing is written again while the survivors keep reconciling.
    let objects = deployed(dest.name());
    assert_eq!(objects.len(), APPS * 3, "{:?}", objects.keys());
    let started: Vec<Value> = apps
        .iter()
        .map(|a| a["status"]["operationState"]["startedAt"].clone())
        .collect();
    std::thread::sleep(Duration::from_secs(15));
    assert_eq!(
        deployed(dest.name()),
        objects,
        "a deployed object was written again after convergence"
    );
    let after = apps_state(&ctl);
    for (a, s) in after.iter().zip(&started) {
        assert_eq!(
            &a["status"]["operationState"]["startedAt"], s,
            "no new operation"
        );
        assert_eq!(
            a["status"]["history"].as_array().map_or(0, Vec::len),
            1,
            "still one history entry"
        );
    }
}
