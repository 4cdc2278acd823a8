//! Project enforcement end to end, one test per rule: every source a sync renders (spec,
//! `spec.sources`, the operation's `source`/`sources`, a rollback's history source), the
//! destination and each object's namespace, the cluster and namespace resource lists for every
//! object a sync writes (hooks, the Namespace of `CreateNamespace` and its
//! `managedNamespaceMetadata`), and the namespace an Application lives in. Each refusal happens
//! before the first write.

use kube::api::{Api, DynamicObject, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::{Controlled, resource};

pub(crate) fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

pub(crate) fn unique(prefix: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

pub(crate) async fn create_project(ctl: &Controlled, name: &str, spec: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name}, "spec": spec
    }))
    .expect("project");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create project");
}

pub(crate) async fn create_app(
    ctl: &Controlled,
    name: &str,
    project: &str,
    source: Value,
    dest: &str,
    policy: Value,
) {
    let mut spec = json!({"project": project,
        "destination": {"server": "https://kubernetes.default.svc", "namespace": dest},
        "syncPolicy": policy});
    if source.is_array() {
        spec["sources"] = source;
    } else {
        spec["source"] = source;
    }
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name}, "spec": spec
    }))
    .await;
}

/// A live object, if it exists (`ns` empty: cluster-scoped).
pub(crate) async fn get(
    ctl: &Controlled,
    ar: kube::api::ApiResource,
    ns: &str,
    name: &str,
) -> Option<Value> {
    let api: Api<DynamicObject> = if ns.is_empty() {
        Api::all_with(ctl.client.clone(), &ar)
    } else {
        Api::namespaced_with(ctl.client.clone(), ns, &ar)
    };
    api.get_opt(name)
        .await
        .expect("get")
        .map(|o| serde_json::to_value(o).expect("json"))
}

pub(crate) fn cm() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn namespace() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&())
}

fn has_condition(app: &Value, kind: &str, text: &str) -> bool {
    app["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == kind && c["message"].as_str().unwrap_or_default().contains(text))
    })
}

