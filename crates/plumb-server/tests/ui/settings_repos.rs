//! The repository, certificate and GnuPG key pages in a real browser
//! (`ui/e2e/settings-repos.mjs`), against a real Git server with Basic authentication: the
//! connection check's refusal shown next to the password, then the repository connected and
//! listed as Successful; a credential template; SSH known hosts and a TLS certificate; a GnuPG
//! key. What the pages wrote is checked here, in the Secrets and ConfigMaps.

use std::process::Command;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;

use super::browser::SettingsServer;

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
    let stack = SettingsServer::start("ui-settings-repos").await;
    let (ns, client) = (&stack.ns, &stack.client);
    let repo = GitRepo::new();
    repo.commit(&[("README.md", "settings\n")], "first");
    let (user, password) = ("git-user", "git-password-7");
    let git = GitHttpServer::serve(&repo, Some((user, password)));
    let home = tempfile::tempdir().expect("tempdir");
    let (gpg_key, gpg_key_id) = gpg_public_key(home.path());
    // Written by hand, as the API would refuse it: the page must still show it as text only.
    let hostile_url = "javascript:alert(document.domain)//repo";
    let hostile: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "repo-hostile-url",
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": hostile_url, "type": "git"},
    }))
    .expect("Secret");
    Api::<Secret>::namespaced(client.clone(), ns.name())
        .create(&Default::default(), &hostile)
        .await
        .expect("create the hostile repository Secret");
    stack
        .run(
            "settings-repos.mjs",
            &[
                ("PLUMB_GIT_URL", &git.url()),
                ("PLUMB_GIT_USER", user),
                ("PLUMB_GIT_PASSWORD", password),
                ("PLUMB_GPG_KEY", &gpg_key),
                ("PLUMB_GPG_KEY_ID", &gpg_key_id),
                ("PLUMB_TLS_CERT", &tls_certificate()),
                ("PLUMB_HOSTILE_URL", hostile_url),
            ],
        )
        .await;

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
    let repositories = of_type("repository").await;
    assert!(
        repositories
            .iter()
            .all(|s| s.metadata.name.as_deref() == Some("repo-hostile-url")),
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
    stack.shutdown().await;
}
