//! The project administration routes: Argo's validation on create and update, Delete (refused
//! for `default` and while Applications use the project), GetDetailedProject (credentials never
//! leave), GetSyncWindowsState and ListEvents.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, env};

fn project(name: &str, spec: Value) -> Value {
    json!({"project": {"metadata": {"name": name}, "spec": spec}})
}

#[tokio::test]
async fn validation_delete_detailed_windows_and_events() {
    let stack = Stack::start("srv-proj-admin").await;
    let ns = stack.ns.name().to_string();
    let (code, body) = stack
        .send(Method::POST, "/api/v1/projects", Some(&project("team", json!({
            "syncWindows": [{"kind": "allow", "schedule": "0 22 * *", "duration": "1h", "applications": ["*"]}]
        }))))
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("error validating project: sync window 0"),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("cannot parse schedule '0 22 * *'"),
        "{body}"
    );

    let (code, body) = stack
        .send(Method::POST, "/api/v1/projects", Some(&project("team", json!({
            "sourceRepos": ["*"],
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "*"}],
            "syncWindows": [{"kind": "allow", "schedule": "* * * * *", "duration": "1h", "applications": ["*"]}]
        }))))
        .await;
    assert_eq!(code, 200, "{body}");

    let mut changed = body.clone();
    changed["spec"]["roles"] = json!([{"name": "ci", "policies": ["p, proj:other:ci, applications, get, other/*, allow"]}]);
    let (code, body) = stack
        .send(
            Method::PUT,
            "/api/v1/projects/team",
            Some(&json!({"project": changed})),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "invalid policy rule 'p, proj:other:ci, applications, get, other/*, allow': policy subject must be: 'proj:team:ci', not 'proj:other:ci'"
    );
    let mut dup = changed.clone();
    dup["spec"]["roles"] = json!([]);
    dup["spec"]["destinations"] =
        json!([{"server": "a", "namespace": "x"}, {"server": "a", "namespace": "x"}]);
    let (code, body) = stack
        .send(
            Method::PUT,
            "/api/v1/projects/team",
            Some(&json!({"project": dup})),
        )
        .await;
    assert_eq!(
        (code, body["message"].clone()),
        (400, json!("destination 'a/x' already added"))
    );

    // A stale resourceVersion is a conflict, not a silent overwrite.
    let mut stale = changed.clone();
    stale["spec"]["roles"] = json!([]);
    stale["spec"]["description"] = json!("first");
    let (code, _) = stack
        .send(
            Method::PUT,
            "/api/v1/projects/team",
            Some(&json!({"project": stale.clone()})),
        )
        .await;
    assert_eq!(code, 200);
    stale["spec"]["description"] = json!("second");
    let (code, body) = stack
        .send(
            Method::PUT,
            "/api/v1/projects/team",
            Some(&json!({"project": stale})),
        )
        .await;
    assert_eq!(code, 409, "{body}");

    // Credentials of scoped repositories never leave.
    let client = env().client().await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let repo: Secret = serde_json::from_value(json!({
        "metadata": {"name": "team-repo", "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": "https://git.example/team.git", "password": "hunter2-secret", "project": "team"}
    }))
    .unwrap();
    secrets.create(&PostParams::default(), &repo).await.unwrap();
    let (code, body) = stack.get("/api/v1/projects/team/detailed").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["project"]["metadata"]["name"], "team");
    assert_eq!(
        body["repositories"],
        json!([{"repo": "https://git.example/team.git", "type": "git", "project": "team"}])
    );
    assert!(!body.to_string().contains("hunter2"));

    // The every-minute, one-hour allow window is open now.
    let (code, body) = stack.get("/api/v1/projects/team/syncwindows").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["windows"][0]["schedule"], "* * * * *");

    let (code, body) = stack.get("/api/v1/projects/team/events").await;
    assert_eq!(code, 200, "{body}");
    assert!(body["items"].is_array(), "{body}");

    let (code, body) = stack
        .send(Method::DELETE, "/api/v1/projects/default", None)
        .await;
    assert_eq!(
        (code, body["message"].clone()),
        (
            400,
            json!("name 'default' is reserved and cannot be deleted")
        )
    );

    let apps: Api<kube::api::DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &plumb_app::application_resource());
    let app: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "uses-team"},
        "spec": {"project": "team", "destination": {"server": "https://kubernetes.default.svc", "namespace": ns},
                 "source": {"repoURL": "https://git.example/team.git", "path": "."}}
    }))
    .unwrap();
    apps.create(&PostParams::default(), &app).await.unwrap();
    let (code, body) = stack
        .send(Method::DELETE, "/api/v1/projects/team", None)
        .await;
    assert_eq!(
        (code, body["message"].clone()),
        (400, json!("project is referenced by 1 applications"))
    );
    apps.delete("uses-team", &Default::default()).await.unwrap();
    let _ = apps
        .patch(
            "uses-team",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    let (code, body) = stack
        .send(Method::DELETE, "/api/v1/projects/team", None)
        .await;
    assert_eq!((code, body.clone()), (200, json!({})), "{body}");
    let (code, _) = stack.get("/api/v1/projects/team").await;
    assert_eq!(code, 404);
}

/// Argo's `ProjectService.Update` refuses an update that would make the project's
/// Applications invalid (their source or destination permitted before and not after), with
/// its message; nothing is written. An update that leaves them valid goes through.
#[tokio::test]
async fn an_update_that_would_invalidate_applications_is_refused() {
    let stack = Stack::start("srv-proj-invalidate").await;
    let ns = stack.ns.name().to_string();
    let spec = json!({"sourceRepos": ["https://git.example/*"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "*"}]});
    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/projects",
            Some(&project("narrowing", spec)),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    let client = env().client().await;
    let apps: Api<kube::api::DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &plumb_app::application_resource());
    for (name, dest) in [("one", "team-a"), ("two", "team-b")] {
        let app: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "narrowing",
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest},
                     "source": {"repoURL": format!("https://git.example/{name}.git"), "path": "."}}
        }))
        .unwrap();
        apps.create(&PostParams::default(), &app).await.unwrap();
    }
    let put = |spec: Value| {
        let mut p = created.clone();
        p["spec"] = spec;
        json!({"project": p})
    };
    let narrowed = put(json!({"sourceRepos": ["https://git.example/one.git"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "team-a"}]}));
    let (code, body) = stack
        .send(Method::PUT, "/api/v1/projects/narrowing", Some(&narrowed))
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["code"], 3, "gRPC InvalidArgument: {body}");
    assert_eq!(
        body["message"],
        "as a result of project update 1 applications source became invalid and 1 applications destination became invalid"
    );
    let (_, stored) = stack.get("/api/v1/projects/narrowing").await;
    assert_eq!(
        stored["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"],
        "nothing written: {stored}"
    );
    // Narrowing around the Applications keeps them valid: written.
    let kept = put(
        json!({"sourceRepos": ["https://git.example/one.git", "https://git.example/two.git"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "team-*"}]}),
    );
    let (code, body) = stack
        .send(Method::PUT, "/api/v1/projects/narrowing", Some(&kept))
        .await;
    assert_eq!(code, 200, "{body}");
}
