//! A namespaced cluster (Argo's `namespaces` and `clusterResources` in the cluster Secret),
//! reached with a real ServiceAccount token whose RBAC covers namespaces a and b only: an
//! Application into a syncs and is healthy, its live objects come from the per-namespace
//! watches (a cluster-wide list would be refused), an object in c or a cluster-scoped object is
//! refused with gitops-engine's message and nothing is written, and `clusterResources: "true"`
//! lets the cluster-scoped one through.

use std::process::Stdio;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::exec_cluster::api_server;
use crate::support::Controlled;

pub(crate) fn kubectl(env: &TestEnv, args: &[&str]) -> (bool, String) {
    let out = env.kubectl().args(args).output().expect("kubectl");
    let text = if out.status.success() {
        String::from_utf8_lossy(&out.stdout)
    } else {
        String::from_utf8_lossy(&out.stderr)
    };
    (out.status.success(), text.trim().to_string())
}

pub(crate) fn kubectl_ok(env: &TestEnv, args: &[&str]) -> String {
    let (ok, text) = kubectl(env, args);
    assert!(ok, "kubectl {args:?}: {text}");
    text
}

pub(crate) fn kubectl_apply(env: &TestEnv, obj: &Value) {
    use std::io::Write as _;
    let mut child = env
        .kubectl()
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("kubectl apply");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(obj.to_string().as_bytes())
        .expect("write");
    assert!(child.wait().expect("kubectl").success(), "apply {obj}");
}

/// ServiceAccount `sa` of `home` with every right in `namespaces` only (a Role and RoleBinding
/// in each, as Argo's `argocd-manager` of a namespaced cluster); its token from TokenRequest.
pub(crate) fn scoped_token(env: &TestEnv, home: &str, sa: &str, namespaces: &[&str]) -> String {
    kubectl_ok(env, &["-n", home, "create", "serviceaccount", sa]);
    for ns in namespaces {
        kubectl_apply(
            env,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": sa, "namespace": ns},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
        );
        kubectl_apply(
            env,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": sa, "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": home}]}),
        );
    }
    kubectl_ok(env, &["-n", home, "create", "token", sa, "--duration=1h"])
}

/// A ClusterRole over the cluster-scoped resources only (every name `kubectl api-resources
/// --namespaced=false` lists), bound to the ServiceAccount: what `clusterResources` needs.
fn grant_cluster_scoped(env: &TestEnv, name: &str, home: &str, sa: &str) {
    let names = kubectl_ok(env, &["api-resources", "--namespaced=false", "-o", "name"]);
    let resources: Vec<&str> = names
        .lines()
        .map(|n| n.split('.').next().unwrap_or(n))
        .collect();
    kubectl_apply(
        env,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["*"], "resources": resources, "verbs": ["*"]}]}),
    );
    kubectl_apply(
        env,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": home}]}),
    );
}

pub(crate) fn conditions(app: &Value) -> String {
    app["status"]["conditions"].to_string()
}

