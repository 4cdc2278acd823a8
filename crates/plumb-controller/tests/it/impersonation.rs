//! Syncs under argocd-cm's `application.sync.impersonation.enabled`: every write (applies and
//! their dry runs, hooks, prunes, the cascade deletion) is made as the ServiceAccount the
//! AppProject's `destinationServiceAccounts` names, so the API server's RBAC for that account,
//! not the controller's, decides. A ValidatingAdmissionPolicy admitting writes in the allowed
//! namespace only from that ServiceAccount proves who wrote; the account's Role (no delete but
//! of the hook, nothing in the other namespace) proves the refusals come from the API server.

use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::project::{cm, config_map, create_app, create_project, get, op_message, unique};
use crate::support::Controlled;

const IN_CLUSTER: &str = "https://kubernetes.default.svc";

/// A controller whose argocd-cm turns impersonation on.
async fn impersonating_controller(env: &'static TestEnv, prefix: &str) -> Controlled {
    crate::support::install_crds(env);
    let ns = env.namespace(prefix);
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(env.client().await, ns.name());
    let settings = serde_json::from_value(json!({
        "metadata": {"name": "argocd-cm"},
        "data": {"application.sync.impersonation.enabled": "true"}
    }))
    .expect("argocd-cm");
    cms.create(&PostParams::default(), &settings)
        .await
        .expect("create argocd-cm");
    Controlled::start_in(env, ns).await
}

/// Creates `obj`, whose resource's plural is `plural`.
async fn create(client: &kube::Client, ns: Option<&str>, plural: &str, obj: Value) {
    let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let ar = kube::api::ApiResource {
        group: group.to_string(),
        version: version.to_string(),
        api_version: api_version.clone(),
        kind: obj["kind"].as_str().unwrap_or_default().to_string(),
        plural: plural.to_string(),
    };
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let obj: DynamicObject = serde_json::from_value(obj).expect("object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
}

/// ServiceAccount `deployer` in `ns`: may read and write ConfigMaps there, delete only `pre`
/// (the hook, replaced before each sync).
async fn deployer(client: &kube::Client, ns: &str) {
    create(
        client,
        Some(ns),
        "serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "deployer"}}),
    )
    .await;
    create(
        client,
        Some(ns),
        "roles",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "deployer"},
            "rules": [
                {"apiGroups": [""], "resources": ["configmaps"],
                 "verbs": ["get", "list", "watch", "create", "update", "patch"]},
                {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["pre"],
                 "verbs": ["delete"]}
            ]
        }),
    )
    .await;
    create(client, Some(ns), "rolebindings", json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": ns}]
    }))
    .await;
}

