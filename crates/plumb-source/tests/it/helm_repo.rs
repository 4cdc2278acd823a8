//! Charts from Helm chart repositories: a real repository on 127.0.0.1 (plumb-testenv's
//! `ChartRepoServer`, over HTTP or HTTPS with Basic authentication) holding archives made by the
//! real `helm package` and an index made by `helm repo index`, rendered by the real helm.

use plumb_model::application::{ApplicationSource, HelmSource};
use plumb_source::{Config, Error, Limits, Refresh, RepoCredentials, TlsCerts, Tools};
use plumb_testenv::chart_repo::{ChartRepoServer, Options, chart};
use serde_json::{Value, json};

use crate::support::{request, worker};

/// A chart whose ConfigMap says which version rendered it.
fn api(version: &str) -> std::path::PathBuf {
    chart(
        "api",
        version,
        &[
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n",
            ),
            ("values.yaml", "greeting: hello\n"),
            ("values-prod.yaml", "greeting: prod\n"),
        ],
    )
}

fn chart_source(url: &str, revision: &str) -> ApplicationSource {
    ApplicationSource {
        repo_url: url.into(),
        chart: Some("api".into()),
        target_revision: Some(revision.into()),
        ..Default::default()
    }
}

fn renderer_in(dir: &std::path::Path) -> plumb_source::Renderer {
    let tools = Tools {
        helm: plumb_testenv::tools::helm(),
        kustomize: plumb_testenv::tools::kustomize(),
        worker: worker(),
    };
    plumb_source::Renderer::new(Config::new(dir).tools(tools)).unwrap()
}

fn helm_secret(url: &str, extra: Value) -> RepoCredentials {
    let mut data = json!({"type": "helm", "name": "charts", "url": url});
    if let (Some(d), Some(e)) = (data.as_object_mut(), extra.as_object()) {
        d.extend(e.clone());
    }
    RepoCredentials::from_secret(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "charts", "namespace": "argocd",
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": data
    }))
    .unwrap()
}

