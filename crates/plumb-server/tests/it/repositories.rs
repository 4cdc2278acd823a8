//! `RepositoryService`, `RepoCredsService` and `CertificateService` (issue #27): repositories
//! added with the connection checked against a real Git server requiring Basic credentials,
//! Argo's Secret layout, masked answers, upsert, RBAC, deletion; credential templates lending
//! their credentials; certificates round-tripped into Argo's ConfigMaps; hostile values
//! refused naming their field. No answer carries a credential.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use plumb_app::repo_admin::{Role, secret_name};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::AuthStack;

pub(crate) const PASSWORD: &str = "s3cret-Repo-pw-27";

pub(crate) fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Every answer seen, to check none carries a credential.
#[derive(Default)]
pub(crate) struct Seen(String);

impl Seen {
    pub(crate) async fn call(
        &mut self,
        s: &AuthStack,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let (code, v) = s.call(method, path, Some(token), body).await;
        self.0.push_str(&v.to_string());
        (code, v)
    }

    pub(crate) fn assert_clean(&self, secrets: &[&str]) {
        for secret in secrets {
            assert!(
                !self.0.contains(secret),
                "an answer carries {secret:?}: {}",
                self.0
            );
        }
    }
}

pub(crate) async fn secret(s: &AuthStack, name: &str) -> Option<Secret> {
    let api: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    api.get_opt(name).await.expect("read Secret")
}

pub(crate) fn data(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
}