pub(crate) fn op_message(app: &Value) -> String {
    app["status"]["operationState"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn source_repos_hold_the_operation_source_and_a_rollback_history_source() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-opsrc").await;
    let dest = env.namespace("dest-opsrc");
    let allowed = GitRepo::new();
    allowed.commit(&[("app/cm.yaml", config_map("settings"))], "allowed");
    let other = GitRepo::new();
    other.commit(
        &[("app/cm.yaml", config_map("payload"))],
        "not in the project",
    );
    create_project(
        &ctl,
        "teams",
        json!({"sourceRepos": [allowed.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    )
    .await;
    let name = unique("opsrc");
    create_app(
        &ctl,
        &name,
        "teams",
        json!({"repoURL": allowed.url(), "path": "app"}),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");

    // `operation.sync.source` (what a rollback writes, and what anyone who may edit the
    // Application can write) is rendered and applied: it is held to sourceRepos.
    let refused = format!(
        "application repo {} is not permitted in project 'teams' (sourceRepos)",
        other.url()
    );
    let app = ctl
        .sync(
            &name,
            json!({"source": {"repoURL": other.url(), "path": "app"}}),
        )
        .await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Error",
        "{:#}",
        app["status"]["operationState"]
    );
    assert_eq!(op_message(&app), refused);
    assert!(
        get(&ctl, cm(), dest.name(), "payload").await.is_none(),
        "nothing from the other repository"
    );
    // The same through `operation.sync.sources`.
    let app = ctl
        .sync(
            &name,
            json!({"sources": [{"repoURL": other.url(), "path": "app"}]}),
        )
        .await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert_eq!(op_message(&app), refused);
    // The refusal belongs to the operation: the Application itself is valid again.
    ctl.wait_app(&name, "valid again", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && !has_condition(a, "InvalidSpecError", "sourceRepos")
    })
    .await;

    // A rollback to a history entry whose repository the project no longer permits: the
    // Application moved from `other` to `allowed`, then the project dropped `other`.
    let moving = unique("rollback");
    let wide = "wide";
    create_project(
        &ctl,
        wide,
        json!({"sourceRepos": [allowed.url(), other.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    )
    .await;
    create_app(
        &ctl,
        &moving,
        wide,
        json!({"repoURL": other.url(), "path": "app"}),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&moving, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let old = app["status"]["history"][0].clone();
    ctl.patch_app(
        &moving,
        json!({"spec": {"source": {"repoURL": allowed.url(), "path": "app"}}}),
    )
    .await;
    ctl.patch_app(&moving, json!({"spec": {"project": "teams"}}))
        .await;
    let app = ctl
        .sync(
            &moving,
            json!({"revision": old["revision"], "source": old["source"], "syncStrategy": {"apply": {}}}),
        )
        .await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert_eq!(op_message(&app), refused);
}

#[tokio::test]
async fn source_repos_hold_every_spec_source() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-specsrc").await;
    let dest = env.namespace("dest-specsrc");
    let allowed = GitRepo::new();
    allowed.commit(&[("app/cm.yaml", config_map("settings"))], "allowed");
    let other = GitRepo::new();
    other.commit(&[("app/cm.yaml", config_map("payload"))], "other");
    create_project(
        &ctl,
        "teams",
        json!({"sourceRepos": [allowed.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    )
    .await;
    let name = unique("multi");
    create_app(
        &ctl,
        &name,
        "teams",
        json!([{"repoURL": allowed.url(), "path": "app"}, {"repoURL": other.url(), "path": "app"}]),
        dest.name(),
        json!({}),
    )
    .await;
    let refused = format!(
        "application repo {} is not permitted in project 'teams' (sourceRepos)",
        other.url()
    );
    ctl.wait_app(&name, "InvalidSpecError", |a| {
        has_condition(a, "InvalidSpecError", &refused)
    })
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert_eq!(op_message(&app), refused);
    assert!(get(&ctl, cm(), dest.name(), "settings").await.is_none());
    assert!(get(&ctl, cm(), dest.name(), "payload").await.is_none());

    // A single `spec.source`.
    let single = unique("single");
    create_app(
        &ctl,
        &single,
        "teams",
        json!({"repoURL": other.url(), "path": "app"}),
        dest.name(),
        json!({"automated": {}}),
    )
    .await;
    let app = ctl
        .wait_app(&single, "InvalidSpecError", |a| {
            has_condition(a, "InvalidSpecError", &refused)
        })
        .await;
    assert_eq!(app["status"]["sync"]["status"], "Unknown");
    assert!(
        app["status"]["operationState"].is_null(),
        "no automated sync"
    );
    assert!(get(&ctl, cm(), dest.name(), "payload").await.is_none());
}

#[tokio::test]
async fn cluster_resource_lists_hold_the_namespace_of_create_namespace() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-createns").await;
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings"))], "one");
    // Namespaces may be a destination, but no cluster-scoped kind may be written.
    create_project(
        &ctl,
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}),
    )
    .await;
    let fresh = unique("created-ns");
    let name = unique("createns");
    create_app(
        &ctl,
        &name,
        "teams",
        json!({"repoURL": repo.url(), "path": "app"}),
        &fresh,
        json!({"syncOptions": ["CreateNamespace=true"]}),
    )
    .await;
    let app = ctl.sync(&name, json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        "one or more synchronization tasks are not valid: resource :Namespace is not permitted in project teams (clusterResourceWhitelist)"
    );
    assert!(
        get(&ctl, namespace(), "", &fresh).await.is_none(),
        "the namespace was not created"
    );

    // managedNamespaceMetadata on a namespace that exists: not labelled either.
    let existing = env.namespace("labelled");
    let labelled = unique("nsmeta");
    create_app(
        &ctl,
        &labelled,
        "teams",
        json!({"repoURL": repo.url(), "path": "app"}),
        existing.name(),
        json!({"syncOptions": ["CreateNamespace=true"],
               "managedNamespaceMetadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}),
    )
    .await;
    let app = ctl.sync(&labelled, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Failed");
    let ns = get(&ctl, namespace(), "", existing.name())
        .await
        .expect("namespace");
    assert!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].is_null(),
        "{ns:#}"
    );
    assert!(
        get(&ctl, cm(), existing.name(), "settings").await.is_none(),
        "nothing applied"
    );

    // A blacklist entry refuses it even under a wildcard whitelist.
    create_project(
        &ctl,
        "blacklisted",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
               "clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}]}),
    )
    .await;
    ctl.patch_app(&name, json!({"spec": {"project": "blacklisted"}}))
        .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        op_message(&app),
        "one or more synchronization tasks are not valid: resource :Namespace is not permitted in project blacklisted (clusterResourceBlacklist: denied by ':Namespace')"
    );
    assert!(get(&ctl, namespace(), "", &fresh).await.is_none());
}

#[tokio::test]
async fn resource_lists_and_destinations_hold_hooks() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-hooks").await;
    let dest = env.namespace("team-hooks");
    let other = env.namespace("other-hooks");
    let repo = GitRepo::new();
    let job = |name: &str, ns: Option<&str>| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n{}  annotations:\n    argocd.argoproj.io/hook: PreSync\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: run\n        image: busybox\n",
            ns.map(|n| format!("  namespace: {n}\n"))
                .unwrap_or_default()
        )
    };
    repo.commit(
        &[
            ("app/cm.yaml", config_map("settings")),
            ("app/hook.yaml", job("migrate", None)),
        ],
        "a hook",
    );
    create_project(
        &ctl,
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "team-*"}],
               "namespaceResourceBlacklist": [{"group": "batch", "kind": "Job"}]}),
    )
    .await;
    let name = unique("hooks");
    create_app(
        &ctl,
        &name,
        "teams",
        json!({"repoURL": repo.url(), "path": "app"}),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Failed");
    assert_eq!(
        op_message(&app),
        "one or more synchronization tasks are not valid: resource batch:Job is not permitted in project teams (namespaceResourceBlacklist: denied by 'batch:Job')"
    );
    let jobs = kube::api::ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&());
    assert!(
        get(&ctl, jobs.clone(), dest.name(), "migrate")
            .await
            .is_none()
    );
    assert!(get(&ctl, cm(), dest.name(), "settings").await.is_none());

    // A hook that names a namespace outside the destinations.
    repo.commit(
        &[("app/hook.yaml", job("escape", Some(other.name())))],
        "hook elsewhere",
    );
    let open = "open";
    create_project(
        &ctl,
        open,
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "team-*"}]}),
    )
    .await;
    ctl.patch_app(&name, json!({"spec": {"project": open}}))
        .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        op_message(&app),
        format!(
            "one or more synchronization tasks are not valid: namespace {} is not permitted in project 'open' (destinations)",
            other.name()
        )
    );
    assert!(get(&ctl, jobs, other.name(), "escape").await.is_none());
}

