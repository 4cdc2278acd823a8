//! The connection check of `POST /api/v1/repositories` for every kind of repository Argo CD
//! checks, each against a real server: OCI registries (the CNCF distribution registry, with
//! htpasswd Basic or token authentication, and without), Helm OCI, a Helm chart repository,
//! Git over SSH with a key (a real `sshd`, its host key from `argocd-ssh-known-hosts-cm`) and
//! Git over HTTPS with a TLS client certificate; then the update routes of repositories and
//! credential templates. No answer carries a credential.

use plumb_app::repo_admin::{Role, secret_name};
use plumb_testenv::chart_repo::{self, ChartRepoServer};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::{self, GitHttpServer};
use plumb_testenv::git_ssh::GitSshServer;
use plumb_testenv::oci_registry::{OciRegistry, Options};
use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::AuthStack;
use crate::repositories::{PASSWORD, Seen, b64, data, enc, secret};

const WRONG: &str = "wrong-Pw-27-oci";

/// Trusts `ca` for 127.0.0.1 through the certificates API, as an administrator would.
async fn trust_ca(s: &AuthStack, token: &str, ca: &str) {
    let body = json!({"items": [{"serverName": "127.0.0.1", "certType": "https",
        "certData": b64(ca)}]});
    let (code, answer) = s
        .call(
            Method::POST,
            "/api/v1/certificates?upsert=true",
            Some(token),
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{answer}");
}

/// Adds `body` as a repository: the status and the message (empty on success).
async fn add(s: &AuthStack, seen: &mut Seen, token: &str, body: &Value) -> (u16, String) {
    let (code, answer) = seen
        .call(s, Method::POST, "/api/v1/repositories", token, Some(body))
        .await;
    let message = answer["message"].as_str().unwrap_or_default().to_owned();
    (code, message)
}

fn refused(code: u16, message: &str) {
    assert_eq!(code, 500, "{message}");
    assert!(
        message.starts_with("error testing repository connectivity: "),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oci_repositories_are_checked_against_the_registry() {
    let s = AuthStack::start("repos-oci", Default::default()).await;
    let admin = s.admin_token().await;
    let basic = OciRegistry::start(Options {
        auth: Some(("bot", PASSWORD)),
        ..Default::default()
    });
    let open = OciRegistry::start(Options::default());
    trust_ca(&s, &admin, basic.ca_pem()).await;
    let mut seen = Seen::default();

    // Wrong password, no password: refused, nothing stored.
    let url = basic.url("charts");
    for extra in [json!({"username": "bot", "password": WRONG}), json!({})] {
        let mut body = json!({"repo": url, "type": "oci"});
        for (k, v) in extra.as_object().into_iter().flatten() {
            body[k] = v.clone();
        }
        let (code, message) = add(&s, &mut seen, &admin, &body).await;
        refused(code, &message);
        assert!(message.contains("401"), "{message}");
    }
    let name = secret_name(Role::Repository, &url, "");
    assert!(secret(&s, &name).await.is_none());

    // The right one: stored as Argo stores an OCI repository.
    let good = json!({"repo": url, "type": "oci", "username": "bot", "password": PASSWORD});
    let (code, message) = add(&s, &mut seen, &admin, &good).await;
    assert_eq!(code, 200, "{message}");
    let stored = secret(&s, &name).await.expect("the repository Secret");
    assert_eq!(data(&stored, "type").as_deref(), Some("oci"));
    assert_eq!(data(&stored, "url").as_deref(), Some(url.as_str()));
    assert_eq!(data(&stored, "username").as_deref(), Some("bot"));
    assert_eq!(data(&stored, "password").as_deref(), Some(PASSWORD));
    let (_, got) = seen
        .call(
            &s,
            Method::GET,
            &format!("/api/v1/repositories/{}", enc(&url)),
            &admin,
            None,
        )
        .await;
    assert_eq!(got["type"], "oci", "{got}");
    assert_eq!(got["connectionState"]["status"], "Successful", "{got}");

    // A registry without authentication answers anyone (trusted by its own CA).
    trust_ca(&s, &admin, open.ca_pem()).await;
    let (code, message) = add(
        &s,
        &mut seen,
        &admin,
        &json!({"repo": open.url("apps/guestbook"), "type": "oci"}),
    )
    .await;
    assert_eq!(code, 200, "{message}");
    seen.assert_clean(&[PASSWORD, WRONG]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oci_checks_follow_the_registrys_token_service() {
    let s = AuthStack::start("repos-oci-token", Default::default()).await;
    let admin = s.admin_token().await;
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", PASSWORD)),
        token_auth: true,
        ..Default::default()
    });
    trust_ca(&s, &admin, reg.ca_pem()).await;
    let mut seen = Seen::default();
    let url = reg.url("bot/charts");
    let wrong = json!({"repo": url, "type": "oci", "username": "bot", "password": WRONG});
    let (code, message) = add(&s, &mut seen, &admin, &wrong).await;
    refused(code, &message);
    let good = json!({"repo": url, "type": "oci", "username": "bot", "password": PASSWORD});
    let (code, message) = add(&s, &mut seen, &admin, &good).await;
    assert_eq!(code, 200, "{message}");
    seen.assert_clean(&[PASSWORD, WRONG]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_repositories_are_checked_over_http_and_oci() {
    let s = AuthStack::start("repos-helm", Default::default()).await;
    let admin = s.admin_token().await;
    let mut seen = Seen::default();

    // A chart repository: its index.yaml, with Basic credentials.
    let charts = ChartRepoServer::start(chart_repo::Options {
        auth: Some(("bot", PASSWORD)),
        ..Default::default()
    });
    charts.publish(&chart_repo::chart("api", "1.0.0", &[]));
    let helm = |password: &str| {
        json!({"repo": charts.url(), "type": "helm", "name": "charts",
            "username": "bot", "password": password})
    };
    let (code, message) = add(&s, &mut seen, &admin, &helm(WRONG)).await;
    refused(code, &message);
    let (code, message) = add(&s, &mut seen, &admin, &helm(PASSWORD)).await;
    assert_eq!(code, 200, "{message}");
    assert!(
        charts
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/index.yaml")),
        "the index was fetched"
    );

    // Helm over OCI: Argo's URL rule, then a login with the credentials.
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", PASSWORD)),
        ..Default::default()
    });
    trust_ca(&s, &admin, reg.ca_pem()).await;
    let host = reg.host();
    let oci = |repo: &str, password: &str| {
        json!({"repo": repo, "type": "helm", "name": "oci-charts", "enableOCI": true,
            "username": "bot", "password": password})
    };
    let (code, message) = add(&s, &mut seen, &admin, &oci(&reg.url("charts"), PASSWORD)).await;
    refused(code, &message);
    assert!(
        message.ends_with("OCI Helm repository URL should include hostname and port only"),
        "{message}"
    );
    let (code, message) = add(&s, &mut seen, &admin, &oci(&host, WRONG)).await;
    refused(code, &message);
    assert!(
        message.contains("error logging into OCI registry"),
        "{message}"
    );
    let (code, message) = add(&s, &mut seen, &admin, &oci(&host, PASSWORD)).await;
    assert_eq!(code, 200, "{message}");
    let stored = secret(&s, &secret_name(Role::Repository, &host, ""))
        .await
        .expect("the Helm OCI Secret");
    assert_eq!(data(&stored, "enableOCI").as_deref(), Some("true"));
    assert_eq!(data(&stored, "type").as_deref(), Some("helm"));
    seen.assert_clean(&[PASSWORD, WRONG]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_key_and_client_certificate_repositories_are_checked() {
    let s = AuthStack::start("repos-keys", Default::default()).await;
    let admin = s.admin_token().await;
    let mut seen = Seen::default();
    let repo = GitRepo::named("repos-keys");
    repo.commit(&[("README", "hello\n")], "first");

    // SSH: refused while the host key is unknown, accepted once it is in the known hosts.
    let ssh = GitSshServer::serve(&repo);
    let body = json!({"repo": ssh.url(), "sshPrivateKey": ssh.private_key()});
    let (code, message) = add(&s, &mut seen, &admin, &body).await;
    refused(code, &message);
    let (code, answer) = s
        .call(
            Method::POST,
            "/api/v1/certificates",
            Some(&admin),
            Some(&known_host(&ssh)),
        )
        .await;
    assert_eq!(code, 200, "{answer}");
    let (code, message) = add(&s, &mut seen, &admin, &body).await;
    assert_eq!(code, 200, "{message}");
    let stored = secret(&s, &secret_name(Role::Repository, &ssh.url(), ""))
        .await
        .expect("the SSH repository Secret");
    assert_eq!(
        data(&stored, "sshPrivateKey").as_deref(),
        Some(ssh.private_key())
    );

    // HTTPS with a client certificate: refused without it, accepted with it.
    let https = GitHttpServer::start(
        &repo,
        git_http::Options {
            tls: true,
            client_certs: true,
            ..Default::default()
        },
    );
    trust_ca(&s, &admin, https.ca_pem()).await;
    let (cert, key) = https.client_identity();
    let (code, message) = add(&s, &mut seen, &admin, &json!({"repo": https.url()})).await;
    refused(code, &message);
    let body = json!({"repo": https.url(), "tlsClientCertData": cert, "tlsClientCertKey": key});
    let (code, message) = add(&s, &mut seen, &admin, &body).await;
    assert_eq!(code, 200, "{message}");
    let (_, list) = seen
        .call(&s, Method::GET, "/api/v1/repositories", &admin, None)
        .await;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 2, "{list}");
    for item in &items {
        assert_eq!(item["connectionState"]["status"], "Successful", "{item}");
    }
    let lines: Vec<&str> = key
        .lines()
        .chain(ssh.private_key().lines())
        .filter(|l| !l.starts_with("-----") && l.len() > 16)
        .collect();
    seen.assert_clean(&lines);
}

/// The SSH server's host key as a certificates API item.
fn known_host(ssh: &GitSshServer) -> Value {
    let line = ssh.known_hosts_line();
    let mut parts = line.split_whitespace();
    let (host, kind, key) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    json!({"items": [{"serverName": host, "certType": "ssh", "certSubType": kind,
        "certData": b64(key)}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repositories_and_templates_are_updated_in_place() {
    let s = AuthStack::start("repos-update", Default::default()).await;
    let admin = s.admin_token().await;
    let mut seen = Seen::default();
    let repo = GitRepo::named("repos-update");
    repo.commit(&[("README", "hello\n")], "first");
    let http = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
    let url = http.url();
    let good = json!({"repo": url, "username": "bot", "password": PASSWORD});
    let (code, message) = add(&s, &mut seen, &admin, &good).await;
    assert_eq!(code, 200, "{message}");
    let name = secret_name(Role::Repository, &url, "");
    let before = secret(&s, &name).await.expect("stored");

    // PUT writes over the stored Secret (same name), as Argo's UpdateRepository.
    let changed = json!({"repo": url, "username": "bot", "password": "rotated-Pw-27",
        "name": "renamed", "insecure": true});
    let path = format!("/api/v1/repositories/{}", enc(&url));
    let (code, answer) = seen
        .call(&s, Method::PUT, &path, &admin, Some(&changed))
        .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer, json!({"repo": url, "name": "renamed"}));
    let after = secret(&s, &name).await.expect("still stored");
    assert_eq!(after.metadata.uid, before.metadata.uid);
    assert_eq!(data(&after, "password").as_deref(), Some("rotated-Pw-27"));
    assert_eq!(data(&after, "name").as_deref(), Some("renamed"));
    assert_eq!(data(&after, "insecure").as_deref(), Some("true"));
    // A bad value is refused naming its field, nothing changed.
    let (code, answer) = seen
        .call(
            &s,
            Method::PUT,
            &path,
            &admin,
            Some(&json!({"repo": url, "sshPrivateKey": "not a key"})),
        )
        .await;
    assert_eq!(code, 400, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("sshPrivateKey:"),
        "{answer}"
    );
    assert_eq!(
        secret(&s, &name)
            .await
            .expect("stored")
            .metadata
            .resource_version,
        after.metadata.resource_version
    );

    // RBAC: update on the URL.
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    s.set_policy(&format!("p, u, repositories, get, {url}, allow\n"), "")
        .await;
    let (code, answer) = seen.call(&s, Method::PUT, &path, &u, Some(&good)).await;
    assert_eq!(code, 403, "{answer}");
    assert_eq!(
        answer["message"],
        json!(format!(
            "permission denied: repositories, update, {url}, sub: u"
        ))
    );

    // Credential templates: created, then updated in place.
    let prefix = url
        .rsplit_once('/')
        .map(|(p, _)| p.to_owned())
        .unwrap_or_default();
    let creds = json!({"url": prefix, "username": "bot", "password": PASSWORD});
    let (code, _) = seen
        .call(&s, Method::POST, "/api/v1/repocreds", &admin, Some(&creds))
        .await;
    assert_eq!(code, 200);
    let tname = secret_name(Role::Template, &prefix, "");
    let tbefore = secret(&s, &tname).await.expect("template");
    let rotated = json!({"url": prefix, "username": "robot", "password": "rotated-Pw-27"});
    let (code, answer) = seen
        .call(
            &s,
            Method::PUT,
            &format!("/api/v1/repocreds/{}", enc(&prefix)),
            &admin,
            Some(&rotated),
        )
        .await;
    assert_eq!((code, &answer), (200, &json!({"url": prefix})));
    let tafter = secret(&s, &tname).await.expect("template");
    assert_eq!(tafter.metadata.uid, tbefore.metadata.uid);
    assert_eq!(data(&tafter, "username").as_deref(), Some("robot"));
    assert_eq!(data(&tafter, "password").as_deref(), Some("rotated-Pw-27"));
    let (code, answer) = seen
        .call(
            &s,
            Method::PUT,
            &format!("/api/v1/repocreds/{}", enc(&prefix)),
            &u,
            Some(&rotated),
        )
        .await;
    assert_eq!(code, 403, "{answer}");
    seen.assert_clean(&[PASSWORD, "rotated-Pw-27"]);
}

/// Argo's write credentials (for its source hydrator, which Plumb does not have) are refused
/// loudly on every route, and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_credentials_are_refused_loudly() {
    let s = AuthStack::start("repos-write", Default::default()).await;
    let admin = s.admin_token().await;
    let body = json!({"repo": "https://git.invalid/team/app.git", "password": PASSWORD});
    for (method, path) in [
        (Method::GET, "/api/v1/write-repositories"),
        (Method::POST, "/api/v1/write-repositories"),
        (Method::PUT, "/api/v1/write-repositories/x"),
        (Method::POST, "/api/v1/write-repocreds"),
        (Method::DELETE, "/api/v1/write-repocreds/x"),
    ] {
        let (code, answer) = s.call(method, path, Some(&admin), Some(&body)).await;
        assert_eq!(code, 400, "{path}: {answer}");
        assert!(
            answer["message"]
                .as_str()
                .unwrap_or_default()
                .contains("source hydrator"),
            "{answer}"
        );
    }
    let api: kube::api::Api<k8s_openapi::api::core::v1::Secret> =
        kube::api::Api::namespaced(s.client.clone(), s.ns.name());
    let listed = api
        .list(
            &kube::api::ListParams::default()
                .labels("argocd.argoproj.io/secret-type in (repository-write,repo-write-creds)"),
        )
        .await
        .expect("list");
    assert!(listed.items.is_empty());
}

/// A GitHub App repository added without its installation ID: the check finds the installation
/// from the URL's organisation (Argo CD 3.6), and stores the Secret without the ID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_app_repositories_are_checked_with_a_discovered_installation() {
    use plumb_testenv::github_api::{GithubApi, Mode};
    let s = AuthStack::start("repos-ghapp", Default::default()).await;
    let admin = s.admin_token().await;
    let mut seen = Seen::default();
    let token = "ghs_ch3ckT0ken27";
    let api = GithubApi::start_installed(
        42,
        &[("other", 1), ("octo-org", 77)],
        token,
        Mode::Documented,
    );
    let repo = GitRepo::named("ghapp");
    repo.commit(&[("README", "hello\n")], "first");
    let http = GitHttpServer::start(
        &repo,
        git_http::Options {
            authorization: Some(git_http::basic_auth("x-access-token", token)),
            owner: Some("octo-org".into()),
            ..Default::default()
        },
    );
    let body = |url: &str| {
        json!({"repo": url, "githubAppID": 42, "githubAppPrivateKey": api.private_key(),
            "githubAppEnterpriseBaseUrl": api.base_url()})
    };
    let (code, message) = add(&s, &mut seen, &admin, &body(&http.url())).await;
    assert_eq!(code, 200, "{message}");
    assert_eq!(api.issued(), 1);
    let stored = secret(&s, &secret_name(Role::Repository, &http.url(), ""))
        .await
        .expect("stored");
    assert_eq!(data(&stored, "githubAppID").as_deref(), Some("42"));
    assert_eq!(data(&stored, "githubAppInstallationID"), None);

    let elsewhere = http.url().replace("/octo-org/", "/nobody/");
    let (code, message) = add(&s, &mut seen, &admin, &body(&elsewhere)).await;
    refused(code, &message);
    assert!(
        message.contains("installation not found for org: nobody"),
        "{message}"
    );
    let key_lines: Vec<&str> = api
        .private_key()
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let mut secrets = key_lines;
    secrets.push(token);
    seen.assert_clean(&secrets);
}
