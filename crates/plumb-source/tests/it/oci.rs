//! Sources in OCI registries: a real registry on 127.0.0.1 (plumb-testenv's `OciRegistry`, the
//! CNCF distribution registry over TLS, with htpasswd Basic authentication when asked), charts
//! pushed by the real `helm push`, rendered by the real helm.

use std::io::Write;

use plumb_model::application::ApplicationSource;
use plumb_source::{Config, Error, Refresh, RepoCredentials, TlsCerts, Tools};
use plumb_testenv::chart_repo::chart;
use plumb_testenv::oci_registry::{OciRegistry, Options};
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
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  version: {{ .Chart.Version | quote }}\n",
            ),
            ("values.yaml", "{}\n"),
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

fn artifact_source(url: &str, path: &str, revision: &str) -> ApplicationSource {
    ApplicationSource {
        repo_url: url.into(),
        path: Some(path.into()),
        target_revision: Some(revision.into()),
        ..Default::default()
    }
}

fn renderer_in(dir: &std::path::Path, limits: plumb_source::Limits) -> plumb_source::Renderer {
    let tools = Tools {
        helm: plumb_testenv::tools::helm(),
        kustomize: plumb_testenv::tools::kustomize(),
        worker: worker(),
    };
    plumb_source::Renderer::new(Config::new(dir).tools(tools).limits(limits)).unwrap()
}

/// A renderer that trusts the registry's CA, with these repository Secrets.
fn renderer_for(
    reg: &OciRegistry,
    creds: Vec<RepoCredentials>,
) -> (plumb_source::Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = renderer_in(dir.path(), plumb_source::Limits::default());
    r.set_repositories(creds, TlsCerts::default().with("127.0.0.1", reg.ca_pem()));
    (r, dir)
}

