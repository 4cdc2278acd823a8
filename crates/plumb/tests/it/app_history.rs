//! `plumb app set`, `app history` and `app rollback` end to end against the real control plane,
//! without a controller: what `set` writes, how `history` prints a history written into status,
//! and what `rollback` refuses and requests.

use serde_json::{Value, json};

use crate::app::{
    app_json, control_namespace, create_payments, kubectl_apply, patch_status, plumb, text,
};

const PAYMENTS_REPO: &str = "https://git.acme.internal/apps/payments.git";

fn history_status(entries: &[(i64, &str, &str, &str)]) -> Value {
    let history: Vec<Value> = entries
        .iter()
        .map(|(id, target, commit, at)| {
            json!({"id": id, "revision": commit, "deployedAt": at, "deployStartedAt": at,
                   "source": {"repoURL": PAYMENTS_REPO, "path": "k8s/overlays/prod", "targetRevision": target},
                   "initiatedBy": {"username": "alice"}})
        })
        .collect();
    json!({"status": {
        "sync": {"status": "Synced", "revision": entries.last().map(|e| e.2).unwrap_or_default()},
        "health": {"status": "Healthy"},
        "history": history
    }})
}

const TWO_DEPLOYMENTS: &[(i64, &str, &str, &str)] = &[
    (
        0,
        "v1.3.2",
        "4e1b07c2a9d35f6e8b0c1d2e3f4a5b6c7d8e9f01",
        "2026-07-18T09:05:09Z",
    ),
    (
        1,
        "v1.4.0",
        "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e",
        "2026-07-20T10:15:41Z",
    ),
];

