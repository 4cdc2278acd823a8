//! `POST /api/webhook` on a real control plane: per provider, a payload with a missing or wrong
//! proof is refused and refreshes nothing, a valid one refreshes exactly the Applications whose
//! repository and target revision the push names (other branches, other repositories and
//! look-alike URLs untouched; every URL form, multi-source Applications); an oversized payload is
//! refused. No controller runs here, so the refresh annotation the webhook sets stays for the
//! test to read.

use std::collections::BTreeSet;

use base64::Engine;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use plumb_app::application_resource;
use plumb_server::{Running, sign_sha256_hex};
use serde_json::{Value, json};

use crate::support::{client_trusting, create_default_project, env, server_config};

const REFRESH: &str = "argocd.argoproj.io/refresh";

struct Hooks {
    ns: plumb_testenv::TestNamespace,
    client: kube::Client,
    _server: Running,
    http: reqwest::Client,
    url: String,
}

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/webhook")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Hooks {
    async fn start(prefix: &str, secrets: &[(&str, &str)], cm: &[(&str, &str)]) -> Self {
        Self::start_serving(prefix, secrets, cm, None).await
    }

    /// [`Hooks::start`] with `--application-namespaces`.
    async fn start_serving(
        prefix: &str,
        secrets: &[(&str, &str)],
        cm: &[(&str, &str)],
        app_namespaces: Option<Vec<String>>,
    ) -> Self {
        let env = env();
        let ns = env.namespace(prefix);
        let client = env.client().await;
        create_default_project(&client, ns.name()).await;
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": "argocd-secret"},
            "stringData": secrets.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        }))
        .expect("secret");
        Api::<Secret>::namespaced(client.clone(), ns.name())
            .create(&PostParams::default(), &secret)
            .await
            .expect("create argocd-secret");
        let config_map: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "argocd-cm"},
            "data": cm.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        }))
        .expect("configmap");
        Api::<ConfigMap>::namespaced(client.clone(), ns.name())
            .create(&PostParams::default(), &config_map)
            .await
            .expect("create argocd-cm");
        let mut config = server_config(ns.name());
        config.application_namespaces = app_namespaces;
        let server = plumb_server::serve(client.clone(), config)
            .await
            .expect("server starts");
        let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
        let url = format!("https://localhost:{}/api/webhook", server.addr.port());
        Self {
            ns,
            client,
            _server: server,
            http,
            url,
        }
    }

    async fn create_app(&self, name: &str, sources: Value) {
        self.create_app_in(self.ns.name(), name, sources).await;
    }

    async fn create_app_in(&self, namespace: &str, name: &str, sources: Value) {
        let mut spec = json!({"project": "default",
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"}});
        if sources.is_array() {
            spec["sources"] = sources;
        } else {
            spec["source"] = sources;
        }
        let app: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name}, "spec": spec}))
        .expect("application");
        Api::<DynamicObject>::namespaced_with(
            self.client.clone(),
            namespace,
            &application_resource(),
        )
        .create(&PostParams::default(), &app)
        .await
        .unwrap_or_else(|e| panic!("create Application {namespace}/{name}: {e}"));
    }

    /// Names of the Applications carrying the refresh annotation (with its value).
    async fn refreshed(&self) -> BTreeSet<String> {
        self.refreshed_in(self.ns.name()).await
    }

    async fn refreshed_in(&self, namespace: &str) -> BTreeSet<String> {
        Api::<DynamicObject>::namespaced_with(
            self.client.clone(),
            namespace,
            &application_resource(),
        )
        .list(&ListParams::default())
        .await
        .expect("list Applications")
        .into_iter()
        .filter_map(|a| {
            let value = a.metadata.annotations.as_ref()?.get(REFRESH)?.clone();
            Some(format!("{}={value}", a.metadata.name?))
        })
        .collect()
    }

    async fn post(&self, headers: &[(&str, String)], body: &str) -> (u16, String) {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let resp = req.send().await.expect("POST /api/webhook");
        let code = resp.status().as_u16();
        (code, resp.text().await.unwrap_or_default())
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| format!("{n}=normal")).collect()
}