fn oci_secret(url: &str, extra: Value) -> RepoCredentials {
    let mut data = json!({"type": "helm", "name": "registry", "url": url, "enableOCI": "true"});
    if let (Some(d), Some(e)) = (data.as_object_mut(), extra.as_object()) {
        d.extend(e.clone());
    }
    RepoCredentials::from_secret(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "registry", "namespace": "argocd",
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

/// A gzip-compressed tar of `files`, kept as written (an OCI artifact of plain manifests).
fn tgz(files: &[(&str, &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(text.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, path, text.as_bytes()).unwrap();
    }
    let raw = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

#[test]
fn oci_chart_tags_constraints_and_digests_resolve_and_render() {
    let reg = OciRegistry::start(Options::default());
    let mut digests = std::collections::HashMap::new();
    for v in [
        "1.0.0",
        "1.2.0",
        "1.2.5",
        "1.3.0+build.1",
        "2.0.0",
        "3.0.0-rc.1",
    ] {
        digests.insert(v, reg.push_chart(&api(v), "charts"));
    }
    let (r, _d) = renderer_for(&reg, vec![]);
    let url = reg.url("charts");
    for (revision, want) in [
        ("1.2.0", "1.2.0"),
        ("1.2.*", "1.2.5"),
        (">=1.0 <2", "1.3.0+build.1"),
        ("~1.2", "1.2.5"),
        ("*", "2.0.0"),
        ("", "2.0.0"),
        (">=3.0.0-0", "3.0.0-rc.1"),
        // Helm pushed `1.3.0+build.1` as the tag `1.3.0_build.1`.
        ("1.3.0+build.1", "1.3.0+build.1"),
    ] {
        let out = r
            .render(&request(vec![chart_source(&url, revision)]))
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert_eq!(version_of(&out), want, "{revision:?}");
        assert_eq!(
            out.sources[0].commit, want,
            "recorded revision for {revision:?}"
        );
        assert_eq!(
            out.sources[0].source_type,
            Some(plumb_source::SourceType::Helm)
        );
        assert_eq!(out.manifests[0].file, "templates/cm.yaml");
    }
    // A digest names that manifest; it is what the status records.
    let d = &digests["1.2.0"];
    let out = r.render(&request(vec![chart_source(&url, d)])).unwrap();
    assert_eq!(version_of(&out), "1.2.0");
    assert_eq!(out.sources[0].commit, *d);

    // Argo CD's other spelling: no scheme, and a repository Secret with enableOCI.
    let plain = format!("{}/charts", reg.host());
    let (r2, _d2) = renderer_for(&reg, vec![oci_secret(&plain, json!({}))]);
    let out = r2
        .render(&request(vec![chart_source(&plain, "1.2.*")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.2.5");

    let err = r
        .render(&request(vec![chart_source(&url, "9.*")]))
        .unwrap_err();
    assert!(matches!(err, Error::ChartNotFound { .. }), "{err}");
    assert!(err.to_string().contains("no tag"), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    let err = r
        .render(&request(vec![chart_source(&url, "9.9.9")]))
        .unwrap_err();
    assert!(matches!(err, Error::ChartNotFound { .. }), "{err}");
    let mut other = chart_source(&url, "1.0.0");
    other.chart = Some("nope".into());
    let err = r.render(&request(vec![other])).unwrap_err();
    assert!(err.to_string().contains("charts/nope"), "{err}");
}

#[test]
fn oci_artifacts_of_plain_manifests_and_of_charts_render_with_their_digest() {
    let reg = OciRegistry::start(Options::default());
    let layer = tgz(&[
        (
            "apps/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\ndata:\n  a: b\n",
        ),
        (
            "other/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
        ),
    ]);
    let digest = reg.push_raw(
        "manifests/app",
        "v1",
        "application/vnd.oci.image.config.v1+json",
        &[("application/vnd.oci.image.layer.v1.tar+gzip", layer, None)],
    );
    let (r, _d) = renderer_for(&reg, vec![]);
    let url = reg.url("manifests/app");
    let out = r
        .render(&request(vec![artifact_source(&url, "apps", "v1")]))
        .unwrap();
    assert_eq!(out.manifests.len(), 1);
    assert_eq!(out.manifests[0].object["metadata"]["name"], "from-oci");
    assert_eq!(out.manifests[0].file, "apps/cm.yaml");
    assert_eq!(out.sources[0].commit, digest, "Argo CD records the digest");
    assert_eq!(
        out.sources[0].source_type,
        Some(plumb_source::SourceType::Directory)
    );
    let out = r
        .render(&request(vec![artifact_source(&url, "apps", &digest)]))
        .unwrap();
    assert_eq!(out.sources[0].commit, digest);
    // `path` stays inside the artifact.
    let err = r
        .render(&request(vec![artifact_source(&url, "../..", "v1")]))
        .unwrap_err();
    assert!(matches!(err, Error::PathOutsideRepository { .. }), "{err}");

    // A chart pushed by helm, read as an artifact (`path: .`): rendered by helm.
    let chart_digest = reg.push_chart(&api("1.4.0"), "charts");
    let out = r
        .render(&request(vec![artifact_source(
            &reg.url("charts/api"),
            ".",
            "1.4.0",
        )]))
        .unwrap();
    assert_eq!(version_of(&out), "1.4.0");
    assert_eq!(out.sources[0].commit, chart_digest);
    assert_eq!(
        out.sources[0].source_type,
        Some(plumb_source::SourceType::Helm)
    );
}

#[test]
fn oci_content_is_cached_by_digest_and_tags_are_asked_again_on_hard_refresh() {
    let reg = OciRegistry::start(Options::default());
    reg.push_chart(&api("1.0.0"), "charts");
    let cache = tempfile::tempdir().unwrap();
    let certs = TlsCerts::default().with("127.0.0.1", reg.ca_pem());
    let r = renderer_in(cache.path(), plumb_source::Limits::default());
    r.set_repositories(vec![], certs.clone());
    let url = reg.url("charts");
    let out = r.render(&request(vec![chart_source(&url, "1.*")])).unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    let oci = r.oci_registries();
    assert_eq!((oci.tag_list_count(), oci.download_count()), (1, 1));

    // A new version: the kept tag list answers until a hard refresh.
    let d110 = reg.push_chart(&api("1.1.0"), "charts");
    let out = r.render(&request(vec![chart_source(&url, "1.*")])).unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    assert_eq!(oci.tag_list_count(), 1);
    let mut hard = request(vec![chart_source(&url, "1.*")]);
    hard.refresh = Refresh::Hard;
    let out = r.render(&hard).unwrap();
    assert_eq!(version_of(&out), "1.1.0");
    assert_eq!((oci.tag_list_count(), oci.download_count()), (2, 2));
    // The same digest again (by tag) is not downloaded again.
    let fetches = oci.manifest_fetch_count();
    let out = r
        .render(&request(vec![chart_source(&url, "1.1.0")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.1.0");
    assert_eq!(oci.download_count(), 2);
    assert!(oci.manifest_fetch_count() <= fetches + 1);

    // A digest on disk needs no registry at all, even from a new process.
    drop(reg);
    let again = renderer_in(cache.path(), plumb_source::Limits::default());
    again.set_repositories(vec![], certs);
    let out = again
        .render(&request(vec![chart_source(&url, &d110)]))
        .unwrap();
    assert_eq!(version_of(&out), "1.1.0");
    assert_eq!(again.oci_registries().manifest_fetch_count(), 0);
    assert_eq!(again.oci_registries().download_count(), 0);
    // A tag must be asked for: with the registry gone that is a clear error naming it.
    let err = again
        .render(&request(vec![chart_source(&url, "1.1.0")]))
        .unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains(&format!("{url}/api")), "{err}");
}

#[test]
fn oci_credentials_good_bad_and_missing() {
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", "oci-pass-42")),
        ..Default::default()
    });
    reg.push_chart(&api("1.0.0"), "charts");
    let url = reg.url("charts");
    let render = |creds: Vec<RepoCredentials>, certs: TlsCerts| {
        let cache = tempfile::tempdir().unwrap();
        let r = renderer_in(cache.path(), plumb_source::Limits::default());
        r.set_repositories(creds, certs);
        r.render(&request(vec![chart_source(&url, "1.0.0")]))
    };
    let certs = TlsCerts::default().with("127.0.0.1", reg.ca_pem());
    let good = oci_secret(&url, json!({"username": "bot", "password": "oci-pass-42"}));
    let out = render(vec![good.clone()], certs.clone()).unwrap();
    assert_eq!(version_of(&out), "1.0.0");

    let bad = oci_secret(
        &url,
        json!({"username": "bot", "password": "wrong-pass-17"}),
    );
    let err = render(vec![bad], certs.clone()).unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    assert!(!err.to_string().contains("wrong-pass-17"), "{err}");

    let err = render(vec![], certs.clone()).unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("HTTP 401"), "{err}");

    // Without the CA the registry is not trusted; `insecure` skips the check.
    let err = render(vec![good.clone()], TlsCerts::default()).unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(!err.to_string().contains("oci-pass-42"), "{err}");
    let insecure = oci_secret(
        &url,
        json!({"username": "bot", "password": "oci-pass-42", "insecure": "true"}),
    );
    assert!(render(vec![insecure], TlsCerts::default()).is_ok());

    // A repo-creds template for the whole registry works too.
    let mut template = oci_secret(
        &format!("oci://{}", reg.host()),
        json!({"username": "bot", "password": "oci-pass-42"}),
    );
    template.is_template = true;
    assert!(render(vec![template], certs).is_ok());
}

/// A registry with `auth: token` (Docker Hub, GHCR and Harbor work this way): the registry
/// answers `401` with a `Bearer` challenge, Plumb takes the repository Secret's credentials to
/// the real token server named in it (docker/distribution's token server over HTTPS), and the
/// registry accepts the token it signed. Bad credentials, none, and a repository the token
/// server does not grant (it allows a user only `<user>/...`) are refused with the repository
/// named and no password shown.
#[test]
fn oci_bearer_tokens_from_a_real_token_server() {
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", "token-pass-7")),
        token_auth: true,
        ..Default::default()
    });
    reg.push_chart(&api("1.0.0"), "bot/charts");
    reg.push_chart(&api("2.0.0"), "bot/charts");
    let url = reg.url("bot/charts");
    let render = |creds: Vec<RepoCredentials>, url: &str, rev: &str| {
        let cache = tempfile::tempdir().unwrap();
        let r = renderer_in(cache.path(), plumb_source::Limits::default());
        r.set_repositories(creds, TlsCerts::default().with("127.0.0.1", reg.ca_pem()));
        r.render(&request(vec![chart_source(url, rev)]))
    };
    let good = oci_secret(&url, json!({"username": "bot", "password": "token-pass-7"}));
    assert_eq!(
        version_of(&render(vec![good.clone()], &url, "1.0.0").unwrap()),
        "1.0.0"
    );
    // A constraint lists the tags, which needs a token for the tag list too.
    assert_eq!(
        version_of(&render(vec![good.clone()], &url, "^2").unwrap()),
        "2.0.0"
    );

    let bad = oci_secret(
        &url,
        json!({"username": "bot", "password": "wrong-token-pass"}),
    );
    let err = render(vec![bad], &url, "1.0.0").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    assert!(!err.to_string().contains("wrong-token-pass"), "{err}");
    let err = render(vec![], &url, "1.0.0").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("HTTP 401"), "{err}");

    // The token server grants `bot` nothing outside `bot/`: a token without that access.
    let other = reg.url("team/charts");
    let creds = oci_secret(
        &other,
        json!({"username": "bot", "password": "token-pass-7"}),
    );
    let err = render(vec![creds], &other, "1.0.0").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains(&other), "{err}");
    assert!(!err.to_string().contains("token-pass-7"), "{err}");
}

#[test]
fn oci_tls_client_certificate_from_the_secret_is_presented() {
    let reg = OciRegistry::start(Options {
        client_certs: true,
        ..Default::default()
    });
    reg.push_chart(&api("1.0.0"), "charts");
    let url = reg.url("charts");
    let (cert, key) = reg.client_identity();
    let with_cert = oci_secret(
        &url,
        json!({"tlsClientCertData": cert, "tlsClientCertKey": key}),
    );
    let (r, _d) = renderer_for(&reg, vec![with_cert]);
    let out = r
        .render(&request(vec![chart_source(&url, "1.0.0")]))
        .unwrap();
    assert_eq!(version_of(&out), "1.0.0");
    let (r, _d) = renderer_for(&reg, vec![]);
    let err = r
        .render(&request(vec![chart_source(&url, "1.0.0")]))
        .unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
}

#[test]
fn a_layer_whose_bytes_do_not_match_its_digest_is_refused_and_not_kept() {
    let reg = OciRegistry::start(Options::default());
    reg.push_chart(&api("1.0.0"), "charts");
    let layers = reg.layer_digests("charts/api", "1.0.0");
    assert_eq!(layers.len(), 1);
    reg.corrupt_blob(&layers[0]);
    let (r, _d) = renderer_for(&reg, vec![]);
    let url = reg.url("charts");
    let err = r
        .render(&request(vec![chart_source(&url, "1.0.0")]))
        .unwrap_err();
    assert!(matches!(err, Error::OciDigestMismatch { .. }), "{err}");
    assert!(err.to_string().contains(&layers[0]), "{err}");
    let again = r
        .render(&request(vec![chart_source(&url, "1.0.0")]))
        .unwrap_err();
    assert!(matches!(again, Error::OciDigestMismatch { .. }), "{again}");
    assert_eq!(r.oci_registries().download_count(), 2);
}

/// A chart in Git whose `Chart.yaml` names a dependency in an OCI registry (`repository:
/// oci://registry/charts`), not vendored: built as `helm dependency build` would, from the real
/// registry with the repository Secret's credentials (the version a constraint over its tags),
/// only when the project's sourceRepos permit the registry; errors name the dependency.
#[test]
fn oci_chart_dependencies_are_built_from_the_registry() {
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", "dep-pass-3")),
        ..Default::default()
    });
    reg.push_chart(&api("1.2.0"), "charts");
    reg.push_chart(&api("1.4.0"), "charts");
    reg.push_chart(&api("2.0.0"), "charts");
    let deps_url = reg.url("charts");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            (
                "shop/Chart.yaml",
                format!(
                    "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n- name: api\n  version: \"^1\"\n  repository: {deps_url}\n"
                ),
            ),
            (
                "shop/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\ndata:\n  k: v\n".to_string(),
            ),
        ],
        "a chart with an OCI dependency",
    );
    let source = ApplicationSource {
        repo_url: repo.url(),
        path: Some("shop".into()),
        target_revision: Some("HEAD".into()),
        ..Default::default()
    };
    let render = |creds: Vec<RepoCredentials>, allowed: Vec<String>| {
        let (r, dir) = renderer_for(&reg, creds);
        let mut req = request(vec![source.clone()]);
        req.source_repos = Some(allowed);
        (r.render(&req), dir)
    };
    let creds = oci_secret(
        &deps_url,
        json!({"username": "bot", "password": "dep-pass-3"}),
    );
    let (out, _d) = render(vec![creds.clone()], vec!["*".into()]);
    let out = out.unwrap();
    let api_cm = out
        .manifests
        .iter()
        .find(|m| m.object["metadata"]["name"] == "api")
        .expect("the dependency's ConfigMap");
    assert_eq!(api_cm.object["data"]["version"], "1.4.0");
    assert!(
        out.manifests
            .iter()
            .any(|m| m.object["metadata"]["name"] == "shop")
    );

    // Without credentials the registry refuses: the error names the declaring file and the
    // dependency, never a password.
    let (err, _d) = render(vec![], vec!["*".into()]);
    let err = err.unwrap_err();
    assert!(matches!(err, Error::ChartDependency { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("api"), "{text}");
    assert!(text.contains("Chart.yaml"), "{text}");
    assert!(text.contains("HTTP 401"), "{text}");

    // The project's sourceRepos decide which registries a chart may pull from.
    let (err, _d) = render(vec![creds], vec![repo.url()]);
    let err = err.unwrap_err();
    assert!(matches!(err, Error::ChartDependency { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("not permitted by the project's sourceRepos"),
        "{err}"
    );
}
