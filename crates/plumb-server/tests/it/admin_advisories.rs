//! Argo CD's advisories against the administration services, replayed against Plumb now that it
//! has them (issue #27 added the cluster, repository and credential-template routes; issue #35
//! keeps every advisory a test): a cluster update that would move the cluster out of the caller's
//! projects (GHSA-3jfq-742w-xg8j), a project token reading repository credentials through
//! `/projects/{p}/detailed` (GHSA-786q-9hcg-v9ff), and concurrent writes to the credential
//! template API (GHSA-g88p-r42r-ppp9, a crash in Argo).

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use reqwest::Method;
use serde_json::json;

use crate::authn::AuthStack;

const PASSWORD: &str = "adv1sory-Repo-pw-27";
const CLUSTER_TOKEN: &str = "adv1sory-cluster-bearer-27";

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// An Argo CD cluster Secret written straight into the namespace (no connection check: the
/// server is never reached by these tests).
fn cluster_secret(name: &str, server: &str, project: &str) -> Secret {
    serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "labels": {"argocd.argoproj.io/secret-type": "cluster"},
        },
        "stringData": {
            "name": name,
            "server": server,
            "project": project,
            "config": json!({"bearerToken": CLUSTER_TOKEN, "tlsClientConfig": {"insecure": true}}).to_string(),
        },
    }))
    .expect("cluster Secret")
}

fn project_of(secret: &Secret) -> String {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get("project"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default()
}

/// GHSA-3jfq-742w-xg8j (CVE-2023-23947): in Argo CD before the fix, a caller allowed to update
/// the clusters of one project could move a cluster into another project (or update a cluster
/// of another project by naming it with a project they may update). The update is checked
/// against the cluster as stored and, when `project` changes, against the cluster as it would
/// be stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_update_cannot_leave_the_callers_projects() {
    let s = AuthStack::start("adv-cluster", Default::default()).await;
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let server_a = "https://team-a.cluster.invalid";
    let server_b = "https://team-b.cluster.invalid";
    for (name, server, project) in [
        ("team-a", server_a, "team-a"),
        ("team-b", server_b, "team-b"),
    ] {
        secrets
            .create(
                &PostParams::default(),
                &cluster_secret(name, server, project),
            )
            .await
            .expect("create cluster Secret");
    }
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    s.set_policy(
        "p, u, clusters, get, team-a/*, allow\np, u, clusters, update, team-a/*, allow\n",
        "",
    )
    .await;
    let mut answers = String::new();

    // Moving its own cluster into team-b: denied, with and without updatedFields.
    for query in ["?updatedFields=project", ""] {
        let body = json!({"server": server_a, "name": "team-a", "project": "team-b"});
        let (code, answer) = s
            .call(
                Method::PUT,
                &format!("/api/v1/clusters/{}{query}", enc(server_a)),
                Some(u.as_str()),
                Some(&body),
            )
            .await;
        answers.push_str(&answer.to_string());
        assert_eq!(code, 403, "moving the cluster to team-b{query}: {answer}");
    }
    // Updating team-b's cluster while claiming it is team-a's: denied.
    let body = json!({"server": server_b, "name": "team-b", "project": "team-a"});
    let (code, answer) = s
        .call(
            Method::PUT,
            &format!("/api/v1/clusters/{}?updatedFields=project", enc(server_b)),
            Some(u.as_str()),
            Some(&body),
        )
        .await;
    answers.push_str(&answer.to_string());
    assert_eq!(code, 403, "taking team-b's cluster: {answer}");

    for (name, project) in [("team-a", "team-a"), ("team-b", "team-b")] {
        let stored = secrets.get(name).await.expect("cluster Secret");
        assert_eq!(project_of(&stored), project, "{name} was moved");
    }

    // Within its project the caller passes the RBAC checks: the update goes on to Argo's
    // connection check (which fails here, the cluster being made up), so the refusals above
    // are the project rule, not a blanket denial.
    let body = json!({"server": server_a, "name": "team-a", "project": "team-a"});
    let (code, answer) = s
        .call(
            Method::PUT,
            &format!("/api/v1/clusters/{}?updatedFields=project", enc(server_a)),
            Some(u.as_str()),
            Some(&body),
        )
        .await;
    answers.push_str(&answer.to_string());
    assert_eq!(code, 400, "staying in team-a: {answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("error getting server version"),
        "{answer}"
    );
    assert!(
        !answers.contains(CLUSTER_TOKEN),
        "an answer carries the cluster's token: {answers}"
    );
}

