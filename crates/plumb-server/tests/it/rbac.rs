//! Authorization per route: for every resource/action pair a route checks, a caller granted
//! exactly that pair gets through and a caller granted everything but that pair (a deny rule)
//! gets 403; lists are filtered; globs, regex mode, built-in roles, `policy.default`, groups.

use reqwest::Method;
use serde_json::{Value, json};

use crate::auth::app;
use crate::authn::AuthStack;

pub(crate) struct Route {
    method: Method,
    path: &'static str,
    body: Option<Value>,
    resource: &'static str,
    action: &'static str,
    object: &'static str,
    /// A watch stream: only its status is read (its body never ends).
    stream: bool,
}

pub(crate) fn route(
    method: Method,
    path: &'static str,
    body: Option<Value>,
    (resource, action, object): (&'static str, &'static str, &'static str),
) -> Route {
    Route {
        method,
        path,
        body,
        resource,
        action,
        object,
        stream: false,
    }
}

fn stream(path: &'static str, pair: (&'static str, &'static str, &'static str)) -> Route {
    Route {
        stream: true,
        ..route(Method::GET, path, None, pair)
    }
}

/// `r` called by `token`: (status, body); a stream's body is not read.
async fn call(s: &AuthStack, r: &Route, token: &str) -> (u16, Value) {
    if !r.stream {
        return s
            .call(r.method.clone(), r.path, Some(token), r.body.as_ref())
            .await;
    }
    let resp = s
        .http
        .request(r.method.clone(), format!("{}{}", s.base, r.path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request");
    let code = resp.status().as_u16();
    if code == 200 {
        return (code, Value::Null);
    }
    crate::support::read(resp).await
}

/// The three cases of one route for user `u`: everything but its pair (a deny rule), nothing,
/// exactly its pair.
pub(crate) async fn check_route(s: &AuthStack, u: &str, r: &Route) {
    let pair = format!(
        "{} {}: {}, {}, {}",
        r.method, r.path, r.resource, r.action, r.object
    );
    s.set_policy(
        &format!(
            "p, u, *, *, *, allow\np, u, {}, {}, {}, deny\n",
            r.resource, r.action, r.object
        ),
        "",
    )
    .await;
    let (code, body) = call(s, r, u).await;
    assert_eq!(code, 403, "{pair} with a deny rule: {body}");
    assert_eq!(body["code"], 7, "{pair}: gRPC PermissionDenied");
    s.set_policy("", "").await;
    let (code, _) = call(s, r, u).await;
    assert_eq!(code, 403, "{pair} without any grant");
    // Exactly this pair: through (it may still fail for other reasons, never 401/403).
    s.set_policy(
        &format!("p, u, {}, {}, {}, allow\n", r.resource, r.action, r.object),
        "",
    )
    .await;
    let (code, body) = call(s, r, u).await;
    assert!(code != 403 && code != 401, "{pair} granted: {code} {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_checks_its_resource_and_action() {
    let s = AuthStack::start("rbac-routes", Default::default()).await;
    let admin = s.admin_token().await;
    for name in ["web", "doomed", "rbac-local-web"] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applications?validate=false",
                Some(&admin),
                Some(&app(name, "default")),
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    s.add_account("u", "apiKey, login", "u-pw").await;
    s.add_account("other", "apiKey", "other-pw").await;
    let u = s.login("u", "u-pw").await;
    let mut web = app("web", "default");
    web["spec"]["source"]["targetRevision"] = json!("main");
    let local_cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"rbac-local"},"data":{"k":"v"}}"#;
    let routes = [
        route(
            Method::GET,
            "/api/v1/applications/web",
            None,
            ("applications", "get", "default/web"),
        ),
        route(
            Method::GET,
            "/api/v1/applications/web/resource-tree",
            None,
            ("applications", "get", "default/web"),
        ),
        route(
            Method::GET,
            "/api/v1/applications/web/managed-resources",
            None,
            ("applications", "get", "default/web"),
        ),
        route(
            Method::GET,
            "/api/v1/applications/web/manifests",
            None,
            ("applications", "get", "default/web"),
        ),
        route(
            Method::GET,
            "/api/v1/applications/web/events",
            None,
            ("applications", "get", "default/web"),
        ),
        route(
            Method::POST,
            "/api/v1/applications/web/sync",
            Some(json!({})),
            ("applications", "sync", "default/web"),
        ),
        route(
            Method::POST,
            "/api/v1/applications/web/rollback",
            Some(json!({})),
            ("applications", "sync", "default/web"),
        ),
        route(
            Method::DELETE,
            "/api/v1/applications/web/operation",
            None,
            ("applications", "sync", "default/web"),
        ),
        route(
            Method::PUT,
            "/api/v1/applications/web",
            Some(web),
            ("applications", "update", "default/web"),
        ),
        route(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(app("fresh", "default")),
            ("applications", "create", "default/fresh"),
        ),
        route(
            Method::GET,
            "/api/v1/projects/default",
            None,
            ("projects", "get", "default"),
        ),
        route(
            Method::POST,
            "/api/v1/projects/default/roles/none/token",
            Some(json!({})),
            ("projects", "update", "default"),
        ),
        route(
            Method::GET,
            "/api/v1/account/other",
            None,
            ("accounts", "get", "other"),
        ),
        route(
            Method::POST,
            "/api/v1/account/other/token",
            Some(json!({})),
            ("accounts", "update", "other"),
        ),
        route(
            Method::GET,
            "/api/v1/applications/web/revisions/HEAD/metadata",
            None,
            ("applications", "get", "default/web"),
        ),
        stream(
            "/api/v1/stream/applications/web/resource-tree",
            ("applications", "get", "default/web"),
        ),
        route(
            Method::PATCH,
            "/api/v1/applications/web",
            Some(
                json!({"patch": "{\"metadata\":{\"labels\":{\"team\":\"web\"}}}", "patchType": "merge"}),
            ),
            ("applications", "update", "default/web"),
        ),
        route(
            Method::POST,
            "/api/v1/projects",
            Some(
                json!({"project": {"metadata": {"name": "fresh-proj"}, "spec": {"sourceRepos": ["*"]}}}),
            ),
            ("projects", "create", "fresh-proj"),
        ),
        route(
            Method::PUT,
            "/api/v1/projects/default",
            Some(
                json!({"project": {"metadata": {"name": "default"}, "spec": {"sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}}}),
            ),
            ("projects", "update", "default"),
        ),
        route(
            Method::PUT,
            "/api/v1/account/password",
            Some(json!({"name": "other", "currentPassword": "u-pw", "newPassword": "other-pw-2"})),
            ("accounts", "update", "other"),
        ),
        route(
            Method::GET,
            "/api/v1/clusters/https%3A%2F%2Fkubernetes.default.svc",
            None,
            ("clusters", "get", "https://kubernetes.default.svc"),
        ),
        route(
            Method::DELETE,
            "/api/v1/applications/doomed?cascade=false",
            None,
            ("applications", "delete", "default/doomed"),
        ),
    ];
    for r in &routes {
        check_route(&s, &u, r).await;
    }
    // A sync with local manifests also needs `override` (Argo's rule): `get` and `sync` alone
    // is PermissionDenied naming override (without `get` the answer names nothing, as for an
    // Application that does not exist), all three get through.
    let local_sync = route(
        Method::POST,
        "/api/v1/applications/rbac-local-web/sync",
        Some(json!({"manifests": [local_cm], "dryRun": true})),
        ("applications", "override", "default/rbac-local-web"),
    );
    s.set_policy(
        "p, u, applications, sync, default/rbac-local-web, allow\n",
        "",
    )
    .await;
    let (code, body) = call(&s, &local_sync, &u).await;
    assert_eq!(code, 403, "sync without get and override: {body}");
    assert_eq!(body["message"], "permission denied", "{body}");
    s.set_policy(
        "p, u, applications, sync, default/rbac-local-web, allow\np, u, applications, get, default/rbac-local-web, allow\n",
        "",
    )
    .await;
    let (code, body) = call(&s, &local_sync, &u).await;
    assert_eq!(code, 403, "sync without override: {body}");
    assert_eq!(body["code"], 7, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("applications, override, default/rbac-local-web")),
        "{body}"
    );
    s.set_policy(
        "p, u, applications, sync, default/rbac-local-web, allow\np, u, applications, override, default/rbac-local-web, allow\n",
        "",
    )
    .await;
    let (code, body) = call(&s, &local_sync, &u).await;
    assert_eq!(code, 200, "sync and override: {body}");
    assert_eq!(
        body["operation"]["sync"]["manifests"][0], local_cm,
        "written to operation.sync.manifests: {body}"
    );
    s.set_policy("", "").await;
    local_diff_reads_only_the_applications_own_resources(&s, &u).await;
    // Automated: local manifests only for a dry run (Argo's FailedPrecondition and message).
    let mut auto = app("rbac-local-auto", "default");
    auto["spec"]["syncPolicy"] = json!({"automated": {}});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&auto),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications/rbac-local-auto/sync",
            Some(&admin),
            Some(&json!({"manifests": [local_cm]})),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["code"], 9, "{body}");
    assert_eq!(
        body["message"],
        "cannot use local sync when Automatic Sync Policy is enabled unless for dry run"
    );
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications/rbac-local-auto/sync",
            Some(&admin),
            Some(&json!({"manifests": [local_cm], "dryRun": true})),
        )
        .await;
    assert_eq!(code, 200, "a dry run may: {body}");
    assert_eq!(body["operation"]["sync"]["dryRun"], true, "{body}");
    assert_eq!(
        body["operation"]["sync"]["manifests"][0], local_cm,
        "{body}"
    );

    // Source integrity applies: local manifests refused (Argo's FailedPrecondition and message).
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects",
            Some(&admin),
            Some(
                &json!({"project": {"metadata": {"name": "signed-only"}, "spec": {
                "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                "sourceIntegrity": {"git": {"policies": [{"repos": [{"url": "*"}],
                    "gpg": {"mode": "head", "keys": ["4AEE18F83AFDEB23"]}}]}}}}}),
            ),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app("rbac-local-signed", "signed-only")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications/rbac-local-signed/sync",
            Some(&admin),
            Some(&json!({"manifests": [local_cm], "dryRun": true})),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["code"], 9, "{body}");
    assert_eq!(
        body["message"],
        "Cannot use local manifests when source integrity is enforced"
    );

    // The one delete went through.
    let (code, _) = s.get("/api/v1/applications/doomed", &admin).await;
    assert_eq!(
        code, 403,
        "gone: as in Argo, a missing application is permission denied"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_globs_builtin_roles_default_role_and_regex_mode() {
    let s = AuthStack::start("rbac-policy", Default::default()).await;
    let admin = s.admin_token().await;
    for (name, project) in [
        ("team-a-api", "default"),
        ("team-b-api", "default"),
        ("ops", "default"),
    ] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applications?validate=false",
                Some(&admin),
                Some(&app(name, project)),
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    s.add_account("dev", "login", "dev-pw").await;
    s.add_account("viewer", "login", "viewer-pw").await;
    let dev = s.login("dev", "dev-pw").await;
    let viewer = s.login("viewer", "viewer-pw").await;
    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };

    // Globs: team-a only; a bad line is reported and skipped, the rest applies.
    s.set_policy(
        "p, role:team-a, applications, *, default/team-a-*, allow\n\
         this is not a policy line\n\
         g, dev, role:team-a\n\
         g, viewer, role:readonly\n",
        "",
    )
    .await;
    let (code, list) = s.get("/api/v1/applications", &dev).await;
    assert_eq!(code, 200);
    assert_eq!(names(&list), ["team-a-api"]);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications/team-a-api/sync",
            Some(&dev),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200);
    // An app the caller may not read and one that does not exist answer alike
    // (GHSA-2q5c-qw9c-fmvq): neither its existence nor its project leaks.
    let (code, body) = s.get("/api/v1/applications/team-b-api", &dev).await;
    assert_eq!(code, 403);
    assert_eq!(body["message"], "permission denied", "{body}");
    let (code, missing) = s.get("/api/v1/applications/no-such-app", &dev).await;
    assert_eq!(code, 403, "a missing app is not revealed");
    assert_eq!(
        missing, body,
        "the same answer for a hidden and a missing app"
    );
    for (path, verb) in [
        ("/api/v1/applications/{}/sync", Method::POST),
        ("/api/v1/applications/{}/resource-tree", Method::GET),
        ("/api/v1/applications/{}/managed-resources", Method::GET),
        ("/api/v1/applications/{}", Method::DELETE),
    ] {
        let mut answers = Vec::new();
        for app in ["team-b-api", "no-such-app"] {
            let body = (verb == Method::POST).then(|| json!({}));
            let (code, answer) = s
                .call(
                    verb.clone(),
                    &path.replace("{}", app),
                    Some(&dev),
                    body.as_ref(),
                )
                .await;
            answers.push((code, answer["message"].clone()));
        }
        assert_eq!(answers[0], answers[1], "{verb} {path}: {answers:?}");
        assert_eq!(answers[0].0, 403, "{verb} {path}: {answers:?}");
    }
    // Clusters likewise (GHSA-3cqf-953p-h5cp): asked by name, a cluster the caller may not read
    // answers as one that does not exist, without its server URL.
    let (code, hidden) = s
        .get("/api/v1/clusters/in-cluster?id.type=name", &dev)
        .await;
    assert_eq!(code, 403, "{hidden}");
    let (code, missing) = s
        .get("/api/v1/clusters/no-such-cluster?id.type=name", &dev)
        .await;
    assert_eq!(code, 403, "{missing}");
    assert_eq!(hidden, missing);
    assert!(
        !hidden.to_string().contains("kubernetes.default.svc"),
        "{hidden}"
    );
    // Built-in role:readonly: every app, no sync.
    let (_, list) = s.get("/api/v1/applications", &viewer).await;
    assert_eq!(names(&list), ["ops", "team-a-api", "team-b-api"]);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications/ops/sync",
            Some(&viewer),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 403);
    let (code, projects) = s.get("/api/v1/projects", &viewer).await;
    assert_eq!(
        (code, projects["items"].as_array().map(Vec::len)),
        (200, Some(1))
    );
    let (code, projects) = s.get("/api/v1/projects", &dev).await;
    assert_eq!(
        (code, projects["items"].as_array().map(Vec::len)),
        (200, Some(0))
    );

    // policy.default applies to every authenticated caller.
    s.set_policy("", "role:readonly").await;
    let (_, list) = s.get("/api/v1/applications", &dev).await;
    assert_eq!(names(&list).len(), 3);

    // can-i.
    s.set_policy("p, dev, applications, sync, default/team-*, allow", "")
        .await;
    let (_, yes) = s
        .get(
            "/api/v1/account/can-i/applications/sync/default/team-b-api",
            &dev,
        )
        .await;
    let (_, no) = s
        .get("/api/v1/account/can-i/applications/sync/default/ops", &dev)
        .await;
    assert_eq!(
        (yes["value"].as_str(), no["value"].as_str()),
        (Some("yes"), Some("no"))
    );

    // Regex mode.
    s.set_config_map(
        "argocd-rbac-cm",
        &[
            ("policy.matchMode", "regex"),
            (
                "policy.csv",
                "p, dev, applications, get, ^default/team-(a|b)-api$, allow",
            ),
            ("policy.default", ""),
        ],
    )
    .await;
    let (_, list) = s.get("/api/v1/applications", &dev).await;
    assert_eq!(names(&list), ["team-a-api", "team-b-api"]);
    // Admin keeps the built-in role in regex mode.
    let (_, list) = s.get("/api/v1/applications", &admin).await;
    assert_eq!(names(&list).len(), 3);
}