#[tokio::test]
async fn namespace_resource_whitelist_and_object_namespaces_hold_every_object() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-nslist").await;
    let dest = env.namespace("team-nslist");
    let other = env.namespace("other-nslist");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/cm.yaml", config_map("settings")),
            (
                "app/secret.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  token: t\n"
                    .to_string(),
            ),
        ],
        "cm and secret",
    );
    create_project(
        &ctl,
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "team-*"}],
               "namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap"}]}),
    )
    .await;
    let name = unique("nslist");
    create_app(
        &ctl,
        &name,
        "teams",
        json!({"repoURL": repo.url(), "path": "app"}),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl
        .wait_app(&name, "compared", |a| {
            resource(a, "Secret")["status"] == "Unknown"
        })
        .await;
    assert_eq!(
        resource(&app, "Secret")["health"]["message"],
        "resource :Secret is not permitted in project teams (namespaceResourceWhitelist)"
    );
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        op_message(&app),
        "one or more synchronization tasks are not valid: resource :Secret is not permitted in project teams (namespaceResourceWhitelist)"
    );
    assert!(get(&ctl, cm(), dest.name(), "settings").await.is_none());

    // An object naming a namespace outside the destinations.
    repo.remove(&["app/secret.yaml"], "no secret");
    repo.commit(
        &[(
            "app/cm.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {}\n",
                other.name()
            ),
        )],
        "elsewhere",
    );
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        op_message(&app),
        format!(
            "one or more synchronization tasks are not valid: namespace {} is not permitted in project 'teams' (destinations)",
            other.name()
        )
    );
    assert!(get(&ctl, cm(), other.name(), "settings").await.is_none());
}