fn served_repo(name: &str) -> (GitRepo, GitHttpServer) {
    let repo = GitRepo::named(name);
    repo.commit(&[("README", "hello\n")], "first");
    let http = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
    (repo, http)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repositories_are_checked_stored_as_argo_masked_and_deleted() {
    let s = AuthStack::start("repos-api", Default::default()).await;
    let admin = s.admin_token().await;
    let (_repo, http) = served_repo("repos-api");
    let url = http.url();
    let mut seen = Seen::default();

    // A wrong password: refused with Argo's message, nothing stored.
    let wrong = json!({"repo": url, "username": "bot", "password": "not-the-pw-99"});
    let (code, body) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&wrong),
        )
        .await;
    assert_eq!(code, 500, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "error testing repository connectivity: unable to ls-remote HEAD on repository:"
        ),
        "{message}"
    );
    let name = secret_name(Role::Repository, &url, "");
    assert!(secret(&s, &name).await.is_none());

    // The right one: stored under Argo's name, label, annotation and keys.
    let good = json!({"repo": url, "username": "bot", "password": PASSWORD, "type": "git"});
    let (code, body) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&good),
        )
        .await;
    assert_eq!((code, &body), (200, &json!({"repo": url, "type": "git"})));
    let stored = secret(&s, &name).await.expect("the repository Secret");
    let labels = stored.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels["argocd.argoproj.io/secret-type"], "repository");
    let annotations = stored.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations["managed-by"], "argocd.argoproj.io");
    assert_eq!(data(&stored, "url").as_deref(), Some(url.as_str()));
    assert_eq!(data(&stored, "password").as_deref(), Some(PASSWORD));
    assert_eq!(data(&stored, "type").as_deref(), Some("git"));

    // The same again is fine; a different spec needs upsert.
    let (code, _) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&good),
        )
        .await;
    assert_eq!(code, 200);
    let mut named = good.clone();
    named["name"] = json!("team-repo");
    let (code, body) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&named),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "existing repository spec is different; use upsert flag to force update; difference in keys \"Name\""
    );
    let (code, body) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories?upsert=true",
            &admin,
            Some(&named),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let stored = secret(&s, &name).await.expect("the repository Secret");
    assert_eq!(data(&stored, "name").as_deref(), Some("team-repo"));

    // Listed and read masked, with the connection state.
    let (code, list) = seen
        .call(&s, Method::GET, "/api/v1/repositories", &admin, None)
        .await;
    assert_eq!(code, 200, "{list}");
    let item = &list["items"][0];
    assert_eq!(item["repo"], json!(url));
    assert_eq!(item["username"], "bot");
    assert_eq!(item["name"], "team-repo");
    assert_eq!(item["connectionState"]["status"], "Successful", "{item}");
    assert!(item.get("password").is_none(), "{item}");
    let (code, got) = seen
        .call(
            &s,
            Method::GET,
            &format!("/api/v1/repositories/{}", enc(&url)),
            &admin,
            None,
        )
        .await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["repo"], json!(url));

    // Deleted.
    let (code, body) = seen
        .call(
            &s,
            Method::DELETE,
            &format!("/api/v1/repositories/{}", enc(&url)),
            &admin,
            None,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert!(secret(&s, &name).await.is_none());
    let (code, _) = seen
        .call(
            &s,
            Method::GET,
            &format!("/api/v1/repositories/{}", enc(&url)),
            &admin,
            None,
        )
        .await;
    assert_eq!(code, 403);
    seen.assert_clean(&[PASSWORD]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_rights_are_checked_per_project_and_url() {
    let s = AuthStack::start("repos-rbac", Default::default()).await;
    let admin = s.admin_token().await;
    let (_repo, http) = served_repo("repos-rbac");
    let url = http.url();
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    let mut seen = Seen::default();
    let global = json!({"repo": url, "username": "bot", "password": PASSWORD});

    s.set_policy(&format!("p, u, repositories, get, {url}, allow\n"), "")
        .await;
    let (code, body) = seen
        .call(&s, Method::POST, "/api/v1/repositories", &u, Some(&global))
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        json!(format!(
            "permission denied: repositories, create, {url}, sub: u"
        ))
    );
    let (code, _) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&global),
        )
        .await;
    assert_eq!(code, 200);
    let (_, list) = seen
        .call(&s, Method::GET, "/api/v1/repositories", &u, None)
        .await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list}");

    // A project-scoped repository: the object is <project>/<url>; no connection check.
    let scoped = json!({"repo": "https://git.invalid/team/app.git", "project": "default",
        "username": "bot", "password": PASSWORD});
    s.set_policy("p, u, repositories, create, default/*, allow\n", "")
        .await;
    let (code, body) = seen
        .call(&s, Method::POST, "/api/v1/repositories", &u, Some(&scoped))
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, _) = seen
        .call(&s, Method::POST, "/api/v1/repositories", &u, Some(&global))
        .await;
    assert_eq!(code, 403);
    // Nothing to get: the list is empty, a get is denied, so is a delete.
    let (_, list) = seen
        .call(&s, Method::GET, "/api/v1/repositories", &u, None)
        .await;
    assert_eq!(list["items"], json!([]), "{list}");
    let path = format!("/api/v1/repositories/{}", enc(&url));
    let (code, _) = seen.call(&s, Method::GET, &path, &u, None).await;
    assert_eq!(code, 403);
    let (code, _) = seen.call(&s, Method::DELETE, &path, &u, None).await;
    assert_eq!(code, 403);
    s.set_policy(
        &format!(
            "p, u, repositories, get, {url}, allow\np, u, repositories, delete, {url}, allow\n"
        ),
        "",
    )
    .await;
    let (code, body) = seen.call(&s, Method::DELETE, &path, &u, None).await;
    assert_eq!(code, 200, "{body}");
    seen.assert_clean(&[PASSWORD]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_templates_lend_their_credentials() {
    let s = AuthStack::start("repocreds-api", Default::default()).await;
    let admin = s.admin_token().await;
    let (_repo, http) = served_repo("repocreds-api");
    let url = http.url();
    let prefix = url
        .rsplit_once('/')
        .map(|(p, _)| p.to_owned())
        .unwrap_or_default();
    let mut seen = Seen::default();
    let creds = json!({"url": prefix, "username": "bot", "password": PASSWORD});
    let (code, body) = seen
        .call(&s, Method::POST, "/api/v1/repocreds", &admin, Some(&creds))
        .await;
    assert_eq!((code, &body), (200, &json!({"url": prefix})));
    let stored = secret(&s, &secret_name(Role::Template, &prefix, ""))
        .await
        .expect("creds-<hash>");
    assert_eq!(
        stored.metadata.labels.clone().unwrap_or_default()["argocd.argoproj.io/secret-type"],
        "repo-creds"
    );
    let (_, list) = seen
        .call(&s, Method::GET, "/api/v1/repocreds", &admin, None)
        .await;
    assert_eq!(
        list["items"],
        json!([{"url": prefix, "username": "bot", "type": "git"}])
    );

    // A repository without credentials passes the check with the template's.
    let bare = json!({"repo": url});
    let (code, body) = seen
        .call(
            &s,
            Method::POST,
            "/api/v1/repositories",
            &admin,
            Some(&bare),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (_, list) = seen
        .call(&s, Method::GET, "/api/v1/repositories", &admin, None)
        .await;
    assert_eq!(list["items"][0]["inheritedCreds"], true, "{list}");

    let (code, _) = seen
        .call(
            &s,
            Method::DELETE,
            &format!("/api/v1/repocreds/{}", enc(&prefix)),
            &admin,
            None,
        )
        .await;
    assert_eq!(code, 200);
    let (code, body) = seen
        .call(
            &s,
            Method::DELETE,
            &format!("/api/v1/repocreds/{}", enc(&prefix)),
            &admin,
            None,
        )
        .await;
    assert_eq!(code, 404, "{body}");
    seen.assert_clean(&[PASSWORD]);
}

/// github.com's published Ed25519 host key.
const GITHUB_KEY: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

pub(crate) fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

async fn config_map(s: &AuthStack, name: &str) -> std::collections::BTreeMap<String, String> {
    let api: Api<ConfigMap> = Api::namespaced(s.client.clone(), s.ns.name());
    api.get_opt(name)
        .await
        .expect("read ConfigMap")
        .and_then(|cm| cm.data)
        .unwrap_or_default()
}

fn test_certificate() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(vec!["git.example.com".into()]).expect("params");
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "git.example.com");
    params.self_signed(&key).expect("cert").pem()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_round_trip_into_argos_config_maps() {
    let s = AuthStack::start("certs-api", Default::default()).await;
    let admin = s.admin_token().await;
    let ssh = json!({"items": [{"serverName": "github.com", "certType": "ssh",
        "certSubType": "ssh-ed25519", "certData": b64(GITHUB_KEY)}]});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/certificates",
            Some(&admin),
            Some(&ssh),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["items"][0]["certInfo"],
        "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"
    );
    let known = config_map(&s, "argocd-ssh-known-hosts-cm").await;
    assert_eq!(
        known["ssh_known_hosts"],
        format!("github.com ssh-ed25519 {GITHUB_KEY}\n")
    );

    let pem = test_certificate();
    let tls = json!({"items": [{"serverName": "git.example.com", "certType": "https",
        "certData": b64(&pem)}]});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/certificates",
            Some(&admin),
            Some(&tls),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        config_map(&s, "argocd-tls-certs-cm").await["git.example.com"],
        pem
    );

    let (code, list) = s
        .call(Method::GET, "/api/v1/certificates", Some(&admin), None)
        .await;
    assert_eq!(code, 200);
    let rows: Vec<(String, String, String)> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let t = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (t("serverName"), t("certType"), t("certSubType"))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("github.com".into(), "ssh".into(), "ssh-ed25519".into()),
            ("git.example.com".into(), "https".into(), "ecdsa".into()),
        ]
    );
    assert_eq!(list["items"][1]["certInfo"], "CN=git.example.com");

    // Another key for the same host and type needs upsert.
    let other = json!({"items": [{"serverName": "github.com", "certType": "ssh",
        "certSubType": "ssh-ed25519", "certData": b64("AAAAC3NzaC1lZDI1NTE5AAAAIA5kBFR3t3jNo0XJ5cHx1v2nQOmFTbQT1kM3C0NqD3wB")}]});
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/certificates",
            Some(&admin),
            Some(&other),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "key for 'github.com' (subtype: 'ssh-ed25519') already exists, and upsert was not specified"
    );

    let (code, body) = s
        .call(
            Method::DELETE,
            "/api/v1/certificates?hostNamePattern=git*&certType=https",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1));
    assert!(config_map(&s, "argocd-tls-certs-cm").await.is_empty());
    assert!(
        config_map(&s, "argocd-ssh-known-hosts-cm").await["ssh_known_hosts"].contains("github.com")
    );

    // RBAC: certificates, empty object.
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    s.set_policy("p, u, certificates, get, *, allow\n", "")
        .await;
    let (code, _) = s
        .call(Method::GET, "/api/v1/certificates", Some(&u), None)
        .await;
    assert_eq!(code, 200);
    let (code, body) = s
        .call(Method::POST, "/api/v1/certificates", Some(&u), Some(&ssh))
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "permission denied: certificates, create, , sub: u"
    );
}