/// Applications in any namespace: an Application outside the control namespace is the RBAC
/// object `<project>/<namespace>/<name>` (Argo's `AppRBACName`), reached with `appNamespace`;
/// `<project>/*` still matches it; a namespace the server does not serve is refused, and so is
/// creating one with a project whose `sourceNamespaces` does not list its namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applications_outside_the_control_namespace_are_project_namespace_name_objects() {
    let tenant = crate::support::env().namespace("rbac-tenant");
    let t = tenant.name().to_string();
    let s = AuthStack::start_with("rbac-anyns", Default::default(), vec![t.clone()]).await;
    let projects: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        s.client.clone(),
        s.ns.name(),
        &plumb_app::appproject_resource(),
    );
    let project: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "team"},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "sourceNamespaces": [t]}
    }))
    .unwrap();
    projects
        .create(&Default::default(), &project)
        .await
        .expect("create project");
    let admin = s.admin_token().await;
    let mut tenant_web = app("web", "team");
    tenant_web["metadata"]["namespace"] = json!(t);
    for body in [tenant_web, app("web", "default")] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applications?validate=false",
                Some(&admin),
                Some(&body),
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    // The project does not list the namespace: refused whatever RBAC allows.
    let mut refused = app("intruder", "default");
    refused["metadata"]["namespace"] = json!(t);
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&refused),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!(
                "application 'intruder' in namespace '{t}' is not allowed to use project default"
            )),
        "{body}"
    );

    s.add_account("dev", "apiKey, login", "dev-pw").await;
    s.add_account("lead", "apiKey, login", "lead-pw").await;
    s.set_policy(
        &format!(
            "p, dev, applications, get, team/{t}/*, allow\np, dev, applications, sync, team/{t}/web, allow\np, lead, applications, get, team/*, allow"
        ),
        "",
    )
    .await;
    let dev = s.login("dev", "dev-pw").await;
    let lead = s.login("lead", "lead-pw").await;
    let in_tenant = format!("/api/v1/applications/web?appNamespace={t}");
    let (code, body) = s.get(&in_tenant, &dev).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["metadata"]["namespace"], t.as_str());
    let (code, body) = s.get("/api/v1/applications/web", &dev).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(body["message"], "permission denied", "{body}");
    // `team/*` crosses the namespace segment, as in Argo.
    let (code, body) = s.get(&in_tenant, &lead).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s
        .get(
            "/api/v1/account/can-i/applications/get/team/elsewhere/web",
            &dev,
        )
        .await;
    assert_eq!((code, body["value"].as_str()), (200, Some("no")), "{body}");
    // The list holds what the caller may get, across namespaces; `appNamespace` narrows it.
    let qualified = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                format!(
                    "{}/{}",
                    a["metadata"]["namespace"].as_str().unwrap_or_default(),
                    a["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect()
    };
    let (_, list) = s.get("/api/v1/applications", &dev).await;
    assert_eq!(qualified(&list), [format!("{t}/web")]);
    let (_, list) = s.get("/api/v1/applications", &admin).await;
    assert_eq!(
        qualified(&list),
        [format!("{}/web", s.ns.name()), format!("{t}/web")]
    );
    let (_, list) = s
        .get(&format!("/api/v1/applications?appNamespace={t}"), &admin)
        .await;
    assert_eq!(qualified(&list), [format!("{t}/web")]);
    // The watch stream's `appNamespace` (Argo's `ApplicationQuery.appNamespace`): with `name`,
    // only the Application of that namespace; a namespace the server does not serve is 403.
    for ns in [t.clone(), s.ns.name().to_string()] {
        let mut resp = s
            .http
            .get(format!(
                "{}/api/v1/stream/applications?name=web&appNamespace={ns}",
                s.base
            ))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("stream");
        assert_eq!(resp.status().as_u16(), 200);
        let mut seen: Vec<String> = Vec::new();
        let mut buf = String::new();
        let read = |buf: &mut String, seen: &mut Vec<String>| {
            while let Some(pos) = buf.find('\n') {
                let line: String = buf.drain(..=pos).collect();
                if let Ok(v) = serde_json::from_str::<Value>(line.trim()) {
                    seen.push(
                        v.pointer("/result/application/metadata/namespace")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    );
                }
            }
        };
        while seen.is_empty() {
            match tokio::time::timeout(std::time::Duration::from_secs(60), resp.chunk()).await {
                Ok(Ok(Some(chunk))) => buf.push_str(&String::from_utf8_lossy(&chunk)),
                other => panic!("no event on the stream of {ns}: {other:?}"),
            }
            read(&mut buf, &mut seen);
        }
        // The current Applications come together: what else arrives right after the first.
        while let Ok(Ok(Some(chunk))) =
            tokio::time::timeout(std::time::Duration::from_secs(3), resp.chunk()).await
        {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            read(&mut buf, &mut seen);
        }
        assert_eq!(seen, std::slice::from_ref(&ns), "the stream of web in {ns}");
    }
    let resp = s
        .http
        .get(format!(
            "{}/api/v1/stream/applications?name=web&appNamespace=kube-system",
            s.base
        ))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status().as_u16(), 403);
    // A sync names the namespace in its body; the operation lands on the tenant's Application.
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications/web/sync",
            Some(&dev),
            Some(&json!({"appNamespace": t, "prune": true})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["metadata"]["namespace"], t.as_str());
    assert_eq!(body["operation"]["sync"]["prune"], true);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications/web/sync",
            Some(&dev),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 403, "the control namespace's web is not dev's");
    // A namespace the server does not serve.
    let (code, body) = s
        .get("/api/v1/applications/web?appNamespace=kube-system", &admin)
        .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("namespace 'kube-system' is not permitted"),
        "{body}"
    );
    // Not a namespace name: refused before it reaches a URL of the Kubernetes API.
    let (code, body) = s
        .get(
            "/api/v1/applications/web?appNamespace=..%2F..%2Fapi%2Fv1%2Fsecrets",
            &admin,
        )
        .await;
    assert_eq!(code, 400, "{body}");
}