/// Admits ConfigMap writes in `ns` from `user` only; returns the policy's name (for cleanup).
/// Waits until the API server enforces it (a policy takes a moment to load).
async fn only_user_writes(client: &kube::Client, ns: &str, user: &str) -> String {
    let name = unique("plumb-imp");
    create(client, None, "validatingadmissionpolicies", json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}
            },
            "matchConditions": [{"name": "test-objects",
                "expression": "has(object.metadata.labels) && 'plumb-imp' in object.metadata.labels"}],
            // The garbage collector's removal of `foregroundDeletion` (from an object being
            // deleted) is not the sync's write.
            "validations": [{"expression": format!(
                "request.userInfo.username == '{user}' || has(object.metadata.deletionTimestamp)"),
                "message": "written by someone else than the deployer"}]
        }
    }))
    .await;
    create(client, None, "validatingadmissionpolicybindings", json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]}
    }))
    .await;
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(client.clone(), ns);
    let probe = serde_json::from_value(json!({
        "metadata": {"name": "probe", "labels": {"plumb-imp": "x"}}
    }))
    .expect("probe");
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    for _ in 0..600 {
        if cms.create(&dry, &probe).await.is_err() {
            return name;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the ValidatingAdmissionPolicy {name} never refused the test's own write");
}

async fn drop_policy(client: &kube::Client, name: &str) {
    for plural in [
        "validatingadmissionpolicybindings",
        "validatingadmissionpolicies",
    ] {
        let ar = kube::api::ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: String::new(),
            plural: plural.into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
}

fn labelled(name: &str, hook: Option<&str>) -> String {
    let annotations = hook.map_or(String::new(), |h| {
        format!("  annotations:\n    argocd.argoproj.io/hook: {h}\n")
    });
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    plumb-imp: \"yes\"\n{annotations}data:\n  value: one\n"
    )
}

fn state(app: &Value) -> String {
    app["status"]["operationState"].to_string()
}

/// The allowed namespace is written as the ServiceAccount (the admission policy admits no one
/// else), a PreSync hook included; the namespace its Role does not cover is refused by the API
/// server with the account named, and nothing lands there; a prune the account may not do is
/// refused and the object stays; a destination no entry matches is refused with Argo's message;
/// the cascade deletion deletes as the account too.
#[tokio::test]
async fn syncs_write_as_the_projects_service_account() {
    let env = TestEnv::shared();
    let ctl = impersonating_controller(env, "ctl-imp").await;
    let (allowed, other, unlisted) = (
        env.namespace("imp-a"),
        env.namespace("imp-b"),
        env.namespace("imp-c"),
    );
    let (a, b) = (allowed.name(), other.name());
    let user = format!("system:serviceaccount:{a}:deployer");
    deployer(&ctl.client, a).await;
    let policy = only_user_writes(&ctl.client, a, &user).await;
    create_project(
        &ctl,
        "imp",
        json!({
            "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
            "destinationServiceAccounts": [
                {"server": IN_CLUSTER, "namespace": a, "defaultServiceAccount": "deployer"},
                {"server": "https://kubernetes.*", "namespace": "imp-b-*",
                 "defaultServiceAccount": format!("{a}:deployer")},
            ]
        }),
    )
    .await;
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/kept.yaml", labelled("kept", None)),
            ("app/gone.yaml", labelled("gone", None)),
            ("app/pre.yaml", labelled("pre", Some("PreSync"))),
        ],
        "three",
    );
    let source = json!({"repoURL": repo.url(), "path": "app"});

    let app_a = unique("imp-a");
    create_app(&ctl, &app_a, "imp", source.clone(), a, json!({})).await;
    let synced = ctl.sync(&app_a, json!({})).await;
    assert_eq!(
        synced["status"]["operationState"]["phase"],
        "Succeeded",
        "{}",
        state(&synced)
    );
    for name in ["kept", "gone", "pre"] {
        assert!(
            get(&ctl, cm(), a, name).await.is_some(),
            "{name} written in {a}"
        );
    }

    let app_b = unique("imp-b");
    create_app(&ctl, &app_b, "imp", source.clone(), b, json!({})).await;
    let refused = ctl.sync(&app_b, json!({})).await;
    let st = state(&refused);
    assert_ne!(
        refused["status"]["operationState"]["phase"], "Succeeded",
        "{st}"
    );
    assert!(
        st.contains("forbidden") && st.contains(&format!("User \\\"{user}\\\"")),
        "{st}"
    );
    for name in ["kept", "gone", "pre"] {
        assert!(
            get(&ctl, cm(), b, name).await.is_none(),
            "nothing written in {b}"
        );
    }

    let app_c = unique("imp-c");
    create_app(
        &ctl,
        &app_c,
        "imp",
        source.clone(),
        unlisted.name(),
        json!({}),
    )
    .await;
    let unmatched = ctl.sync(&app_c, json!({})).await;
    assert_eq!(unmatched["status"]["operationState"]["phase"], "Error");
    assert_eq!(
        op_message(&unmatched),
        format!(
            "no matching service account found for destination server {IN_CLUSTER} and namespace {}",
            unlisted.name()
        )
    );
    assert!(get(&ctl, cm(), unlisted.name(), "kept").await.is_none());

    repo.remove(&["app/gone.yaml"], "gone goes");
    let pruned = ctl.sync(&app_a, json!({"prune": true})).await;
    let st = state(&pruned);
    assert_ne!(
        pruned["status"]["operationState"]["phase"], "Succeeded",
        "{st}"
    );
    assert!(
        st.contains("cannot delete resource") && st.contains(&user),
        "{st}"
    );
    assert!(
        get(&ctl, cm(), a, "gone").await.is_some(),
        "the refused prune deleted nothing"
    );

    cascade_delete_as_the_account(&ctl, &app_a, a, &user).await;
    drop_policy(&ctl.client, &policy).await;
}