fn version_of(r: &plumb_source::Rendered) -> String {
    r.manifests[0].object["data"]["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn target_revisions_resolve_as_argo_and_the_chart_renders() {
    let server = ChartRepoServer::start(Options::default());
    for v in ["1.0.0", "1.2.0", "1.2.5", "2.0.0", "3.0.0-beta.1"] {
        server.publish(&api(v));
    }
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    for (revision, want) in [
        ("1.2.0", "1.2.0"),
        ("1.2.*", "1.2.5"),
        (">=1.0 <2", "1.2.5"),
        ("~1.2", "1.2.5"),
        ("*", "2.0.0"),
        ("", "2.0.0"),
        (">=3.0.0-0", "3.0.0-beta.1"),
    ] {
        let out = r
            .render(&request(vec![chart_source(&server.url(), revision)]))
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert_eq!(version_of(&out), want, "{revision:?}");
        assert_eq!(
            out.sources[0].commit, want,
            "recorded revision for {revision:?}"
        );
        assert_eq!(
            out.sources[0].revision,
            if revision.is_empty() {
                "HEAD"
            } else {
                revision
            }
        );
        assert_eq!(
            out.sources[0].source_type,
            Some(plumb_source::SourceType::Helm)
        );
        assert_eq!(out.manifests[0].file, "templates/cm.yaml");
        assert_eq!(out.manifests[0].object["data"]["greeting"], "hello");
    }
    // Value files are relative to the chart.
    let mut s = chart_source(&server.url(), "1.2.5");
    s.helm = Some(HelmSource {
        value_files: Some(vec!["values-prod.yaml".into()]),
        ..Default::default()
    });
    let out = r.render(&request(vec![s])).unwrap();
    assert_eq!(out.manifests[0].object["data"]["greeting"], "prod");

    let err = r
        .render(&request(vec![chart_source(&server.url(), "9.*")]))
        .unwrap_err();
    assert!(matches!(err, Error::ChartNotFound { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("no version in index.yaml satisfies"),
        "{err}"
    );
    let mut other = chart_source(&server.url(), "1.0.0");
    other.chart = Some("nope".into());
    let err = r.render(&request(vec![other])).unwrap_err();
    assert!(err.to_string().contains("chart nope"), "{err}");
    assert!(err.to_string().contains("has no such chart"), "{err}");
}

#[test]
fn versions_are_cached_for_good_and_the_index_is_refreshed() {
    let server = ChartRepoServer::start(Options::default());
    server.publish(&api("1.0.0"));
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    let out = r
        .render(&request(vec![chart_source(&server.url(), "1.*")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 1);
    assert_eq!(r.helm_repos().download_count(), 1);

    // A new version is published: the kept index still answers until a hard refresh.
    server.publish(&api("1.1.0"));
    let out = r
        .render(&request(vec![chart_source(&server.url(), "1.*")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    assert!(out.sources[0].cache_hit);
    assert_eq!(r.helm_repos().index_fetch_count(), 1);
    let mut hard = request(vec![chart_source(&server.url(), "1.*")]);
    hard.refresh = Refresh::Hard;
    let out = r.render(&hard).unwrap();
    assert_eq!(version_of(&out), "1.1.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 2);
    assert_eq!(r.helm_repos().download_count(), 2);

    // An exact version on disk needs no repository at all, even from a new process.
    let url = server.url();
    drop(server);
    let again = renderer_in(cache.path());
    let out = again
        .render(&request(vec![chart_source(&url, "1.0.0")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    assert_eq!(again.helm_repos().index_fetch_count(), 0);
    assert_eq!(again.helm_repos().download_count(), 0);
    // A constraint needs the index: with the repository gone that is a clear error.
    let err = again
        .render(&request(vec![chart_source(&url, "1.*")]))
        .unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
}

/// The index's expiration is a setting (`plumb.repository.revisionCacheExpiration`, else
/// `timeout.reconciliation`), applied to a running renderer as the controller applies it.
#[test]
fn the_index_expiration_follows_the_settings() {
    let settings = |pairs: &[(&str, &str)]| {
        plumb_model::Settings::from_data(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    };
    let server = ChartRepoServer::start(Options::default());
    server.publish(&api("1.0.0"));
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    let render = || {
        r.render(&request(vec![chart_source(&server.url(), "1.*")]))
            .unwrap()
    };
    assert_eq!(version_of(&render()), "1.0.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 1);

    // 0s: the index is asked for on every render, so a new version is seen without a refresh.
    r.set_limits(
        Limits::default()
            .with_settings(&settings(&[(
                "plumb.repository.revisionCacheExpiration",
                "0s",
            )]))
            .unwrap(),
    );
    server.publish(&api("1.1.0"));
    assert_eq!(version_of(&render()), "1.1.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 2);
    assert_eq!(version_of(&render()), "1.1.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 3);

    // Without Plumb's key, Argo's timeout.reconciliation decides (as the repo-server's
    // --revision-cache-expiration defaults to it): one hour keeps the index.
    r.set_limits(
        Limits::default()
            .with_settings(&settings(&[("timeout.reconciliation", "1h")]))
            .unwrap(),
    );
    server.publish(&api("1.2.0"));
    assert_eq!(version_of(&render()), "1.1.0");
    assert_eq!(r.helm_repos().index_fetch_count(), 3);
}

#[test]
fn credentials_good_bad_and_missing_over_tls() {
    let server = ChartRepoServer::start(Options {
        tls: true,
        auth: Some(("bot", "chart-pass-42")),
        ..Default::default()
    });
    server.publish(&api("1.0.0"));
    let certs = TlsCerts::default().with("127.0.0.1", server.ca_pem());
    let render = |creds: Vec<RepoCredentials>, certs: TlsCerts| {
        let cache = tempfile::tempdir().unwrap();
        let r = renderer_in(cache.path());
        r.set_repositories(creds, certs);
        r.render(&request(vec![chart_source(&server.url(), "1.0.0")]))
    };
    let good = helm_secret(
        &server.url(),
        json!({"username": "bot", "password": "chart-pass-42"}),
    );
    let out = render(vec![good.clone()], certs.clone()).unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    assert!(
        server.requests().iter().all(|q| q.authorization.is_some()),
        "Basic credentials are sent up front: {:?}",
        server.requests()
    );

    let bad = helm_secret(
        &server.url(),
        json!({"username": "bot", "password": "wrong-pass-17"}),
    );
    let err = render(vec![bad], certs.clone()).unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    assert!(!err.to_string().contains("wrong-pass-17"), "{err}");

    let err = render(vec![], certs.clone()).unwrap_err();
    assert!(err.to_string().contains("HTTP 401"), "{err}");

    // Without the CA the server's certificate is not trusted; `insecure` skips the check.
    let err = render(vec![good.clone()], TlsCerts::default()).unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(!err.to_string().contains("chart-pass-42"), "{err}");
    let insecure = helm_secret(
        &server.url(),
        json!({"username": "bot", "password": "chart-pass-42", "insecure": "true"}),
    );
    assert!(render(vec![insecure], TlsCerts::default()).is_ok());
}

#[test]
fn a_tls_client_certificate_from_the_secret_is_presented() {
    let server = ChartRepoServer::start(Options {
        tls: true,
        client_certs: true,
        ..Default::default()
    });
    server.publish(&api("1.0.0"));
    let certs = TlsCerts::default().with("127.0.0.1", server.ca_pem());
    let (cert, key) = server.client_identity();
    let with_cert = helm_secret(
        &server.url(),
        json!({"tlsClientCertData": cert, "tlsClientCertKey": key}),
    );
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    r.set_repositories(vec![with_cert], certs.clone());
    let out = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");

    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    r.set_repositories(vec![], certs);
    let err = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
}

#[test]
fn an_archive_whose_digest_differs_from_the_index_is_refused() {
    let server = ChartRepoServer::start(Options::default());
    server.publish(&api("1.0.0"));
    // Swap the archive for another chart's after the index recorded the digest.
    let other = ChartRepoServer::start(Options::default());
    other.publish(&chart(
        "api",
        "1.0.0",
        &[(
            "templates/evil.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: evil}\n",
        )],
    ));
    let swapped = std::fs::read(other.charts_dir().join("api-1.0.0.tgz")).unwrap();
    server.put("api-1.0.0.tgz", &swapped);
    let (r, _d) = crate::support::renderer_with_tools_and(Limits::default());
    let err = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap_err();
    assert!(matches!(err, Error::ChartDigestMismatch { .. }), "{err}");
    assert!(err.to_string().contains("chart api 1.0.0"), "{err}");
    // Nothing was kept: the next attempt downloads (and refuses) again.
    let again = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap_err();
    assert!(
        matches!(again, Error::ChartDigestMismatch { .. }),
        "{again}"
    );
    assert_eq!(r.helm_repos().download_count(), 2);
}

fn named_cm(chart_name: &str, version: &str) -> std::path::PathBuf {
    chart(
        chart_name,
        version,
        &[(
            "templates/cm.yaml",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {chart_name}\ndata:\n  version: {{{{ .Chart.Version | quote }}}}\n"
            ),
        )],
    )
}

#[test]
fn undeclared_dependencies_are_fetched_from_the_repositories_the_project_allows() {
    let server = ChartRepoServer::start(Options::default());
    server.publish(&named_cm("common", "1.0.0"));
    server.publish(&named_cm("common", "1.1.0"));
    server.publish(&named_cm("redis", "2.0.0"));
    let repo = plumb_testenv::git::GitRepo::new();
    let chart_yaml = format!(
        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: common\n  version: \"1.*\"\n  repository: {url}\n- name: redis\n  version: 2.0.0\n  repository: \"@charts\"\n- name: lib\n  version: 0.1.0\n  repository: file://../lib\n- name: vend\n  version: 0.1.0\n",
        url = server.url()
    );
    let cm = |n: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n");
    repo.commit(
        &[
            ("chart/Chart.yaml", chart_yaml.as_str()),
            ("chart/templates/cm.yaml", &cm("app")),
            (
                "chart/charts/vend/Chart.yaml",
                "apiVersion: v2\nname: vend\nversion: 0.1.0\n",
            ),
            ("chart/charts/vend/templates/cm.yaml", &cm("vend")),
            (
                "lib/Chart.yaml",
                "apiVersion: v2\nname: lib\nversion: 0.1.0\n",
            ),
            ("lib/templates/cm.yaml", &cm("lib")),
        ],
        "chart with dependencies",
    );
    let named = helm_secret(&server.url(), json!({}));
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    r.set_repositories(vec![named.clone()], TlsCerts::default());
    let source = crate::support::source(&repo.url(), "chart", "HEAD");
    let mut req = request(vec![source.clone()]);
    req.source_repos = Some(vec![server.url()]);
    let out = r.render(&req).unwrap();
    let mut names: Vec<(String, String)> = out
        .manifests
        .iter()
        .map(|m| {
            (
                m.object["metadata"]["name"].as_str().unwrap().to_owned(),
                m.object["data"]["version"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("app".to_owned(), String::new()),
            ("common".to_owned(), "1.1.0".to_owned()),
            ("lib".to_owned(), String::new()),
            ("redis".to_owned(), "2.0.0".to_owned()),
            ("vend".to_owned(), String::new()),
        ]
    );
    // Two archives downloaded (common 1.1.0, redis 2.0.0); lib and vend came from the repository.
    assert_eq!(r.helm_repos().download_count(), 2);

    // A repository the project does not allow is refused, naming the dependency.
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    r.set_repositories(vec![named], TlsCerts::default());
    let mut req = request(vec![source.clone()]);
    req.source_repos = Some(vec!["https://charts.example.com/*".into()]);
    let err = r.render(&req).unwrap_err();
    assert!(matches!(err, Error::ChartDependency { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("chart/Chart.yaml: dependency common:"),
        "{text}"
    );
    assert!(
        text.contains("not permitted by the project's sourceRepos"),
        "{text}"
    );
    assert_eq!(r.helm_repos().download_count(), 0);

    // `@charts` names no repository Secret when there is none.
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    let err = r.render(&request(vec![source])).unwrap_err().to_string();
    assert!(err.contains("dependency redis"), "{err}");
    assert!(
        err.contains("@charts is not the name of any repository Secret"),
        "{err}"
    );
}

/// A Helm repository Secret's `proxy` carries the index and archive requests (and `noProxy`
/// exempts hosts), as Argo passes it to Helm.
#[test]
fn the_repository_proxy_carries_chart_downloads() {
    let server = ChartRepoServer::start(Options::default());
    server.publish(&api("1.0.0"));
    let (proxy, seen) = crate::credentials::refusing_proxy("index.yaml");
    let cache = tempfile::tempdir().unwrap();
    let r = renderer_in(cache.path());
    r.set_repositories(
        vec![helm_secret(&server.url(), json!({"proxy": proxy}))],
        TlsCerts::default(),
    );
    let err = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("502"), "{err}");
    assert!(
        seen.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the proxy saw no request"
    );
    assert!(
        server.requests().is_empty(),
        "a request went around the proxy"
    );
    r.set_repositories(
        vec![helm_secret(
            &server.url(),
            json!({"proxy": proxy, "noProxy": "127.0.0.1"}),
        )],
        TlsCerts::default(),
    );
    let out = r
        .render(&request(vec![chart_source(&server.url(), "1.0.0")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");
}