fn src(repo: &str, rev: &str) -> Value {
    json!({"repoURL": repo, "path": "apps/payments", "targetRevision": rev})
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// One provider: the headers of a valid request, of one with a wrong proof, and of one with none.
struct Case {
    name: &'static str,
    fixture: &'static str,
    valid: Vec<(&'static str, String)>,
    invalid: Vec<(&'static str, String)>,
    missing: Vec<(&'static str, String)>,
    /// Applications that must be refreshed: (name, source).
    hit: Vec<(&'static str, Value)>,
    /// Applications that must not be.
    miss: Vec<(&'static str, Value)>,
}

const SECRETS: &[(&str, &str)] = &[
    ("webhook.github.secret", "gh-s3cret"),
    ("webhook.gitlab.secret", "gl-t0ken"),
    (
        "webhook.bitbucket.uuid",
        "{4b6c3e7a-0d1f-4c55-9b1a-2f0e8d7c6b5a}",
    ),
    ("webhook.bitbucketserver.secret", "bbs-s3cret"),
    ("webhook.gogs.secret", "gogs-s3cret"),
    ("webhook.azuredevops.username", "argocd"),
    ("webhook.azuredevops.password", "az-pass"),
];

fn cases() -> Vec<Case> {
    let gh = fixture("github-push.json");
    let bbs = fixture("bitbucketserver-push.json");
    let gogs = fixture("gogs-push.json");
    vec![
        Case {
            name: "github",
            fixture: "github-push.json",
            valid: vec![
                ("x-github-event", "push".into()),
                (
                    "x-hub-signature-256",
                    format!("sha256={}", sign_sha256_hex(b"gh-s3cret", gh.as_bytes())),
                ),
            ],
            invalid: vec![
                ("x-github-event", "push".into()),
                (
                    "x-hub-signature-256",
                    format!("sha256={}", sign_sha256_hex(b"gh-guess", gh.as_bytes())),
                ),
            ],
            missing: vec![("x-github-event", "push".into())],
            hit: vec![
                (
                    "gh-https",
                    src("https://github.com/acme/payments-config.git", "main"),
                ),
                (
                    "gh-scp-head",
                    src("git@github.com:ACME/payments-config.git", "HEAD"),
                ),
                (
                    "gh-ssh-ref",
                    src(
                        "ssh://git@github.com/acme/payments-config",
                        "refs/heads/main",
                    ),
                ),
                (
                    "gh-multi",
                    json!([
                    {"repoURL": "https://charts.acme.internal", "chart": "payments", "targetRevision": "1.2.0"},
                    {"repoURL": "https://github.com/acme/payments-config", "targetRevision": "main", "ref": "values"}]),
                ),
            ],
            miss: vec![
                (
                    "gh-branch",
                    src("https://github.com/acme/payments-config", "release"),
                ),
                (
                    "gh-tag",
                    src("https://github.com/acme/payments-config", "v1.4.0"),
                ),
                (
                    "gh-longer",
                    src("https://github.com/acme/payments-config-v2", "main"),
                ),
                (
                    "gh-other-org",
                    src("https://github.com/other/payments-config", "main"),
                ),
                (
                    "gh-lookalike",
                    src(
                        "https://github.com.evil.example/acme/payments-config",
                        "main",
                    ),
                ),
            ],
        },
        Case {
            name: "gitlab",
            fixture: "gitlab-push.json",
            valid: vec![
                ("x-gitlab-event", "Push Hook".into()),
                ("x-gitlab-token", "gl-t0ken".into()),
            ],
            invalid: vec![
                ("x-gitlab-event", "Push Hook".into()),
                ("x-gitlab-token", "gl-t0ke".into()),
            ],
            missing: vec![("x-gitlab-event", "Push Hook".into())],
            hit: vec![(
                "gl-main",
                src("git@gitlab.com:acme/payments-config.git", "main"),
            )],
            miss: vec![(
                "gl-github",
                src("https://github.com/acme/payments-config-gl", "main"),
            )],
        },
        Case {
            name: "bitbucket",
            fixture: "bitbucket-push.json",
            valid: vec![
                ("x-event-key", "repo:push".into()),
                (
                    "x-hook-uuid",
                    "{4b6c3e7a-0d1f-4c55-9b1a-2f0e8d7c6b5a}".into(),
                ),
            ],
            invalid: vec![
                ("x-event-key", "repo:push".into()),
                (
                    "x-hook-uuid",
                    "{00000000-0000-0000-0000-000000000000}".into(),
                ),
            ],
            // Without the UUID header the request reads as Bitbucket Server's, unsigned.
            missing: vec![("x-event-key", "repo:push".into())],
            hit: vec![(
                "bb-release",
                src(
                    "https://bitbucket.org/acme/payments-config",
                    "release/2026.12",
                ),
            )],
            miss: vec![(
                "bb-main",
                src("https://bitbucket.org/acme/payments-config", "main"),
            )],
        },
        Case {
            name: "bitbucket server",
            fixture: "bitbucketserver-push.json",
            valid: vec![
                ("x-event-key", "repo:refs_changed".into()),
                (
                    "x-hub-signature",
                    format!("sha256={}", sign_sha256_hex(b"bbs-s3cret", bbs.as_bytes())),
                ),
            ],
            invalid: vec![
                ("x-event-key", "repo:refs_changed".into()),
                (
                    "x-hub-signature",
                    format!("sha256={}", sign_sha256_hex(b"gh-s3cret", bbs.as_bytes())),
                ),
            ],
            missing: vec![("x-event-key", "repo:refs_changed".into())],
            hit: vec![
                (
                    "bbs-http",
                    src(
                        "https://bitbucket.acme.internal/scm/plat/payments-config.git",
                        "main",
                    ),
                ),
                (
                    "bbs-ssh",
                    src(
                        "ssh://git@bitbucket.acme.internal:7999/plat/payments-config.git",
                        "HEAD",
                    ),
                ),
            ],
            miss: vec![(
                "bbs-other",
                src(
                    "https://bitbucket.acme.internal/scm/plat/ledger-config.git",
                    "main",
                ),
            )],
        },
        Case {
            name: "gogs",
            fixture: "gogs-push.json",
            valid: vec![
                ("x-gogs-event", "push".into()),
                ("x-github-event", "push".into()),
                (
                    "x-gogs-signature",
                    sign_sha256_hex(b"gogs-s3cret", gogs.as_bytes()),
                ),
            ],
            invalid: vec![
                ("x-gogs-event", "push".into()),
                ("x-gogs-signature", sign_sha256_hex(b"gogs-s3cret", b"{}")),
            ],
            missing: vec![("x-gogs-event", "push".into())],
            hit: vec![(
                "gogs-main",
                src(
                    "https://gitea.acme.internal/platform/payments-config.git",
                    "main",
                ),
            )],
            miss: vec![(
                "gogs-dev",
                src(
                    "https://gitea.acme.internal/platform/payments-config.git",
                    "dev",
                ),
            )],
        },
        Case {
            name: "azure devops",
            fixture: "azuredevops-push.json",
            valid: vec![
                (
                    "x-vss-activityid",
                    "2b0c5f1e-9a3d-4c7b-8e6f-1a2b3c4d5e6f".into(),
                ),
                ("authorization", format!("Basic {}", b64("argocd:az-pass"))),
            ],
            invalid: vec![
                (
                    "x-vss-activityid",
                    "2b0c5f1e-9a3d-4c7b-8e6f-1a2b3c4d5e6f".into(),
                ),
                ("authorization", format!("Basic {}", b64("argocd:az-guess"))),
            ],
            missing: vec![(
                "x-vss-activityid",
                "2b0c5f1e-9a3d-4c7b-8e6f-1a2b3c4d5e6f".into(),
            )],
            hit: vec![(
                "az-main",
                src(
                    "https://dev.azure.com/acme/platform/_git/payments-config",
                    "main",
                ),
            )],
            miss: vec![(
                "az-other",
                src(
                    "https://dev.azure.com/acme/platform/_git/ledger-config",
                    "main",
                ),
            )],
        },
    ]
}

#[tokio::test]
async fn webhooks_are_verified_per_provider_and_refresh_exactly_the_matching_applications() {
    let hooks = Hooks::start("webhook", SECRETS, &[]).await;
    for case in cases() {
        for (name, source) in case.hit.iter().chain(&case.miss) {
            hooks.create_app(name, source.clone()).await;
        }
    }
    let mut expected = BTreeSet::new();
    for case in cases() {
        let body = fixture(case.fixture);
        for (what, headers) in [("missing", &case.missing), ("invalid", &case.invalid)] {
            let (code, text) = hooks.post(headers, &body).await;
            assert_eq!(code, 400, "{} with a {what} proof: {text}", case.name);
            assert!(
                text.starts_with("Webhook processing failed"),
                "{}: {text}",
                case.name
            );
            assert!(
                !text.contains("s3cret") && !text.contains("az-pass"),
                "{text}"
            );
            assert_eq!(
                hooks.refreshed().await,
                expected,
                "{} with a {what} proof refreshed something",
                case.name
            );
        }
        let (code, text) = hooks.post(&case.valid, &body).await;
        assert_eq!(code, 200, "{} valid: {text}", case.name);
        expected.extend(set(&case.hit.iter().map(|(n, _)| *n).collect::<Vec<_>>()));
        assert_eq!(
            hooks.refreshed().await,
            expected,
            "{} valid push",
            case.name
        );
    }

    // A ping is accepted and changes nothing; an unknown sender is refused.
    let ping = r#"{"zen":"Keep it logically awesome.","hook_id":1}"#;
    let sig = format!("sha256={}", sign_sha256_hex(b"gh-s3cret", ping.as_bytes()));
    let (code, _) = hooks
        .post(
            &[
                ("x-github-event", "ping".into()),
                ("x-hub-signature-256", sig),
            ],
            ping,
        )
        .await;
    assert_eq!(code, 200);
    let (code, text) = hooks.post(&[], &fixture("github-push.json")).await;
    assert_eq!((code, text.as_str()), (400, "Unknown webhook event"));
    assert_eq!(hooks.refreshed().await, expected);
}

#[tokio::test]
async fn without_a_secret_pushes_are_accepted_unverified_and_oversized_ones_refused() {
    let hooks = Hooks::start("webhook-open", &[], &[("webhook.maxPayloadSizeMB", "3")]).await;
    hooks
        .create_app(
            "tagged",
            src(
                "https://github.com/acme/payments-config",
                "refs/tags/v1.4.0",
            ),
        )
        .await;
    hooks
        .create_app(
            "main",
            src("https://github.com/acme/payments-config", "main"),
        )
        .await;
    let (code, text) = hooks
        .post(
            &[("x-github-event", "push".into())],
            &fixture("github-tag.json"),
        )
        .await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(hooks.refreshed().await, set(&["tagged"]));

    // Above webhook.maxPayloadSizeMB (3 MB here): refused, nothing refreshed.
    let mut big: Value = serde_json::from_str(&fixture("github-push.json")).expect("json");
    big["padding"] = json!("x".repeat(3 * 1024 * 1024 + 1));
    let (code, text) = hooks
        .post(&[("x-github-event", "push".into())], &big.to_string())
        .await;
    assert_eq!(code, 400, "{text}");
    assert!(text.contains("must be under 3 MB"), "{text}");
    assert_eq!(hooks.refreshed().await, set(&["tagged"]));
    // Under it but above the API's 2 MiB body limit: accepted (webhooks have their own limit).
    big["padding"] = json!("x".repeat(2560 * 1024));
    let (code, text) = hooks
        .post(&[("x-github-event", "push".into())], &big.to_string())
        .await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(hooks.refreshed().await, set(&["main", "tagged"]));
}

/// The time from a push notification to the Application's status showing the pushed commit,
/// with the controller running and `timeout.reconciliation` at its default (120 s, so without the
/// webhook the same change waits up to two minutes). A measurement, not a check: run it by name
/// (`cargo test -p plumb-server --test it -- --ignored bench_push_to_refreshed_status
/// --nocapture`); docs/performance.md has the figures.
#[tokio::test]
#[ignore = "a measurement; run by name"]
async fn bench_push_to_refreshed_status() {
    use std::time::{Duration, Instant};

    let stack = crate::support::Stack::start("webhook-bench").await;
    let repo = plumb_testenv::git::GitRepo::named("payments-config");
    let cm = |v: u32| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments\ndata:\n  VERSION: \"{v}\"\n"
        )
    };
    repo.commit(&[("apps/payments/cm.yaml", cm(0))], "v0");
    let git = plumb_testenv::git_http::GitHttpServer::serve(&repo, None);
    let (code, body) = stack
        .send(
            reqwest::Method::POST,
            "/api/v1/applications?validate=false",
            Some(&json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "payments"},
                "spec": {"project": "default",
                         "source": {"repoURL": git.url(), "path": "apps/payments", "targetRevision": "main"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": stack.ns.name()}}})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let first = repo.head();
    stack
        .wait_app("payments", "first revision", |a| {
            a["status"]["sync"]["revision"] == first
        })
        .await;
    let mut times = Vec::new();
    for v in 1..=10u32 {
        let sha = repo.commit(&[("apps/payments/cm.yaml", cm(v))], &format!("v{v}"));
        let payload = json!({"ref": "refs/heads/main", "before": "0".repeat(40), "after": sha,
            "repository": {"html_url": git.url(), "default_branch": "main"},
            "commits": [{"id": sha, "modified": ["apps/payments/cm.yaml"]}]})
        .to_string();
        let started = Instant::now();
        let resp = stack
            .http
            .post(stack.url("/api/webhook"))
            .header("x-github-event", "push")
            .header("content-type", "application/json")
            .body(payload)
            .send()
            .await
            .expect("POST /api/webhook");
        assert_eq!(resp.status().as_u16(), 200);
        let answered = started.elapsed();
        loop {
            let (_, app) = stack.get("/api/v1/applications/payments").await;
            if app["status"]["sync"]["revision"] == sha.as_str() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(100),
                "push {v} not in the status within 100 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let total = started.elapsed();
        println!(
            "push {v}: webhook answered in {answered:?}, status shows the commit after {total:?}"
        );
        times.push(total);
    }
    times.sort();
    println!(
        "push -> status: min {:?}, median {:?}, max {:?} over {} pushes",
        times[0],
        times[times.len() / 2],
        times[times.len() - 1],
        times.len()
    );
}

/// `/readyz` of the server answers once the Kubernetes API answers (no token needed, like
/// `/healthz`).
#[tokio::test]
async fn readyz_answers_when_the_kubernetes_api_does() {
    let hooks = Hooks::start("readyz", &[], &[]).await;
    let url = hooks.url.replace("/api/webhook", "/readyz");
    let resp = hooks.http.get(&url).send().await.expect("GET /readyz");
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.text().await.unwrap_or_default(), "ok\n");
}

#[tokio::test]
async fn pushes_refresh_applications_in_every_served_namespace() {
    let tenant = env().namespace("hook-tenant");
    let unserved = env().namespace("hook-unserved");
    let hooks = Hooks::start_serving(
        "hook-app-ns",
        SECRETS,
        &[],
        Some(vec![tenant.name().to_string()]),
    )
    .await;
    let repo = "https://github.com/acme/payments-config.git";
    hooks.create_app("hookns-control", src(repo, "main")).await;
    hooks
        .create_app_in(tenant.name(), "hookns-tenant", src(repo, "main"))
        .await;
    hooks
        .create_app_in(tenant.name(), "hookns-other-branch", src(repo, "release"))
        .await;
    hooks
        .create_app_in(unserved.name(), "hookns-unserved", src(repo, "main"))
        .await;
    let body = fixture("github-push.json");
    let (code, text) = hooks
        .post(
            &[
                ("x-github-event", "push".into()),
                (
                    "x-hub-signature-256",
                    format!("sha256={}", sign_sha256_hex(b"gh-s3cret", body.as_bytes())),
                ),
            ],
            &body,
        )
        .await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(hooks.refreshed().await, set(&["hookns-control"]));
    assert_eq!(
        hooks.refreshed_in(tenant.name()).await,
        set(&["hookns-tenant"]),
        "the served tenant namespace is refreshed, other branches are not"
    );
    assert!(
        hooks.refreshed_in(unserved.name()).await.is_empty(),
        "a namespace the server does not serve is left alone"
    );
}

/// Issue #35 item 6: payloads with a field missing or of the wrong type are refused (400, the
/// field named) and refresh nothing, verified or not; the intact payload then refreshes.
#[tokio::test]
async fn malformed_payloads_are_refused_and_refresh_nothing() {
    let hooks = Hooks::start("webhook-malformed", &[], &[]).await;
    hooks
        .create_app(
            "main",
            src("https://github.com/acme/payments-config", "main"),
        )
        .await;
    hooks
        .create_app(
            "gitlab",
            src("https://gitlab.com/acme/payments-config", "main"),
        )
        .await;
    let github: Value = serde_json::from_str(&fixture("github-push.json")).expect("json");
    let gitlab: Value = serde_json::from_str(&fixture("gitlab-push.json")).expect("json");
    let with = |base: &Value, pointer: &str, value: Option<Value>| {
        let mut v = base.clone();
        let (parent, key) = pointer.rsplit_once('/').expect("pointer");
        let obj = v
            .pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .expect("parent object");
        match value {
            Some(new) => obj.insert(key.to_string(), new),
            None => obj.remove(key),
        };
        v.to_string()
    };
    let gh = [("x-github-event", "push".to_string())];
    let gl = [("x-gitlab-event", "Push Hook".to_string())];
    let cases = [
        (&gh, with(&github, "/ref", None), "ref is missing"),
        (
            &gh,
            with(&github, "/ref", Some(json!(["refs/heads/main"]))),
            "ref must be a string",
        ),
        (
            &gh,
            with(&github, "/repository", None),
            "repository.html_url is missing",
        ),
        (
            &gh,
            with(&github, "/repository/html_url", Some(json!(7))),
            "repository.html_url must be a string",
        ),
        (
            &gh,
            with(
                &github,
                "/repository/default_branch",
                Some(json!({"name": "main"})),
            ),
            "repository.default_branch must be a string",
        ),
        (
            &gh,
            with(
                &github,
                "/commits",
                Some(json!("apps/payments/deployment.yaml")),
            ),
            "commits must be an array",
        ),
        (
            &gl,
            with(&gitlab, "/project", None),
            "project.web_url is missing",
        ),
        (
            &gl,
            with(&gitlab, "/project/web_url", Some(json!(true))),
            "project.web_url must be a string",
        ),
        (
            &gl,
            with(&gitlab, "/object_kind", Some(json!(7))),
            "object_kind must be a string",
        ),
    ];
    for (headers, body, expected) in cases {
        let (code, text) = hooks.post(headers, &body).await;
        assert_eq!(code, 400, "{expected}: {text}");
        assert!(text.contains(expected), "{expected}: {text}");
    }
    assert_eq!(
        hooks.refreshed().await,
        BTreeSet::new(),
        "nothing refreshed"
    );
    let (code, text) = hooks.post(&gh, &github.to_string()).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(hooks.refreshed().await, set(&["main"]));
}
