//! The repository, certificate and GnuPG key pages in a real browser
//! (`ui/e2e/settings-repos.mjs`), against a real Git server with Basic authentication: the
//! connection check's refusal shown next to the password, then the repository connected and
//! listed as Successful; a credential template; SSH known hosts and a TLS certificate; a GnuPG
//! key. What the pages wrote is checked here, in the Secrets and ConfigMaps.

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;

use super::support::{create_default_project, env, server_config};
use super::{prerequisites, secret_value};

/// A public key made in a GnuPG home of its own: (ASCII-armored key, its 16-digit key ID).
fn gpg_public_key(home: &std::path::Path) -> (String, String) {
    let gpg = |args: &[&str]| {
        let out = Command::new("gpg")
            .arg("--homedir")
            .arg(home)
            .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
            .args(args)
            .output()
            .expect("gpg runs (apt-get install gnupg)");
        assert!(
            out.status.success(),
            "gpg {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    gpg(&[
        "--quick-gen-key",
        "UI Settings <ui-settings@example.com>",
        "ed25519",
        "sign",
        "1y",
    ]);
    let listed = gpg(&["--with-colons", "--list-keys"]);
    let key_id = listed
        .lines()
        .find(|l| l.starts_with("pub:"))
        .and_then(|l| l.split(':').nth(4))
        .expect("the key's ID")
        .to_string();
    (gpg(&["--armor", "--export"]), key_id)
}

/// A self-signed certificate of git.example.com, as PEM.
fn tls_certificate() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    rcgen::CertificateParams::new(vec!["git.example.com".into()])
        .expect("params")
        .self_signed(&key)
        .expect("certificate")
        .pem()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_settings_repositories_certificates_gpg() {
    let (ui, chromium) = match prerequisites() {
        Ok(p) => p,
        Err(why) => panic!("the web UI browser test cannot run: {why}"),
    };
    let env = env();
    let ns = env.namespace("ui-settings-repos");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let mut config = server_config(ns.name());
    config.disable_auth = false;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("server starts");
    let admin_pw = secret_value(
        &client,
        ns.name(),
        "argocd-initial-admin-secret",
        "password",
    )
    .await;
    let base = format!("https://localhost:{}", server.addr.port());

    let repo = GitRepo::new();
    repo.commit(&[("README.md", "settings\n")], "first");
    let (user, password) = ("git-user", "git-password-7");
    let git = GitHttpServer::serve(&repo, Some((user, password)));
    let home = tempfile::tempdir().expect("tempdir");
    let (gpg_key, gpg_key_id) = gpg_public_key(home.path());

    let mut cmd = tokio::process::Command::new("node");
    cmd.arg("e2e/settings-repos.mjs")
        .current_dir(&ui)
        .env("PLUMB_UI_URL", &base)
        .env("PLUMB_ADMIN_PASSWORD", &admin_pw)
        .env("PLUMB_GIT_URL", git.url())
        .env("PLUMB_GIT_USER", user)
        .env("PLUMB_GIT_PASSWORD", password)
        .env("PLUMB_GPG_KEY", &gpg_key)
        .env("PLUMB_GPG_KEY_ID", &gpg_key_id)
        .env("PLUMB_TLS_CERT", tls_certificate())
        .env("PLUMB_CHROMIUM", &chromium)
        .env("PLUMB_FAILURE_DIR", std::env::temp_dir())
        .kill_on_drop(true);
    if let Some(dir) = std::env::var_os("PLUMB_UI_SCREENSHOTS") {
        cmd.env("PLUMB_SCREENSHOTS", dir);
    }
    // A generous bound for the whole browser session; no step is timed.
    let out = tokio::time::timeout(Duration::from_secs(600), cmd.output())
        .await
        .expect("the browser test ends within 10 minutes")
        .expect("node runs (Node 20 is required)");
    let log = String::from_utf8_lossy(&out.stdout).to_string();
    println!("{log}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && log.lines().last() == Some("PASS"),
        "the settings browser test failed; its output:\n{log}"
    );

    // What the pages wrote: the repository deleted, the template kept (Argo's labels).
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns.name());
    let of_type = |t: &'static str| {
        let secrets = secrets.clone();
        async move {
            secrets
                .list(&ListParams::default().labels(&format!("argocd.argoproj.io/secret-type={t}")))
                .await
                .expect("list Secrets")
                .items
        }
    };
    assert!(
        of_type("repository").await.is_empty(),
        "the repository was deleted"
    );
    let creds = of_type("repo-creds").await;
    assert_eq!(creds.len(), 1, "one credential template");
    let data = creds[0].data.clone().unwrap_or_default();
    assert_eq!(data["username"].0, user.as_bytes());
    assert_eq!(data["password"].0, password.as_bytes());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    let cm_data = |name: &'static str| {
        let cms = cms.clone();
        async move { cms.get(name).await.expect(name).data.unwrap_or_default() }
    };
    let known = cm_data("argocd-ssh-known-hosts-cm").await;
    assert!(
        !known
            .get("ssh_known_hosts")
            .is_some_and(|k| k.contains("github.com")),
        "the known host was deleted: {known:?}"
    );
    assert!(
        cm_data("argocd-tls-certs-cm")
            .await
            .contains_key("git.example.com")
    );
    assert!(
        cm_data("argocd-gpg-keys-cm")
            .await
            .contains_key(&gpg_key_id)
    );
    server.shutdown().await;
}