#[tokio::test]
async fn applications_outside_the_control_namespace_are_not_reconciled() {
    // `sourceNamespaces`: Plumb reconciles Applications of its control namespace only, so an
    // Application created elsewhere (by someone who may write Applications there) is inert,
    // whatever its project says.
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-srcns").await;
    let elsewhere = env.namespace("apps-elsewhere");
    let dest = env.namespace("dest-srcns");
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings"))], "one");
    let name = unique("stray");
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        elsewhere.name(),
        &plumb_app::application_resource(),
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {}}},
        "operation": {"sync": {}}
    }))
    .expect("application");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
    // A witness in the control namespace proves the controller is working meanwhile.
    let witness = unique("witness");
    create_app(
        &ctl,
        &witness,
        "default",
        json!({"repoURL": repo.url(), "path": "app"}),
        dest.name(),
        json!({}),
    )
    .await;
    ctl.wait_app(&witness, "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    let stray = serde_json::to_value(api.get(&name).await.expect("get")).expect("json");
    assert!(stray["status"].is_null(), "{:#}", stray["status"]);
    assert!(get(&ctl, cm(), dest.name(), "settings").await.is_none());
}

/// `signatureKeys` end to end, keys and signatures made by the real `gpg` and `git`: a commit
/// signed by an allowed key syncs; an unsigned commit, one signed by a key of the keyring the
/// project does not allow, and one signed by an expired key are each refused with Argo's
/// ComparisonError (also on the Application's conditions) and nothing is written.
#[tokio::test]
async fn signature_keys_admit_only_commits_signed_by_an_allowed_valid_key() {
    use plumb_testenv::gpg::GpgKey;
    let env = TestEnv::shared();
    crate::support::install_crds(env);
    let ns = env.namespace("ctl-gpg");
    let allowed = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let other = GpgKey::generate("Someone Else <else@plumb.invalid>");
    let expired = GpgKey::expired("Old Bot <old@plumb.invalid>");
    let keys: serde_json::Map<String, Value> = [&allowed, &other, &expired]
        .iter()
        .map(|k| (k.key_id().to_string(), Value::String(k.public_key())))
        .collect();
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(env.client().await, ns.name());
    let keys_cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "argocd-gpg-keys-cm"}, "data": keys
    }))
    .expect("argocd-gpg-keys-cm");
    cms.create(&PostParams::default(), &keys_cm)
        .await
        .expect("create argocd-gpg-keys-cm");
    let ctl = Controlled::start_in(env, ns).await;
    let dest = env.namespace("dest-gpg");
    create_project(
        &ctl,
        "signed",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "signatureKeys": [{"keyID": allowed.key_id()}, {"keyID": expired.fingerprint()}]}),
    )
    .await;
    let repo = GitRepo::new();
    repo.commit(&[("README", "base")], "base");
    let mut refused = Vec::new();
    for (branch, cm_name) in [
        ("unsigned", "gpg-unsigned"),
        ("other", "gpg-other"),
        ("expired", "gpg-expired"),
    ] {
        repo.checkout("main");
        repo.git(&["checkout", "-q", "-b", branch]);
        let files = [("app/cm.yaml", config_map(cm_name))];
        let sha = match branch {
            "unsigned" => repo.commit(&files, branch),
            "other" => other.commit(&repo, &files, branch),
            _ => expired.commit(&repo, &files, branch),
        };
        refused.push((branch, cm_name, sha));
    }
    repo.checkout("main");
    repo.git(&["checkout", "-q", "-b", "good"]);
    allowed.commit(&repo, &[("app/cm.yaml", config_map("gpg-good"))], "good");

    let name = unique("gpg-good");
    create_app(
        &ctl,
        &name,
        "signed",
        json!({"repoURL": repo.url(), "path": "app", "targetRevision": "good"}),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]
    );
    assert!(get(&ctl, cm(), dest.name(), "gpg-good").await.is_some());

    let identity = "Plumb Test <test@plumb.invalid>";
    for (branch, cm_name, sha) in refused {
        let verdict = match branch {
            "unsigned" => "unsigned (key_id=)".to_string(),
            "other" => format!("signed with unallowed key (key_id={})", other.key_id()),
            _ => format!("signed with expired key (key_id={})", expired.key_id()),
        };
        let expected =
            format!("GIT/GPG: Failed verifying revision {sha} by '{identity}': {verdict}");
        let name = unique(&format!("gpg-{branch}"));
        create_app(
            &ctl,
            &name,
            "signed",
            json!({"repoURL": repo.url(), "path": "app", "targetRevision": branch}),
            dest.name(),
            json!({}),
        )
        .await;
        let app = ctl.sync(&name, json!({})).await;
        let st = &app["status"]["operationState"];
        assert_eq!(st["phase"], "Error", "{branch}: {st:#}");
        assert_eq!(
            op_message(&app),
            format!("ComparisonError: {expected}"),
            "{branch}"
        );
        assert!(
            get(&ctl, cm(), dest.name(), cm_name).await.is_none(),
            "{branch}: nothing applied"
        );
        let app = ctl
            .wait_app(&name, "the ComparisonError condition", |a| {
                a["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter().any(|c| {
                        c["type"] == "ComparisonError" && c["message"] == expected.as_str()
                    })
                })
            })
            .await;
        assert_eq!(
            app["status"]["sync"]["status"], "OutOfSync",
            "{branch}: the diff is still shown"
        );
    }
}

