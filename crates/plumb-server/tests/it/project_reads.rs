//! Git can name any object; the project decides which the Application may touch. Through the
//! API, one the project forbids is listed as compared but its live state is never read out:
//! `applications, get` must not become a read of namespaces the project does not grant.

use kube::api::{Api, DynamicObject, PostParams};
use plumb_app::appproject_resource;
use plumb_testenv::git::GitRepo;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, env};

#[tokio::test]
async fn objects_the_project_forbids_show_no_live_state_and_no_tree_node() {
    let stack = Stack::start("srv-reads").await;
    let env = env();
    let allowed = env.namespace("srv-reads-allowed");
    let other = env.namespace("srv-reads-other");
    let client = env.client().await;
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), stack.ns.name(), &appproject_resource());
    let project: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "reads-team"},
        "spec": {"sourceRepos": ["*"],
                 "destinations": [{"server": "https://kubernetes.default.svc", "namespace": allowed.name()}]}
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &project)
        .await
        .expect("create project");
    // The allowed object exists; so does, in the namespace the project does not grant, the
    // one Git also names.
    let create = |ns: &str, name: &str, literal: &str| {
        let out = env
            .kubectl()
            .args(["-n", ns, "create", "configmap", name, literal])
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    create(allowed.name(), "reads-mine", "--from-literal=a=b");
    create(
        other.name(),
        "reads-stolen",
        "--from-literal=token=other-teams-value",
    );

    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/mine.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reads-mine\ndata:\n  a: b\n"
                    .to_string(),
            ),
            (
                "app/stolen.yaml",
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reads-stolen\n  namespace: {}\ndata:\n  token: x\n",
                    other.name()
                ),
            ),
        ],
        "one allowed, one not",
    );
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "srv-reads"},
        "spec": {"project": "reads-team",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": allowed.name()}}
    });
    let (code, body) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&app),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    // Compared by the controller (a sync would fail: one task is not permitted).
    stack
        .wait_app("srv-reads", "compared", |a| {
            a["status"]["resources"]
                .as_array()
                .is_some_and(|r| r.len() == 2)
        })
        .await;

    let (code, managed) = stack
        .get("/api/v1/applications/srv-reads/managed-resources")
        .await;
    assert_eq!(code, 200, "{managed}");
    let text = managed.to_string();
    assert!(!text.contains("other-teams-value"), "{managed:#}");
    let items = managed["items"].as_array().expect("items");
    let by_name = |n: &str| -> &Value {
        items
            .iter()
            .find(|i| i["name"] == n)
            .unwrap_or_else(|| panic!("no {n} in {managed:#}"))
    };
    assert_eq!(by_name("reads-stolen")["liveState"], "null");
    assert_ne!(by_name("reads-mine")["liveState"], "null");

    let (code, tree) = stack
        .get("/api/v1/applications/srv-reads/resource-tree")
        .await;
    assert_eq!(code, 200, "{tree}");
    let names: Vec<&str> = tree["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(names.contains(&"reads-mine"), "{tree:#}");
    assert!(!names.contains(&"reads-stolen"), "{tree:#}");
    let (code, resource) = stack
        .get(&format!(
            "/api/v1/applications/srv-reads/resource?namespace={}&group=&version=v1&kind=ConfigMap&resourceName=reads-stolen",
            other.name()
        ))
        .await;
    assert_ne!(code, 200, "{resource}");
    assert!(!resource.to_string().contains("other-teams-value"));
}