/// `POST .../managed-resources` with local manifests answers with live state (the server-side
/// dry run merges it), so `applications, get` covers only the Application's own resources
/// (`status.resources`); any other object needs `override` too (the class of
/// GHSA-3v3m-wc6v-x4x3: a read-only user read any object the project permits).
async fn local_diff_reads_only_the_applications_own_resources(s: &AuthStack, u: &str) {
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
    let gvk = GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Application");
    let apps: kube::Api<DynamicObject> =
        kube::Api::namespaced_with(s.client.clone(), s.ns.name(), &ApiResource::from_gvk(&gvk));
    let own = json!({"status": {"resources": [
        {"version": "v1", "kind": "ConfigMap", "namespace": "default", "name": "rbac-own"}
    ]}});
    apps.patch_status("web", &PatchParams::default(), &Patch::Merge(&own))
        .await
        .expect("status.resources set");
    let cm = |name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
               "data": {"k": "v"}})
        .to_string()
    };
    let diff = |manifests: Vec<String>| {
        let body = json!({ "manifests": manifests });
        async move {
            s.call(
                Method::POST,
                "/api/v1/applications/web/managed-resources",
                Some(u),
                Some(&body),
            )
            .await
        }
    };
    s.set_policy("p, u, applications, get, default/web, allow\n", "")
        .await;
    let (code, body) = diff(vec![cm("rbac-own")]).await;
    assert_eq!(code, 200, "its own resource with get: {body}");
    let (code, body) = diff(vec![cm("rbac-own"), cm("kube-root-ca.crt")]).await;
    assert_eq!(code, 403, "another object with get only: {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| m
            .contains("ConfigMap default/kube-root-ca.crt is not a resource of application web")),
        "{body}"
    );
    assert!(
        body["items"].is_null(),
        "no live state in a refusal: {body}"
    );
    s.set_policy(
        "p, u, applications, get, default/web, allow\np, u, applications, override, default/web, allow\n",
        "",
    )
    .await;
    let (code, body) = diff(vec![cm("rbac-own"), cm("kube-root-ca.crt")]).await;
    assert_eq!(code, 200, "with override: {body}");
    s.set_policy("", "").await;
}