fn cluster_role_yaml(name: &str) -> String {
    format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"pods\"]\n  verbs: [\"get\"]\n"
    )
}

fn cluster_role() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<k8s_openapi::api::rbac::v1::ClusterRole>(&())
}

/// A `clusterResourceWhitelist` entry with a `name` permits only the objects its pattern
/// matches (Argo's `IsGroupKindNamePermitted`): a ClusterRole named `app-*` syncs, another name
/// is refused with Argo's message and nothing is written. The API server must keep `name`
/// (Plumb's CRD declares it): a pruned name would widen the entry to every ClusterRole.
#[tokio::test]
async fn a_named_cluster_resource_whitelist_entry_permits_only_matching_names() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-named").await;
    let dest = env.namespace("named-dest");
    let spec = json!({"sourceRepos": ["*"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "*"}],
        "clusterResourceWhitelist": [
            {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "app-*"}]});
    let projects: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    // Test processes of other checkouts may apply their own CRDs to a shared control plane
    // meanwhile: the project is written again under this checkout's CRD until it keeps the name.
    for attempt in 0.. {
        crate::support::install_crds(env);
        let _ = projects
            .delete("teams", &kube::api::DeleteParams::default())
            .await;
        while projects.get_opt("teams").await.expect("get").is_some() {
            tokio::task::yield_now().await;
        }
        create_project(&ctl, "teams", spec.clone()).await;
        let stored = get(
            &ctl,
            plumb_app::appproject_resource(),
            ctl.ns.name(),
            "teams",
        )
        .await
        .expect("project");
        if stored["spec"]["clusterResourceWhitelist"][0]["name"] == "app-*" {
            break;
        }
        assert!(
            attempt < 5,
            "the API server keeps dropping the name: {stored}"
        );
    }
    let reader = unique("app-reader");
    let other = unique("other");
    let mut repos = Vec::new();
    for (name, role) in [("reader", &reader), ("other", &other)] {
        let repo = GitRepo::new();
        repo.commit(&[("app/role.yaml", cluster_role_yaml(role))], "one");
        create_app(
            &ctl,
            name,
            "teams",
            json!({"repoURL": repo.url(), "path": "app"}),
            dest.name(),
            json!({}),
        )
        .await;
        repos.push(repo);
    }
    let app = ctl.sync("reader", json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert!(get(&ctl, cluster_role(), "", &reader).await.is_some());

    let message = "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project teams (clusterResourceWhitelist)";
    let app = ctl
        .wait_app("other", "compared", |a| {
            crate::support::resource(a, "ClusterRole")["status"] == "Unknown"
        })
        .await;
    assert_eq!(
        crate::support::resource(&app, "ClusterRole")["health"]["message"],
        message
    );
    let app = ctl.sync("other", json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        format!("one or more synchronization tasks are not valid: {message}")
    );
    assert!(
        get(&ctl, cluster_role(), "", &other).await.is_none(),
        "nothing written"
    );
    let roles: Api<DynamicObject> = Api::all_with(ctl.client.clone(), &cluster_role());
    let _ = roles
        .delete(&reader, &kube::api::DeleteParams::default())
        .await;
}