#[test]
fn set_changes_the_spec_with_a_merge_patch() {
    let ns = control_namespace("app-set");
    let ns = ns.name();
    create_payments(ns);
    patch_status(ns, "payments-api", &history_status(TWO_DEPLOYMENTS));

    let out = plumb(
        ns,
        &[
            "set",
            "payments-api",
            "--revision",
            "v1.5.0",
            "--sync-policy",
            "automated",
            "--auto-prune",
            "--self-heal",
            "--sync-option",
            "CreateNamespace=true",
            "--revision-history-limit",
            "5",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(
        app["spec"],
        json!({"project": "default",
               "source": {"repoURL": PAYMENTS_REPO, "path": "k8s/overlays/prod", "targetRevision": "v1.5.0"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
               "syncPolicy": {"automated": {"prune": true, "selfHeal": true},
                              "syncOptions": ["CreateNamespace=true"]},
               "revisionHistoryLimit": 5})
    );
    // The status the controller wrote is untouched.
    assert_eq!(app["status"]["history"].as_array().unwrap().len(), 2);

    // `--self-heal=false` unsets one switch; `none` then drops automation, and with the last
    // sync option gone the whole policy (explicit nulls in the patch).
    let out = plumb(ns, &["set", "payments-api", "--self-heal=false"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        app_json(ns, "payments-api").unwrap()["spec"]["syncPolicy"],
        json!({"automated": {"prune": true}, "syncOptions": ["CreateNamespace=true"]})
    );
    let out = plumb(
        ns,
        &[
            "set",
            "payments-api",
            "--sync-policy",
            "none",
            "--sync-option",
            "!CreateNamespace=true",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        app_json(ns, "payments-api").unwrap()["spec"]
            .get("syncPolicy")
            .is_none()
    );

    let out = plumb(ns, &["set", "payments-api", "--self-heal"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: Cannot set --self-heal: application not configured with automatic sync\n"
    );
    let out = plumb(ns, &["set", "payments-api", "--project", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: application spec for payments-api is invalid: InvalidSpecError: Application referencing project nope which does not exist\n"
    );
    let out = plumb(ns, &["set", "payments-api"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: Please set at least one option to update\n"
    );
}

#[test]
fn set_is_refused_where_the_project_does_not_permit() {
    let ns = control_namespace("app-set-project");
    let ns = ns.name();
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "payments", "namespace": ns},
        "spec": {"sourceRepos": ["https://git.acme.internal/apps/*"],
                 "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "payments"},
                                  {"name": "in-cluster", "namespace": "payments-*"}]}
    }));
    create_payments(ns);
    let before = app_json(ns, "payments-api").unwrap();

    // Moving to a project that permits it works; a destination by name matches by name.
    for args in [
        &["set", "payments-api", "--project", "payments"][..],
        &["set", "payments-api", "--dest-namespace", "payments-canary"],
    ] {
        let out = plumb(ns, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = plumb(
        ns,
        &[
            "set",
            "payments-api",
            "--repo",
            "https://github.com/acme/payments.git",
            "--dest-namespace",
            "kube-system",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: application spec for payments-api is invalid: \
         InvalidSpecError: application repo https://github.com/acme/payments.git is not permitted in project 'payments' (sourceRepos);\
         InvalidSpecError: application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'payments' (destinations)\n"
    );
    let after = app_json(ns, "payments-api").unwrap();
    assert_eq!(after["spec"]["project"], "payments");
    assert_eq!(after["spec"]["destination"]["namespace"], "payments-canary");
    assert_eq!(after["spec"]["source"], before["spec"]["source"]);
}

#[test]
fn history_prints_what_status_records() {
    let ns = control_namespace("app-history");
    let ns = ns.name();
    create_payments(ns);
    let empty = plumb(ns, &["history", "payments-api"]);
    assert_eq!(empty.status.code(), Some(0), "{}", text(&empty.stderr));
    assert_eq!(text(&empty.stdout), "");

    patch_status(ns, "payments-api", &history_status(TWO_DEPLOYMENTS));
    let out = plumb(ns, &["history", "payments-api"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "SOURCE  https://git.acme.internal/apps/payments.git\n\
         ID      DATE                           REVISION\n\
         0       2026-07-18 09:05:09 +0000 UTC  v1.3.2 (4e1b07c)\n\
         1       2026-07-20 10:15:41 +0000 UTC  v1.4.0 (9f3c1ad)\n"
    );
    let ids = plumb(ns, &["history", "payments-api", "-o", "id"]);
    assert_eq!(text(&ids.stdout), "0\n1\n");
    let missing = plumb(ns, &["history", "nope"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        text(&missing.stderr),
        format!("plumb: application 'nope' not found in namespace '{ns}'\n")
    );
}

#[test]
fn rollback_refusals() {
    let ns = control_namespace("app-rollback-no");
    let ns = ns.name();
    create_payments(ns);
    let refused = |args: &[&str], message: &str| {
        let out = plumb(ns, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert_eq!(text(&out.stderr), format!("plumb: {message}\n"), "{args:?}");
    };
    refused(
        &["rollback", "payments-api"],
        "Application 'payments-api' should have at least two successful deployments",
    );
    patch_status(ns, "payments-api", &history_status(&TWO_DEPLOYMENTS[..1]));
    refused(
        &["rollback", "payments-api"],
        "Application 'payments-api' should have at least two successful deployments",
    );
    refused(
        &["rollback", "payments-api", "7"],
        "Application 'payments-api' does not have deployment id '7' in history",
    );
    patch_status(ns, "payments-api", &history_status(TWO_DEPLOYMENTS));
    let out = plumb(ns, &["set", "payments-api", "--sync-policy", "automated"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    refused(
        &["rollback", "payments-api", "0"],
        "rollback cannot be initiated when auto-sync is enabled",
    );
    let out = plumb(ns, &["set", "payments-api", "--sync-policy", "none"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = plumb(ns, &["sync", "payments-api", "--async"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    refused(
        &["rollback", "payments-api", "0"],
        "another operation is already in progress",
    );
    // Nothing but the sync's operation was written.
    let app = app_json(ns, "payments-api").unwrap();
    assert!(app["operation"]["sync"].get("source").is_none());
}

#[test]
fn rollback_requests_a_sync_to_the_recorded_deployment() {
    let ns = control_namespace("app-rollback");
    let ns = ns.name();
    create_payments(ns);
    let out = plumb(
        ns,
        &[
            "set",
            "payments-api",
            "--sync-option",
            "CreateNamespace=true",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    patch_status(ns, "payments-api", &history_status(TWO_DEPLOYMENTS));

    let out = plumb(ns, &["rollback", "payments-api", "--prune", "--async"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let app = app_json(ns, "payments-api").unwrap();
    let operation = &app["operation"];
    assert_eq!(
        operation["sync"],
        json!({"revision": "4e1b07c2a9d35f6e8b0c1d2e3f4a5b6c7d8e9f01",
               "source": {"repoURL": PAYMENTS_REPO, "path": "k8s/overlays/prod", "targetRevision": "v1.3.2"},
               "prune": true, "dryRun": false,
               "syncStrategy": {"apply": {}},
               "syncOptions": ["CreateNamespace=true"]})
    );
    assert!(
        operation["initiatedBy"]["username"]
            .as_str()
            .is_some_and(|u| !u.is_empty()),
        "{operation}"
    );
    // The spec does not move: a rollback leaves the Application out of sync with Git.
    assert_eq!(app["spec"]["source"]["targetRevision"], "v1.4.0");
}

#[test]
fn rollback_follows_its_operation_like_sync() {
    let ns = control_namespace("app-rollback-wait");
    let ns = ns.name();
    create_payments(ns);
    patch_status(ns, "payments-api", &history_status(TWO_DEPLOYMENTS));
    // No controller runs: the operation is never picked up and the wait times out (exit 1).
    let out = plumb(ns, &["rollback", "payments-api", "1", "--timeout", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("This is the state of the app after wait timed out:")
            && stdout.ends_with("The command timed out waiting for the conditions to be met.\n"),
        "{stdout}"
    );
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(
        app["operation"]["sync"]["revision"],
        "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e"
    );
}
