//! Repository Secrets written by hand (issue #27, "Bad input"), met as an operator meets them:
//! a real `plumb controller` renders Applications whose repository Secret holds an SSH private
//! key that is no key, a TLS client key that is no key, a GitHub App key that is not PEM, or a
//! `project` value that looks like a pattern. Each Application reports a ComparisonError naming
//! the field, nothing of the value is shown anywhere, and a pattern-like `project` lends the
//! credentials to no project (the exact name does).
//!
//! The same values through `plumb render --repo-secret` are `git_credentials.rs`; through the
//! API and `plumb repo add`, `repo_cli_files.rs`; the readers' unit tests are beside them
//! (`plumb-source/src/credentials.rs::hostile_project_keys`, `git/ssh.rs`).

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::{GitHttpServer, Options};
use serde_json::json;

use crate::running::{Running, condition, kubectl_apply};

const SECRET: &str = "hostile-repository-secret-value-27";

fn repository_secret(ns: &str, name: &str, data: serde_json::Value) {
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": data}));
}

fn comparison_error(app: &serde_json::Value) -> String {
    condition(app, "ComparisonError")
        .map(|c| c["message"].to_string())
        .unwrap_or_default()
}

#[test]
fn malformed_keys_in_repository_secrets_are_named_on_the_application() {
    let ctl = Running::start("hostile-repo-secrets", &[("RUST_LOG", "debug")]);
    let ns = ctl.ns.name().to_string();
    let repo = GitRepo::named("hostile-repo-secrets");
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "one",
    );
    let tls = GitHttpServer::start(
        &repo,
        Options {
            tls: true,
            client_certs: true,
            ..Default::default()
        },
    );
    let app_http = GitHttpServer::serve(&repo, Some(("x-access-token", "never")));
    let ssh_url = "ssh://git@127.0.0.1:9/hostile.git";
    let cases = [
        (
            "bad-ssh",
            ssh_url.to_string(),
            json!({"sshPrivateKey": SECRET, "insecure": "true"}),
            "sshPrivateKey of the repository Secret is not a PEM private key",
        ),
        (
            "bad-tls",
            tls.url(),
            json!({"tlsClientCertData": tls.client_identity().0, "tlsClientCertKey": SECRET,
                   "insecure": "true"}),
            "tlsClientCertData / tlsClientCertKey",
        ),
        (
            "bad-app",
            app_http.url(),
            json!({"githubAppID": "7", "githubAppInstallationID": "8", "githubAppPrivateKey": SECRET}),
            "githubAppPrivateKey: not a PEM private key",
        ),
    ];
    for (name, url, mut data, _) in cases.clone() {
        data["url"] = json!(url);
        repository_secret(&ns, name, data);
        ctl.create_app(
            name,
            json!({"project": "default", "source": {"repoURL": url, "path": "app"},
                   "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}),
        );
    }
    for (name, _, _, expected) in &cases {
        let app = ctl.wait_app(name, expected, |a| comparison_error(a).contains(expected));
        let message = comparison_error(&app);
        assert!(message.len() < 4096, "{name}: bounded: {message}");
    }
    let outputs = [
        ("Events", ctl.events()),
        ("the controller's log", ctl.log()),
    ];
    for (what, text) in outputs {
        assert!(!text.contains(SECRET), "{what} shows a Secret's value");
    }
    for (name, ..) in &cases {
        let app = ctl.app(name).unwrap().to_string();
        assert!(!app.contains(SECRET), "{name} shows a Secret's value");
    }
}

/// A repository Secret's `project` is a project's name, compared byte for byte: `*`, `def*`,
/// `../default`, `Default` or `default ` lend its password to no project, so the `default`
/// project's Application cannot fetch; the exact name `default` lends it.
#[test]
fn a_repository_secret_project_that_looks_like_a_pattern_lends_nothing() {
    let ctl = Running::start("hostile-repo-project", &[]);
    let ns = ctl.ns.name().to_string();
    let repo = GitRepo::named("hostile-repo-project");
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "one",
    );
    let server = GitHttpServer::serve(&repo, Some(("bot", SECRET)));
    let url = server.url();
    for (i, project) in ["*", "def*", "../default", "Default", "default "]
        .iter()
        .enumerate()
    {
        repository_secret(
            &ns,
            "scoped",
            json!({"url": url, "username": "bot", "password": SECRET, "project": project}),
        );
        let name = format!("scoped-{i}");
        ctl.create_app(
            &name,
            json!({"project": "default", "source": {"repoURL": url, "path": "app"},
                   "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}),
        );
        let app = ctl.wait_app(&name, "the fetch refused", |a| {
            !comparison_error(a).is_empty()
        });
        assert!(!comparison_error(&app).contains(SECRET));
    }
    assert!(
        server.rejected() > 0,
        "no request went without the credentials"
    );
    repository_secret(
        &ns,
        "scoped",
        json!({"url": url, "username": "bot", "password": SECRET, "project": "default"}),
    );
    ctl.create_app(
        "scoped-default",
        json!({"project": "default", "source": {"repoURL": url, "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}),
    );
    ctl.wait_app(
        "scoped-default",
        "rendered with the lent credentials",
        |a| a["status"]["sync"]["status"] == "OutOfSync" && comparison_error(a).is_empty(),
    );
}