/// Deleting the Application with Argo's resources finalizer deletes its objects as the account,
/// which may not: a DeletionError names the refusal and the objects stay.
async fn cascade_delete_as_the_account(ctl: &Controlled, app: &str, ns: &str, user: &str) {
    ctl.patch_app(
        app,
        json!({"metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io"]}}),
    )
    .await;
    ctl.apps()
        .delete(app, &DeleteParams::default())
        .await
        .expect("delete application");
    let stuck = ctl
        .wait_app(app, "DeletionError", |a| {
            a["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["type"] == "DeletionError"
                        && c["message"].as_str().is_some_and(|m| m.contains(user))
                })
            })
        })
        .await;
    assert!(
        stuck["status"]["conditions"]
            .to_string()
            .contains("forbidden")
    );
    assert!(
        get(ctl, cm(), ns, "kept").await.is_some(),
        "nothing deleted"
    );
    // Let the Application go, so that the namespace can.
    ctl.apps()
        .patch(
            app,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("remove the finalizer");
}

/// Entries Argo would refuse (a glob that does not compile, a blank name) and names no
/// ServiceAccount could have (spaces, two `:`) fail the sync naming the field; nothing is
/// written. With the setting off, the entries are not read at all (Argo's default).
#[tokio::test]
async fn invalid_entries_refuse_the_sync_naming_the_field() {
    let env = TestEnv::shared();
    let ctl = impersonating_controller(env, "ctl-imp-bad").await;
    let dest = env.namespace("imp-bad");
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("unwritten"))], "one");
    let cases = [
        (
            json!({"server": "[", "namespace": "*", "defaultServiceAccount": "sa"}),
            "invalid glob pattern for destination server: spec.destinationServiceAccounts[0].server",
        ),
        (
            json!({"server": "*", "namespace": "e[[a*", "defaultServiceAccount": "sa"}),
            "invalid glob pattern for destination namespace: spec.destinationServiceAccounts[0].namespace",
        ),
        (
            json!({"server": "*", "namespace": "*", "defaultServiceAccount": " "}),
            "default service account contains invalid chars ' '",
        ),
        (
            json!({"server": "*", "namespace": "*", "defaultServiceAccount": "my sa"}),
            "spec.destinationServiceAccounts[0].defaultServiceAccount \"my sa\"",
        ),
        (
            json!({"server": "*", "namespace": "*", "defaultServiceAccount": "a:b:c"}),
            "spec.destinationServiceAccounts[0].defaultServiceAccount \"a:b:c\"",
        ),
    ];
    for (i, (entry, expected)) in cases.into_iter().enumerate() {
        let project = format!("bad-{i}");
        create_project(
            &ctl,
            &project,
            json!({
                "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                "destinationServiceAccounts": [entry]
            }),
        )
        .await;
        let name = unique("imp-bad");
        let source = json!({"repoURL": repo.url(), "path": "app"});
        create_app(&ctl, &name, &project, source, dest.name(), json!({})).await;
        let app = ctl.sync(&name, json!({})).await;
        assert_eq!(
            app["status"]["operationState"]["phase"],
            "Error",
            "{}",
            state(&app)
        );
        let msg = op_message(&app);
        assert!(
            msg.starts_with("failed to derive service account to impersonate: "),
            "{msg}"
        );
        assert!(msg.contains(expected), "{msg}");
        assert!(get(&ctl, cm(), dest.name(), "unwritten").await.is_none());
    }
}

/// Without the setting, a project's `destinationServiceAccounts` change nothing: the sync writes
/// with the controller's own rights even where the named account could not.
#[tokio::test]
async fn without_the_setting_the_accounts_are_not_used() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-imp-off").await;
    let dest = env.namespace("imp-off");
    create_project(
        &ctl,
        "named",
        json!({
            "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
            "destinationServiceAccounts": [
                {"server": "*", "namespace": "*", "defaultServiceAccount": "nobody"}]
        }),
    )
    .await;
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("written"))], "one");
    let name = unique("imp-off");
    let source = json!({"repoURL": repo.url(), "path": "app"});
    create_app(&ctl, &name, "named", source, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"],
        "Succeeded",
        "{}",
        state(&app)
    );
    assert!(get(&ctl, cm(), dest.name(), "written").await.is_some());
}