/// Whether a ComparisonError with exactly this message stands.
pub(crate) fn refused(app: &Value, message: &str) -> bool {
    app["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "ComparisonError" && c["message"] == message)
}

#[tokio::test]
async fn a_namespaced_cluster_manages_its_namespaces_only() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-nscl").await;
    let home = ctl.ns.name().to_string();
    let (a, b, c) = (
        env.namespace("nscl-a"),
        env.namespace("nscl-b"),
        env.namespace("nscl-c"),
    );
    let (server, ca) = api_server(env);
    let token = scoped_token(env, &home, "scoped", &[a.name(), b.name()]);
    let (ok, text) = kubectl(
        env,
        &[
            "auth",
            "can-i",
            "list",
            "configmaps",
            "--all-namespaces",
            &format!("--as=system:serviceaccount:{home}:scoped"),
        ],
    );
    // `can-i` answers "no" with exit status 1.
    assert!(!ok, "a cluster-wide list is allowed: {text}");
    let priority = format!("plumb-{home}");
    let secrets: Api<Secret> = Api::namespaced(ctl.client.clone(), &home);
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "cluster-scoped-sa", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": "scoped", "server": server,
                       "namespaces": format!("{},{}", a.name(), b.name()),
                       "config": json!({"bearerToken": token, "tlsClientConfig": {"caData": ca}}).to_string()}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create cluster secret");

    let cm = |ns: &str, name: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  k: v\n"
        )
    };
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("in-a/one.yaml", cm(a.name(), "one").as_str()),
            ("in-a/two.yaml", cm(a.name(), "two").as_str()),
            ("into-c/cm.yaml", cm(c.name(), "elsewhere").as_str()),
            (
                "cluster/pc.yaml",
                format!("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {priority}\nvalue: 7\n").as_str(),
            ),
        ],
        "apps",
    );
    for (name, path) in [
        ("in-a", "in-a"),
        ("into-c", "into-c"),
        ("cluster", "cluster"),
    ] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": path},
                     "destination": {"name": "scoped", "namespace": a.name()}}
        }))
        .await;
    }

    // Into a: synced and healthy.
    ctl.wait_app("in-a", "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    let app = ctl.sync("in-a", json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]["operationState"]
    );
    ctl.wait_app("in-a", "Synced and Healthy", |a| {
        a["status"]["sync"]["status"] == "Synced" && a["status"]["health"]["status"] == "Healthy"
    })
    .await;
    // An object removed from Git is found through the live cache's watch of a (tracked objects
    // come from it alone): a cache listing cluster-wide would have been refused and seen none.
    repo.remove(&["in-a/two.yaml"], "drop two");
    ctl.patch_app(
        "in-a",
        json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "hard"}}}),
    )
    .await;
    let app = ctl
        .wait_app("in-a", "the removed object to prune", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    let two = app["status"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "two")
        .cloned()
        .unwrap_or_default();
    assert_eq!(two["requiresPruning"], true, "{:#}", app["status"]);

    // Into c, and cluster-scoped: refused with gitops-engine's messages, nothing written.
    let outside = format!(
        "Failed to load live state: namespace \"{}\" for ConfigMap \"elsewhere\" is not managed",
        c.name()
    );
    let cluster_level = format!(
        "Failed to load live state: cluster level PriorityClass \"{priority}\" can not be managed when in namespaced mode"
    );
    for (app_name, message) in [("into-c", &outside), ("cluster", &cluster_level)] {
        let app = ctl
            .wait_app(app_name, "refused", |a| refused(a, message))
            .await;
        assert_eq!(app["status"]["sync"]["status"], "Unknown");
        let app = ctl.sync(app_name, json!({})).await;
        let st = &app["status"]["operationState"];
        assert_eq!(st["phase"], "Error", "{st:#}");
        assert_eq!(
            st["message"],
            format!("ComparisonError: {message}"),
            "{st:#}"
        );
    }
    let (found, _) = kubectl(env, &["-n", c.name(), "get", "configmap", "elsewhere"]);
    assert!(!found, "nothing written in c");
    let (found, _) = kubectl(env, &["get", "priorityclass", &priority]);
    assert!(!found, "nothing written at cluster level");

    // clusterResources: "true" (and the rights to go with it) lets the cluster-scoped one in.
    let role = format!("plumb-test-{home}");
    grant_cluster_scoped(env, &role, &home, "scoped");
    secrets
        .patch(
            "cluster-scoped-sa",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"clusterResources": "true"}})),
        )
        .await
        .expect("patch cluster secret");
    ctl.wait_app("cluster", "compared without refusal", |a| {
        a["status"]["sync"]["status"] == "OutOfSync" && !conditions(a).contains("ComparisonError")
    })
    .await;
    let app = ctl.sync("cluster", json!({})).await;
    let synced = app["status"]["operationState"].clone();
    let (found, _) = kubectl(env, &["get", "priorityclass", &priority]);
    for (kind, name) in [
        ("priorityclass", priority.as_str()),
        ("clusterrolebinding", role.as_str()),
        ("clusterrole", role.as_str()),
    ] {
        kubectl(env, &["delete", kind, name, "--ignore-not-found"]);
    }
    assert_eq!(synced["phase"], "Succeeded", "{synced:#}");
    assert!(found, "the PriorityClass was created");
    // c's Application is still refused: clusterResources adds no namespace.
    let app = ctl
        .wait_app("into-c", "still refused", |a| refused(a, &outside))
        .await;
    assert_eq!(app["status"]["sync"]["status"], "Unknown");

    // A Secret narrowing the in-cluster destination (Argo's namespaced install) narrows it as
    // for any cluster: the in-cluster cache is rebuilt with a's scope, and c is refused with
    // gitops-engine's message (namespace_install.rs runs a controller whose own RBAC is that
    // narrow).
    let narrowing: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "cluster-in-cluster", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": "in-cluster", "server": "https://kubernetes.default.svc",
                       "namespaces": a.name()}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &narrowing)
        .await
        .expect("create in-cluster secret");
    for (name, path) in [("local", "in-a"), ("local-into-c", "into-c")] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": path},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": a.name()}}
        }))
        .await;
    }
    ctl.wait_app("local-into-c", "refused", |a| refused(a, &outside))
        .await;
    let app = ctl
        .wait_app("local", "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
                || a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    assert!(!conditions(&app).contains("Error"), "{}", conditions(&app));
    // The Secret removed: the in-cluster destination is the whole cluster again.
    secrets
        .delete("cluster-in-cluster", &Default::default())
        .await
        .expect("delete in-cluster secret");
    ctl.wait_app("local-into-c", "compared over the whole cluster", |a| {
        a["status"]["sync"]["status"] == "OutOfSync" && !conditions(a).contains("ComparisonError")
    })
    .await;
    drop(b);
}