/// `sourceIntegrity` (Argo 3.6) end to end: a signed tip over an unsigned parent syncs under a
/// `head` policy and is refused under `strict` (the unsigned parent named, nothing written); a
/// policy for other repositories leaves this one unverified.
#[tokio::test]
async fn source_integrity_head_admits_a_signed_tip_and_strict_refuses_its_unsigned_parent() {
    use plumb_testenv::gpg::GpgKey;
    let env = TestEnv::shared();
    crate::support::install_crds(env);
    let ns = env.namespace("ctl-integrity");
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(env.client().await, ns.name());
    let keys_cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "argocd-gpg-keys-cm"},
        "data": {key.key_id(): key.public_key()}
    }))
    .expect("argocd-gpg-keys-cm");
    cms.create(&PostParams::default(), &keys_cm)
        .await
        .expect("create argocd-gpg-keys-cm");
    let ctl = Controlled::start_in(env, ns).await;
    let dest = env.namespace("dest-integrity");
    let repo = GitRepo::new();
    let parent = repo.commit(&[("README", "base")], "unsigned base");
    key.commit(
        &repo,
        &[("app/cm.yaml", config_map("si-head"))],
        "signed tip",
    );
    let policy = |url: &str, mode: &str| {
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceIntegrity": {"git": {"policies": [
                   {"repos": [{"url": url}], "gpg": {"mode": mode, "keys": [key.key_id()]}}]}}})
    };
    create_project(&ctl, "si-head", policy("*", "head")).await;
    create_project(&ctl, "si-strict", policy("*", "strict")).await;
    create_project(
        &ctl,
        "si-elsewhere",
        policy("https://elsewhere/*", "strict"),
    )
    .await;
    let source = json!({"repoURL": repo.url(), "path": "app", "targetRevision": "main"});

    let expected = format!(
        "GIT/GPG: Failed verifying revision {parent} by 'Plumb Test <test@plumb.invalid>': \
         unsigned (key_id=)"
    );
    let strict = unique("si-strict");
    create_app(
        &ctl,
        &strict,
        "si-strict",
        source.clone(),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&strict, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert_eq!(op_message(&app), format!("ComparisonError: {expected}"));
    assert!(
        get(&ctl, cm(), dest.name(), "si-head").await.is_none(),
        "nothing applied under strict"
    );
    ctl.wait_app(&strict, "the ComparisonError condition", |a| {
        a["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "ComparisonError" && c["message"] == expected.as_str())
        })
    })
    .await;

    let head = unique("si-head");
    create_app(
        &ctl,
        &head,
        "si-head",
        source.clone(),
        dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&head, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]
    );
    assert!(get(&ctl, cm(), dest.name(), "si-head").await.is_some());

    let elsewhere = unique("si-elsewhere");
    let other_dest = env.namespace("dest-integrity-b");
    create_app(
        &ctl,
        &elsewhere,
        "si-elsewhere",
        source,
        other_dest.name(),
        json!({}),
    )
    .await;
    let app = ctl.sync(&elsewhere, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "a policy for other repositories verifies nothing: {:#}",
        app["status"]
    );
}