/// `GET /api/v1/settings` is public (the login page reads it), but what describes the
/// installation — the control namespace and the resource customizations with their ignore rules
/// and Lua — is answered only to a logged-in caller, as Argo's `SettingsService.Get` (the class
/// of GHSA-87p9-x75h-p4j2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_describe_the_installation_only_to_logged_in_callers() {
    let s = AuthStack::start("rbac-settings", Default::default()).await;
    s.set_config_map(
        "argocd-cm",
        &[
            (
                "resource.customizations.ignoreDifferences.apps_Deployment",
                "jsonPointers:\n- /spec/replicas\n",
            ),
            ("url", "https://plumb.example.com"),
        ],
    )
    .await;
    let anonymous = s
        .http
        .get(format!("{}/api/v1/settings", s.base))
        .send()
        .await
        .expect("request");
    assert_eq!(anonymous.status().as_u16(), 200);
    let anonymous: Value =
        serde_json::from_str(&anonymous.text().await.expect("body")).expect("JSON");
    assert_eq!(anonymous["url"], "https://plumb.example.com", "{anonymous}");
    for hidden in ["controllerNamespace", "resourceOverrides", "pruneBrake"] {
        assert!(anonymous.get(hidden).is_none(), "{hidden}: {anonymous}");
    }
    // The version, public too, names only the version, platform and compiler (the class of
    // GHSA-pfgj-mh5m-2p48: no tool versions or build details to an anonymous caller).
    let version = s
        .http
        .get(format!("{}/api/version", s.base))
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("body");
    let version: Value = serde_json::from_str(&version).expect("JSON");
    let mut keys: Vec<&String> = version.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["Compiler", "Platform", "Version"], "{version}");
    let admin = s.admin_token().await;
    let (code, logged_in) = s.get("/api/v1/settings", &admin).await;
    assert_eq!(code, 200, "{logged_in}");
    assert_eq!(logged_in["controllerNamespace"], s.ns.name(), "{logged_in}");
    assert!(
        logged_in["resourceOverrides"]["apps/Deployment"]["ignoreDifferences"]
            .as_str()
            .is_some_and(|r| r.contains("/spec/replicas")),
        "{logged_in}"
    );
}

