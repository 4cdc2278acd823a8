//! `sso/callback_round_trip`: `/auth/login` (untimed) then `/auth/callback` (timed) through the
//! real server, against a provider in this process whose token endpoint's own time is
//! subtracted from each round trip.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::routing::{get, post};
use criterion::Criterion;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// The provider: codes it issued (to the nonce of their login), its signing key, and the time
/// its token endpoint spent.
struct Idp {
    issuer: String,
    jwks: Value,
    key: jsonwebtoken::EncodingKey,
    codes: Mutex<HashMap<String, String>>,
    spent_nanos: AtomicU64,
}

async fn discovery(State(idp): State<Arc<Idp>>) -> axum::Json<Value> {
    let i = &idp.issuer;
    axum::Json(json!({
        "issuer": i, "authorization_endpoint": format!("{i}/auth"),
        "token_endpoint": format!("{i}/token"), "jwks_uri": format!("{i}/keys"),
        "response_types_supported": ["code"], "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "profile", "email", "groups", "offline_access"],
    }))
}

async fn keys(State(idp): State<Arc<Idp>>) -> axum::Json<Value> {
    axum::Json(idp.jwks.clone())
}

async fn token(State(idp): State<Arc<Idp>>, body: axum::body::Bytes) -> axum::Json<Value> {
    let started = Instant::now();
    let code = url::form_urlencoded::parse(&body)
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let nonce = idp
        .codes
        .lock()
        .expect("codes")
        .remove(&code)
        .unwrap_or_default();
    let now = jiff::Timestamp::now().as_second();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("k1".into());
    let id_token = jsonwebtoken::encode(
        &header,
        &json!({"iss": idp.issuer, "sub": "bench-user", "aud": "plumb", "exp": now + 3600,
                "iat": now, "nonce": nonce, "email": "alice@example.com",
                "groups": ["my-org:team-a"]}),
        &idp.key,
    )
    .expect("sign");
    let answer = json!({"access_token": "bench-access", "token_type": "Bearer",
        "expires_in": 3600, "refresh_token": "bench-refresh", "id_token": id_token});
    idp.spent_nanos.fetch_add(
        u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    axum::Json(answer)
}

async fn start_idp(der: &[u8], jwks: Value) -> Arc<Idp> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let idp = Arc::new(Idp {
        issuer: format!("http://{}", listener.local_addr().expect("addr")),
        jwks,
        key: jsonwebtoken::EncodingKey::from_rsa_der(der),
        codes: Mutex::new(HashMap::new()),
        spent_nanos: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/keys", get(keys))
        .route("/token", post(token))
        .with_state(idp.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    idp
}

/// The server's answer: (status, Location, the Set-Cookie values).
async fn send(req: reqwest::RequestBuilder) -> (u16, String, Vec<String>) {
    let resp = req.send().await.expect("request");
    let location = resp
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let cookies = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|c| c.split(';').next().unwrap_or_default().to_string())
        .collect();
    (resp.status().as_u16(), location, cookies)
}

fn query_param(url: &str, name: &str) -> String {
    url::Url::parse(url)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// The server over a new namespace of the test cluster, SSO pointing at `idp`.
async fn start_server(
    idp: &Idp,
) -> (
    plumb_testenv::TestNamespace,
    plumb_server::Running,
    reqwest::Client,
    String,
) {
    let env = plumb_testenv::TestEnv::shared();
    env.install_plumb_crds();
    let ns = env.namespace("sso-bench");
    let client = env.client().await;
    let mut config = plumb_server::ServerConfig::new(tempfile::tempdir().expect("tempdir").keep());
    config.listen = "127.0.0.1:0".parse().expect("address");
    config.control_namespace = ns.name().to_string();
    config.tls = plumb_server::TlsMode::SelfSigned { names: Vec::new() };
    config.disable_auth = false;
    config.application_namespaces = Some(Vec::new());
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("server");
    let base = format!("https://localhost:{}", server.addr.port());
    let oidc = format!(
        "name: Bench\nissuer: {}\nclientID: plumb\nclientSecret: bench-secret\n\
         requestedScopes: [openid, profile, email, groups, offline_access]\n",
        idp.issuer
    );
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "argocd-cm"},
        "data": {"url": base, "oidc.config": oidc}}))
    .expect("ConfigMap");
    let cms: Api<ConfigMap> = Api::namespaced(client, ns.name());
    if cms.create(&PostParams::default(), &cm).await.is_err() {
        cms.replace("argocd-cm", &PostParams::default(), &cm)
            .await
            .expect("argocd-cm");
    }
    let pem = server.certificate_pem.clone().expect("TLS");
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pem.as_bytes()).expect("cert")])
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    (ns, server, http, base)
}

/// One login: `/auth/login` untimed, then the callback; the callback's time less the
/// provider's.
async fn one_login(idp: &Idp, http: &reqwest::Client, base: &str) -> Duration {
    let (status, to_idp, cookies) =
        send(http.get(format!("{base}/auth/login?return_url=%2Fapplications"))).await;
    assert_eq!(status, 303, "login: {to_idp}");
    let code = format!("code-{}", query_param(&to_idp, "state"));
    idp.codes
        .lock()
        .expect("codes")
        .insert(code.clone(), query_param(&to_idp, "nonce"));
    let state = query_param(&to_idp, "state");
    let before = idp.spent_nanos.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut callback = url::Url::parse(&format!("{base}/auth/callback")).expect("url");
    callback
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state);
    let (status, back, set) = send(
        http.get(callback.as_str())
            .header("cookie", cookies.join("; ")),
    )
    .await;
    let total = started.elapsed();
    assert_eq!((status, back.as_str()), (303, "/applications"), "{set:?}");
    assert!(
        set.iter().any(|c| c.starts_with("argocd.token=ey")),
        "{set:?}"
    );
    let idp_time = Duration::from_nanos(idp.spent_nanos.load(Ordering::Relaxed) - before);
    total.saturating_sub(idp_time)
}

pub(crate) fn callback_round_trip(c: &mut Criterion) {
    if std::env::var_os("PLUMB_TEST_KUBECONFIG").is_none() {
        eprintln!(
            "sso/callback_round_trip skipped: it needs the test cluster (PLUMB_TEST_KUBECONFIG)"
        );
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (der, jwks) = super::rsa_key();
    let (idp, (_ns, _server, http, base)) = rt.block_on(async {
        let idp = start_idp(&der, jwks).await;
        let server = start_server(&idp).await;
        (idp, server)
    });
    // The server reads argocd-cm as it changes: until SSO is ready.
    rt.block_on(async {
        for _ in 0..100 {
            let (status, _, _) = send(http.get(format!("{base}/auth/login"))).await;
            if status == 303 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("SSO never became ready");
    });
    let mut group = c.benchmark_group("sso");
    group.sample_size(20);
    group.bench_function("callback_round_trip", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut sum = Duration::ZERO;
                for _ in 0..iters {
                    sum += one_login(&idp, &http, &base).await;
                }
                sum
            })
        })
    });
    group.finish();
}
