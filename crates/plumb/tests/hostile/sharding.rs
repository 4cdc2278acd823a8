//! Sharding inputs written by someone other than the controller (docs/sharding.md,
//! docs/security.md): the `plumb.dev/operation-owner` annotation, which whoever can edit an
//! Application can forge, and the `shard` key of a cluster Secret, which whoever can write
//! cluster Secrets can set to anything. Each test runs a real controller as replica 0 of 2 (the
//! ownership and placement code only runs with sharding on); replica 1 never starts, so its
//! Lease stays unheld.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::running::{DEADLINE, Running, env, get_json, kubectl, kubectl_apply, text, unique};

const OWNER: &str = "plumb.dev/operation-owner";
const INTERRUPTED: &str = "interrupted by a controller restart";

/// Replica 0 of 2, with a short Lease so that replica 1's missing Lease counts as dead soon.
fn replica_zero(prefix: &str, extra: &[&str]) -> Running {
    let mut args = vec!["--lease-duration", "4"];
    args.extend_from_slice(extra);
    Running::start_with(
        prefix,
        &[
            ("ARGOCD_CONTROLLER_REPLICAS", "2"),
            ("ARGOCD_CONTROLLER_SHARD", "0"),
            ("PLUMB_LOG", "info"),
        ],
        &args,
    )
}