/// GHSA-786q-9hcg-v9ff (CVE-2025-55190): Argo CD's `GetDetailedProject` returned the project's
/// repositories with their credentials, so any project token could read them. The detailed
/// view (and every other answer) carries no credential, whoever asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_token_never_reads_repository_credentials() {
    let s = AuthStack::start("adv-detailed", Default::default()).await;
    let admin = s.admin_token().await;
    let spec = json!({
        "sourceRepos": ["*"],
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "*"}],
        "roles": [{"name": "ci", "policies": [
            "p, proj:team:ci, applications, get, team/*, allow",
            "p, proj:team:ci, repositories, get, team/*, allow",
        ]}],
    });
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects",
            Some(admin.as_str()),
            Some(&json!({"project": {"metadata": {"name": "team"}, "spec": spec}})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let repo: Secret = serde_json::from_value(json!({
        "metadata": {"name": "team-repo",
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": "https://git.invalid/team/app.git", "project": "team",
                       "username": "bot", "password": PASSWORD,
                       "sshPrivateKey": format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{PASSWORD}\n-----END OPENSSH PRIVATE KEY-----")},
    }))
    .expect("repository Secret");
    secrets
        .create(&PostParams::default(), &repo)
        .await
        .expect("create repository Secret");

    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects/team/roles/ci/token",
            Some(admin.as_str()),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let token = body["token"].as_str().expect("project token").to_string();

    let mut answers = String::new();
    // Every role may get its own project (Argo's implicit `projects, get`), so the token reads
    // the detailed view: never a credential through it, nor through the repository list.
    let (code, detailed) = s
        .call(
            Method::GET,
            "/api/v1/projects/team/detailed",
            Some(token.as_str()),
            None,
        )
        .await;
    assert_eq!(code, 200, "{detailed}");
    assert!(
        detailed
            .to_string()
            .contains("https://git.invalid/team/app.git"),
        "the role's detailed view lists the scoped repository: {detailed}"
    );
    answers.push_str(&detailed.to_string());
    for who in [&token, &admin] {
        let (code, listed) = s
            .call(
                Method::GET,
                "/api/v1/repositories",
                Some(who.as_str()),
                None,
            )
            .await;
        assert_eq!(code, 200, "{listed}");
        assert!(
            listed
                .to_string()
                .contains("https://git.invalid/team/app.git"),
            "the scoped repository is listed: {listed}"
        );
        answers.push_str(&listed.to_string());
    }
    let (code, detailed) = s
        .call(
            Method::GET,
            "/api/v1/projects/team/detailed",
            Some(admin.as_str()),
            None,
        )
        .await;
    assert_eq!(code, 200, "{detailed}");
    assert!(
        detailed
            .to_string()
            .contains("https://git.invalid/team/app.git"),
        "the detailed view lists the scoped repository: {detailed}"
    );
    answers.push_str(&detailed.to_string());
    assert!(
        !answers.contains(PASSWORD),
        "an answer carries the repository's password or key: {answers}"
    );
}

/// GHSA-g88p-r42r-ppp9 (CVE-2025-55191): concurrent calls to Argo CD's repository-credentials
/// API raced on a map and crashed the server. Many writers at once on the same and on
/// different templates: every call gets an HTTP answer, the server keeps serving, and what the
/// API lists is what the Secrets hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_credential_template_writes_leave_the_server_serving() {
    let s = std::sync::Arc::new(AuthStack::start("adv-repocreds", Default::default()).await);
    let admin = s.admin_token().await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let s = s.clone();
        let admin = admin.clone();
        tasks.push(tokio::spawn(async move {
            // Four templates, each written, upserted and deleted by several callers at once.
            let url = format!("https://git.invalid/org-{}", i % 4);
            let body = json!({"url": url, "username": format!("bot-{i}"), "password": PASSWORD});
            let mut codes = Vec::new();
            for (method, path) in [
                (Method::POST, "/api/v1/repocreds?upsert=true".to_string()),
                (Method::POST, "/api/v1/repocreds".to_string()),
                (Method::GET, "/api/v1/repocreds".to_string()),
                (Method::DELETE, format!("/api/v1/repocreds/{}", enc(&url))),
                (Method::POST, "/api/v1/repocreds?upsert=true".to_string()),
            ] {
                let body = (method == Method::POST).then_some(&body);
                let (code, answer) = s.call(method, &path, Some(admin.as_str()), body).await;
                codes.push((code, answer));
            }
            codes
        }));
    }
    let mut answers = String::new();
    for task in tasks {
        for (code, answer) in task.await.expect("writer task") {
            answers.push_str(&answer.to_string());
            assert!(
                [200, 400, 404, 409].contains(&code),
                "an unexpected answer under concurrency: {code} {answer}"
            );
        }
    }
    assert!(
        !answers.contains(PASSWORD),
        "an answer carries a template's password: {answers}"
    );

    let (code, listed) = s
        .call(Method::GET, "/api/v1/repocreds", Some(admin.as_str()), None)
        .await;
    assert_eq!(code, 200, "the server still serves: {listed}");
    let mut listed: Vec<String> = listed["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c["url"].as_str().map(str::to_string))
        .collect();
    listed.sort();
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let mut stored: Vec<String> = secrets
        .list(&kube::api::ListParams::default().labels("argocd.argoproj.io/secret-type=repo-creds"))
        .await
        .expect("list Secrets")
        .items
        .iter()
        .filter_map(|secret| {
            secret
                .data
                .as_ref()
                .and_then(|d| d.get("url"))
                .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        })
        .collect();
    stored.sort();
    assert_eq!(listed, stored, "the API lists what the Secrets hold");
    // Each of the four templates was upserted last by some writer: one Secret each at most.
    let mut unique = stored.clone();
    unique.dedup();
    assert_eq!(unique, stored, "one Secret per template URL: {stored:?}");
}
