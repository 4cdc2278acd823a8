//! The project administration routes refuse a caller without the `projects` permission they
//! check, with Argo's PermissionDenied answer, and leave the project as it was: Delete,
//! GetDetailedProject, GetSyncWindowsState, ListEvents and Update.

use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::AuthStack;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_routes_refuse_a_caller_without_the_projects_permission() {
    let s = AuthStack::start("rbac-proj-routes", Default::default()).await;
    let admin = s.admin_token().await;
    let spec = json!({"description": "guarded", "sourceRepos": ["*"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "*"}]});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects",
            Some(&admin),
            Some(&json!({"project": {"metadata": {"name": "guarded"}, "spec": spec}})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let before = body;
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    let mut changed = before.clone();
    changed["spec"]["description"] = json!("changed by someone without the right");
    let update = json!({"project": changed});
    let routes: [(Method, &str, Option<&Value>, &str); 5] = [
        (Method::DELETE, "/api/v1/projects/guarded", None, "delete"),
        (
            Method::GET,
            "/api/v1/projects/guarded/detailed",
            None,
            "get",
        ),
        (
            Method::GET,
            "/api/v1/projects/guarded/syncwindows",
            None,
            "get",
        ),
        (Method::GET, "/api/v1/projects/guarded/events", None, "get"),
        (
            Method::PUT,
            "/api/v1/projects/guarded",
            Some(&update),
            "update",
        ),
    ];
    for (method, path, body, action) in &routes {
        let what = format!("{method} {path}");
        // Everything but this route's pair, then nothing at all.
        for policy in [
            format!("p, u, *, *, *, allow\np, u, projects, {action}, guarded, deny\n"),
            String::new(),
        ] {
            s.set_policy(&policy, "").await;
            let (code, answer) = s.call(method.clone(), path, Some(&u), *body).await;
            assert_eq!(code, 403, "{what} with {policy:?}: {answer}");
            assert_eq!(answer["code"], 7, "{what}: gRPC PermissionDenied: {answer}");
            let message = answer["message"].as_str().unwrap_or_default();
            assert!(message.starts_with("permission denied"), "{what}: {answer}");
        }
    }
    s.set_policy("", "").await;
    let (code, after) = s.get("/api/v1/projects/guarded", &admin).await;
    assert_eq!(code, 200, "the project is still there: {after}");
    assert_eq!(
        after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
        "nothing was written: {after}"
    );
    assert_eq!(after["spec"], before["spec"]);
}