/// The holder identity of shard 0's Lease: the running replica's identity.
fn replica_identity(ctl: &Running) -> String {
    let start = Instant::now();
    loop {
        let holder = get_json(ctl.ns.name(), "lease", "plumb-controller-shard-0")
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
            .unwrap_or_default();
        if !holder.is_empty() {
            return holder;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "replica 0 never held its Lease; log:\n{}",
            ctl.log()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Three ConfigMaps in three sync waves: with a wave delay the sync lasts long enough to be
/// tampered with while it runs.
fn waves_repo(name: &str) -> GitRepo {
    let repo = GitRepo::new();
    let files: Vec<(String, String)> = [(-1, "a"), (0, "b"), (1, "c")]
        .iter()
        .map(|(wave, part)| {
            (
                format!("app/{part}.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{part}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\ndata:\n  part: {part}\n"
                ),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&files, "three waves");
    repo
}

fn manual_app(repo: &GitRepo, dest: &str) -> Value {
    json!({"project": "default",
           "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD"},
           "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}})
}

fn history_len(app: &Value) -> usize {
    app["status"]["history"].as_array().map_or(0, Vec::len)
}

/// resourceVersion and managedFields of the deployed ConfigMaps: equal snapshots mean nothing
/// wrote them again.
fn deployed(ns: &str, prefix: &str) -> BTreeMap<String, (String, String)> {
    let out = kubectl(&["-n", ns, "get", "configmaps", "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|o| {
            (
                o["metadata"]["name"].as_str().unwrap().to_string(),
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

fn annotate_owner(ctl: &Running, app: &str, owner: &str) {
    ctl.patch_app(app, &json!({"metadata": {"annotations": {OWNER: owner}}}));
}

/// Forged owners, each before an operation starts, while a real one runs, and on an operation
/// recorded `Running` by a replica that is gone: no operation is skipped, none runs twice.
#[test]
fn a_forged_operation_owner_neither_skips_nor_repeats_an_operation() {
    let mut ctl = replica_zero("shard-owner", &["--sync-wave-delay", "2"]);
    let me = replica_identity(&ctl);
    let dest = env().namespace("shard-owner-dest");
    let forged = [
        "ghost-replica-4242-deadbeef".to_string(),
        String::new(),
        format!("{me}\n{}", "x".repeat(300)),
        me.clone(),
    ];

    // 1. Forged before the sync starts: each sync runs once and the claim replaces the forgery.
    for (i, owner) in forged.iter().enumerate() {
        let name = unique("forged-before");
        let repo = waves_repo(&name);
        ctl.create_app(&name, manual_app(&repo, dest.name()));
        annotate_owner(&ctl, &name, owner);
        ctl.wait_app(&name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        });
        let app = ctl.sync(&name, json!({"revision": "HEAD"}));
        assert_eq!(
            app["status"]["operationState"]["phase"], "Succeeded",
            "forged owner #{i} {owner:?}: {:#}",
            app["status"]["operationState"]
        );
        assert_eq!(history_len(&app), 1, "forged owner #{i}: run once");
        assert_eq!(
            app["metadata"]["annotations"][OWNER], me,
            "forged owner #{i}: the claim names the replica that ran it"
        );
        assert_eq!(deployed(dest.name(), &name).len(), 3);
    }

    // 2. Forged while the sync runs (the replica running it is alive): it finishes once, is
    //    neither failed as interrupted nor started again.
    for owner in ["ghost-replica-4242-deadbeef", ""] {
        let name = unique("forged-during");
        let repo = waves_repo(&name);
        ctl.create_app(&name, manual_app(&repo, dest.name()));
        ctl.wait_app(&name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        });
        let who = unique("hostile");
        ctl.patch_app(
            &name,
            &json!({"operation": {"sync": {"revision": "HEAD"}, "initiatedBy": {"username": who}}}),
        );
        ctl.wait_app(&name, "sync running", |a| {
            a["status"]["operationState"]["phase"] == "Running"
        });
        annotate_owner(&ctl, &name, owner);
        let app = ctl.wait_app(&name, "sync ended", |a| {
            a["operation"].is_null()
                && matches!(
                    a["status"]["operationState"]["phase"].as_str(),
                    Some("Succeeded" | "Failed" | "Error")
                )
        });
        assert_eq!(
            app["status"]["operationState"]["phase"], "Succeeded",
            "forged {owner:?} mid-sync: {:#}",
            app["status"]["operationState"]
        );
        assert_eq!(history_len(&app), 1, "forged {owner:?} mid-sync: run once");
        let objects = deployed(dest.name(), &name);
        assert_eq!(objects.len(), 3);
        let started = app["status"]["operationState"]["startedAt"].clone();
        // Several reconciles later (a refresh each), nothing ran again.
        for _ in 0..3 {
            ctl.patch_app(
                &name,
                &json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
            );
            std::thread::sleep(Duration::from_secs(2));
        }
        let app = ctl.app(&name).unwrap();
        assert_eq!(app["status"]["operationState"]["startedAt"], started);
        assert_eq!(history_len(&app), 1);
        assert_eq!(
            deployed(dest.name(), &name),
            objects,
            "forged {owner:?} mid-sync: no object written again"
        );
    }

    // 3. An operation recorded Running by a replica that is gone (what a crash leaves), with a
    //    forged owner: nonexistent, malformed, or this very replica (which knows it is not
    //    running it). It is failed as interrupted, never run (again), and never left Running.
    for owner in forged.iter().filter(|o| !o.is_empty()) {
        let name = unique("forged-stale");
        let repo = waves_repo(&name);
        ctl.create_app(&name, manual_app(&repo, dest.name()));
        ctl.wait_app(&name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        });
        let app = ctl.sync(&name, json!({"revision": "HEAD"}));
        assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
        let objects = deployed(dest.name(), &name);
        // The Running record a dead replica would have left.
        annotate_owner(&ctl, &name, owner);
        // Written through the status subresource, as only a controller can: no `.operation`
        // with it, so that nothing new is requested (a request would rightly run).
        let out = kubectl(&[
            "-n",
            ctl.ns.name(),
            "patch",
            "applications.argoproj.io",
            &name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &json!({"status": {"operationState": {
                "phase": "Running", "message": "one wave left",
                "startedAt": "2026-01-01T00:00:00Z",
                "operation": {"sync": {"revision": "HEAD"}, "initiatedBy": {"username": "gone"}}}}})
            .to_string(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        // A status write alone does not queue a reconcile; the next poll would (here a refresh,
        // as the membership change after a replica's death does).
        ctl.patch_app(
            &name,
            &json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
        );
        let app = ctl.wait_app(&name, "the stale operation failed", |a| {
            a["status"]["operationState"]["phase"] == "Failed"
        });
        assert!(
            app["status"]["operationState"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(INTERRUPTED)),
            "owner {owner:?}: {:#}",
            app["status"]["operationState"]
        );
        assert_eq!(history_len(&app), 1, "owner {owner:?}: not run");
        std::thread::sleep(Duration::from_secs(3));
        let app = ctl.app(&name).unwrap();
        assert_eq!(app["status"]["operationState"]["phase"], "Failed");
        assert_eq!(history_len(&app), 1);
        assert_eq!(
            deployed(dest.name(), &name),
            objects,
            "owner {owner:?}: nothing applied"
        );
    }
    assert!(ctl.alive(), "the controller exited; log:\n{}", ctl.log());
}

/// The credentials of the shared control plane's admin as an Argo CD cluster `config`, and its
/// URL: a cluster Secret naming the same API server as a destination of its own.
fn cluster_config() -> (String, Value) {
    let out = kubectl(&[
        "config",
        "view",
        "--raw",
        "--minify",
        "--flatten",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cfg: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cluster = &cfg["clusters"][0]["cluster"];
    let user = &cfg["users"][0]["user"];
    let server = cluster["server"].as_str().unwrap().to_string();
    (
        server,
        json!({"tlsClientConfig": {
            "caData": cluster["certificate-authority-data"],
            "certData": user["client-certificate-data"],
            "keyData": user["client-key-data"]}}),
    )
}

/// A `shard` that is not a number, negative, out of range or too big for any integer: the
/// controller keeps running and keeps the cluster (its Applications still sync there), and says
/// what it did with the value, naming the Secret.
#[test]
fn a_malformed_cluster_secret_shard_neither_crashes_the_controller_nor_drops_the_cluster() {
    let mut ctl = replica_zero("shard-secret", &[]);
    let dest = env().namespace("shard-secret-dest");
    let (server, config) = cluster_config();
    let secret = unique("cluster-shard");
    let cluster = unique("shard-cluster");
    let ctl_ns = ctl.ns.name().to_string();
    let write_secret = |shard: &str| {
        kubectl_apply(&json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": ctl_ns,
                         "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
            "stringData": {"name": cluster, "server": server, "config": config.to_string(),
                           "shard": shard}
        }))
    };
    write_secret("abc");
    let name = unique("shard-secret-app");
    let repo = GitRepo::new();
    let cm = |v: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  shard: {v:?}\n"
        )
    };
    repo.commit(&[("app/cm.yaml", cm("initial"))], "first");
    ctl.create_app(
        &name,
        json!({"project": "default",
               "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD"},
               "destination": {"name": cluster, "namespace": dest.name()},
               "syncPolicy": {"automated": {}}}),
    );
    let mut expected_warnings = Vec::new();
    for (shard, warning, names) in [
        ("abc", "is not an integer", &secret),
        ("-1", "of its Secret is out of range", &cluster),
        ("7", "of its Secret is out of range", &cluster),
        ("99999999999999999999", "is not an integer", &secret),
        ("0x1", "is not an integer", &secret),
    ] {
        write_secret(shard);
        let head = repo.commit(&[("app/cm.yaml", cm(shard))], shard);
        ctl.patch_app(
            &name,
            &json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
        );
        ctl.wait_app(
            &name,
            &format!("synced at the commit of shard {shard:?}"),
            |a| {
                a["status"]["sync"]["status"] == "Synced"
                    && a["status"]["sync"]["revision"] == head.as_str()
                    && a["status"]["operationState"]["phase"] == "Succeeded"
                    && a["status"]["operationState"]["syncResult"]["revision"] == head.as_str()
            },
        );
        let live = get_json(dest.name(), "configmap", &name).expect("deployed");
        assert_eq!(live["data"]["shard"], shard, "deployed through the cluster");
        assert!(
            ctl.alive(),
            "shard {shard:?} stopped the controller; log:\n{}",
            ctl.log()
        );
        let said = if names == &secret {
            format!("shard {shard:?} {warning}")
        } else {
            format!("shard {shard} {warning}")
        };
        expected_warnings.push((said, names));
    }
    let log = ctl.log();
    for (said, names) in expected_warnings {
        assert!(
            log.lines()
                .any(|l| l.contains(&said) && l.contains(names.as_str())),
            "no warning {said:?} naming {names}; log:\n{log}"
        );
    }
}

/// The namespace filter holds with sharding on, where replicas place Applications by hash (a
/// path of its own): an Application in a namespace the controller does not serve
/// (`ARGOCD_APPLICATION_NAMESPACES`) is neither reconciled nor synced, even with a project that
/// lists its namespace and an automated policy; one in a served namespace is.
#[test]
fn with_sharding_on_an_application_outside_the_served_namespaces_is_never_touched() {
    let tenant = env().namespace("shard-ns-tenant");
    let outside = env().namespace("shard-ns-outside");
    let mut ctl = Running::start_with(
        "shard-ns",
        &[
            ("ARGOCD_CONTROLLER_REPLICAS", "2"),
            ("ARGOCD_CONTROLLER_SHARD", "0"),
            ("ARGOCD_APPLICATION_NAMESPACES", tenant.name()),
            ("PLUMB_LOG", "info"),
        ],
        &["--lease-duration", "4"],
    );
    replica_identity(&ctl);
    ctl.create_project(
        "tenants",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": [tenant.name(), outside.name()]}),
    );
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sharded-payload\ndata:\n  k: v\n"
                .to_string(),
        )],
        "payload",
    );
    let mut placed = Vec::new();
    for ns in [&tenant, &outside] {
        let dest = env().namespace("shard-ns-dest");
        let name = unique("sharded");
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns.name()},
            "spec": {"project": "tenants",
                     "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                     "syncPolicy": {"automated": {}}}
        }));
        placed.push((ns.name().to_string(), name, dest));
    }
    let (tenant_ns, tenant_app, tenant_dest) = &placed[0];
    let start = Instant::now();
    while get_json(tenant_dest.name(), "configmap", "sharded-payload").is_none() {
        assert!(
            start.elapsed() < DEADLINE,
            "the served Application {tenant_ns}/{tenant_app} was not synced; log:\n{}",
            ctl.log()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    // The served one is done: the controller has listed and placed both. A few seconds more
    // for the other, had it been taken.
    std::thread::sleep(Duration::from_secs(3));
    let (outside_ns, outside_app, outside_dest) = &placed[1];
    let app = get_json(outside_ns, "applications.argoproj.io", outside_app).expect("the app");
    assert!(
        app["status"].is_null(),
        "an Application outside the served namespaces was reconciled: {:#}",
        app["status"]
    );
    assert!(get_json(outside_dest.name(), "configmap", "sharded-payload").is_none());
    assert!(ctl.alive(), "{}", ctl.log());
}