/// Updating a project needs more than `projects, update` when the update widens it (Argo's
/// `ProjectService.Update`): a new source repository needs `repositories, update`, a new
/// destination cluster or any change to the resource lists `clusters, update`; a project role's
/// policy may not name `projects` (so a project token cannot widen its own project). Checked on
/// `PUT` and on `POST` with `upsert` alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_lead_cannot_widen_the_project_beyond_its_rights() {
    let s = AuthStack::start("rbac-widen", Default::default()).await;
    let admin = s.admin_token().await;
    let local = "https://kubernetes.default.svc";
    let team = |spec: Value| json!({"metadata": {"name": "team"}, "spec": spec});
    let base = json!({"description": "team",
        "sourceRepos": ["https://git.example/team/*"],
        "destinations": [{"server": local, "namespace": "team"}]});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects",
            Some(&admin),
            Some(&json!({"project": team(base.clone())})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    s.add_account("lead", "apiKey, login", "lead-pw").await;
    let lead = s.login("lead", "lead-pw").await;
    // `create` too: an upsert is a create that finds the project there.
    s.set_policy(
        "p, lead, projects, get, team, allow\np, lead, projects, update, team, allow\n\
         p, lead, projects, create, team, allow\n",
        "",
    )
    .await;
    let with = |field: &str, value: Value| {
        let mut spec = base.clone();
        spec[field] = value;
        spec
    };
    let (stack, lead) = (&s, lead.as_str());
    let put = |spec: Value| {
        let body = json!({"project": team(spec)});
        async move {
            stack
                .call(
                    Method::PUT,
                    "/api/v1/projects/team",
                    Some(lead),
                    Some(&body),
                )
                .await
        }
    };
    let upsert = |spec: Value| {
        let body = json!({"project": team(spec), "upsert": true});
        async move {
            stack
                .call(Method::POST, "/api/v1/projects", Some(lead), Some(&body))
                .await
        }
    };
    let widenings = [
        (
            with("sourceRepos", json!(["*"])),
            "repositories, update, *".to_string(),
        ),
        (
            with(
                "destinations",
                json!([{"server": local, "namespace": "team"},
                       {"server": "https://prod.example:6443", "namespace": "*"}]),
            ),
            "clusters, update, https://prod.example:6443".to_string(),
        ),
        (
            with(
                "clusterResourceWhitelist",
                json!([{"group": "*", "kind": "*"}]),
            ),
            format!("clusters, update, {local}"),
        ),
    ];
    for (spec, missing) in &widenings {
        for (how, (code, body)) in [
            ("PUT", put(spec.clone()).await),
            ("upsert", upsert(spec.clone()).await),
        ] {
            assert_eq!(code, 403, "{how} {spec}: {body}");
            assert!(
                body["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(missing.as_str())),
                "{how} {spec}: {body}"
            );
        }
    }
    let (_, stored) = s.get("/api/v1/projects/team", &admin).await;
    assert_eq!(
        stored["spec"]["sourceRepos"],
        json!(["https://git.example/team/*"])
    );
    assert!(
        stored["spec"]["clusterResourceWhitelist"].is_null(),
        "{stored}"
    );
    // What does not widen needs only `projects, update`.
    let (code, body) = put(with("description", json!("the team's project"))).await;
    assert_eq!(code, 200, "{body}");
    // With the right on repositories, the new source goes through.
    s.set_policy(
        "p, lead, projects, get, team, allow\np, lead, projects, update, team, allow\n\
         p, lead, repositories, update, https://git.example/*, allow\n",
        "",
    )
    .await;
    let (code, body) = put(with(
        "sourceRepos",
        json!(["https://git.example/team/*", "https://git.example/shared/*"]),
    ))
    .await;
    assert_eq!(code, 200, "{body}");
    // A project role may not name `projects`: refused when saved...
    let (code, body) = s
        .call(
            Method::PUT,
            "/api/v1/projects/team",
            Some(&admin),
            Some(
                &json!({"project": team(with("roles", json!([{"name": "ci", "policies": [
                "p, proj:team:ci, projects, update, team, allow"]}])))}),
            ),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("project resource must be")),
        "{body}"
    );
    // ...and, in a project written around the API, ignored: its token cannot update the project.
    let projects: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        s.client.clone(),
        s.ns.name(),
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "argoproj.io",
            "v1alpha1",
            "AppProject",
        )),
    );
    let sneaky: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "sneaky"},
        "spec": {"sourceRepos": ["https://git.example/sneaky/*"],
                 "destinations": [{"server": local, "namespace": "sneaky"}],
                 "roles": [{"name": "ci", "policies": [
                     "p, proj:sneaky:ci, projects, update, sneaky, allow",
                     "p, proj:sneaky:ci, applications, get, sneaky/*, allow"]}]}
    }))
    .expect("project");
    projects
        .create(&kube::api::PostParams::default(), &sneaky)
        .await
        .expect("create sneaky");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects/sneaky/roles/ci/token",
            Some(&admin),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let token = body["token"].as_str().expect("token").to_string();
    let (code, body) = s
        .call(
            Method::PUT,
            "/api/v1/projects/sneaky",
            Some(&token),
            Some(
                &json!({"project": {"metadata": {"name": "sneaky"}, "spec": {
                "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}}}),
            ),
        )
        .await;
    assert_eq!(
        code, 403,
        "a project token widening its own project: {body}"
    );
}

/// A create never carries an operation (Argo's `Create` drops it): whoever may create an
/// Application but not `override` cannot start a sync of local manifests by writing
/// `operation.sync.manifests` into the body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_application_carries_no_operation() {
    let s = AuthStack::start("rbac-create-op", Default::default()).await;
    s.add_account("maker", "apiKey, login", "maker-pw").await;
    let maker = s.login("maker", "maker-pw").await;
    s.set_policy(
        "p, maker, applications, create, default/*, allow\np, maker, applications, get, default/*, allow\n",
        "",
    )
    .await;
    let local = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"smuggled"}}"#;
    let mut body = app("with-operation", "default");
    body["operation"] = json!({"sync": {"manifests": [local], "prune": true},
                               "initiatedBy": {"username": "admin"}});
    let (code, created) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&maker),
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    assert!(created["operation"].is_null(), "{created}");
    let (code, stored) = s.get("/api/v1/applications/with-operation", &maker).await;
    assert_eq!(code, 200, "{stored}");
    assert!(stored["operation"].is_null(), "stored without it: {stored}");
}