/// Hostile values: refused before anything is written, with a message naming the field and
/// never quoting the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_repository_and_certificate_values_name_their_field() {
    let s = AuthStack::start("repos-hostile", Default::default()).await;
    let admin = s.admin_token().await;
    let secret_text = "hostile-secret-text-1";
    let repo = |extra: Value| {
        let mut v = json!({"repo": "https://git.invalid/x.git"});
        for (k, val) in extra.as_object().into_iter().flatten() {
            v[k] = val.clone();
        }
        v
    };
    let cases = [
        (
            repo(
                json!({"sshPrivateKey": format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{secret_text}\n-----END OPENSSH PRIVATE KEY-----\n")}),
            ),
            "sshPrivateKey:",
        ),
        (
            repo(json!({"githubAppID": 1, "githubAppPrivateKey": secret_text})),
            "githubAppPrivateKey:",
        ),
        (
            repo(
                json!({"tlsClientCertData": "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"}),
            ),
            "tlsClientCertData:",
        ),
        (
            repo(json!({"password": format!("{secret_text}{}", "x".repeat(40_000))})),
            "password:",
        ),
        (repo(json!({"insecure": "maybe"})), "insecure:"),
    ];
    for (body, field) in cases {
        let (code, answer) = s
            .call(
                Method::POST,
                "/api/v1/repositories",
                Some(&admin),
                Some(&body),
            )
            .await;
        assert_eq!(code, 400, "{field}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{field}: {message}");
        assert!(!message.contains(secret_text), "{message}");
    }
    let certs = [
        json!({"serverName": "github.com", "certType": "ssh", "certSubType": "ssh-ed25519",
               "certData": b64("not base64 at all!")}),
        json!({"serverName": "git.example.com", "certType": "https",
               "certData": b64("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n")}),
        json!({"serverName": "git.example.com", "certType": "https", "certData": "%%%"}),
    ];
    for c in certs {
        let (code, answer) = s
            .call(
                Method::POST,
                "/api/v1/certificates",
                Some(&admin),
                Some(&json!({"items": [c]})),
            )
            .await;
        assert_eq!(code, 400, "{answer}");
        assert!(
            answer["message"]
                .as_str()
                .unwrap_or_default()
                .contains("certData"),
            "{answer}"
        );
    }
    // A body over the server's limit is refused before it is read.
    let huge = repo(json!({"password": "x".repeat(3 * 1024 * 1024)}));
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/repositories",
            Some(&admin),
            Some(&huge),
        )
        .await;
    assert_eq!(code, 413);
    let api: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let listed = api
        .list(&kube::api::ListParams::default().labels("argocd.argoproj.io/secret-type=repository"))
        .await
        .expect("list");
    assert!(listed.items.is_empty());
}
