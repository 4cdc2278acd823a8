//! Attacks: Helm chart repositories. Whoever runs (or can write to) a chart repository that an
//! Application names serves Plumb an `index.yaml` and chart archives: an index that expands
//! without end or is simply huge, an archive whose entries climb out of the chart, are absolute,
//! or are links to files on the host, and redirects or chart URLs that lead the repository's
//! credentials to another host. Each test runs the real `plumb render --chart` against a real
//! repository server on 127.0.0.1 (plumb-testenv's `ChartRepoServer`) and checks that Plumb
//! refuses with a clear error, writes nothing outside its cache, and leaks no credential.

use std::io::Write;
use std::path::Path;

use plumb_testenv::chart_repo::{ChartRepoServer, Options, chart};
use sha2::{Digest, Sha256};

use crate::repo_reads::{Run, plumb};

/// `plumb render --repo <url> --chart api --revision <rev>` with its own cache and `extra`.
fn render_chart(url: &str, revision: &str, extra: &[&str]) -> Run {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let mut args = vec![
        "render",
        "--repo",
        url,
        "--chart",
        "api",
        "--revision",
        revision,
        "--cache-dir",
        &cache_dir,
    ];
    args.extend_from_slice(extra);
    plumb(&args)
}

/// An index listing `api` 1.0.0 at `api-1.0.0.tgz` with the digest of `archive`.
fn index_for(archive: &[u8]) -> String {
    let digest: String = Sha256::digest(archive)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "apiVersion: v1\nentries:\n  api:\n  - name: api\n    version: 1.0.0\n    digest: {digest}\n    urls:\n    - api-1.0.0.tgz\n"
    )
}

/// A gzip-compressed tar of raw entries `(name, kind, link target, data)`; names are written
/// into the header as they are, so `..` and absolute paths go through.
fn hostile_tgz(entries: &[(&str, tar::EntryType, &str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, link, data) in entries {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(*kind);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    let raw = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

fn secret_file(dir: &Path, url: &str, extra: &str) -> String {
    let path = dir.join("repo-secret.yaml");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: charts\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: repository\nstringData:\n  type: helm\n  url: {url}\n  username: bot\n  password: chart-pass-42\n{extra}"
        ),
    )
    .unwrap();
    path.display().to_string()
}

const CM: &[u8] = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n";

#[test]
fn chart_archives_that_escape_or_hold_links_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let escape_rel = format!(
        "api/../../../../../../../..{}/escaped.yaml",
        outside.path().display()
    );
    let escape_abs = format!("{}/absolute.yaml", outside.path().display());
    let chart_yaml: &[u8] = b"apiVersion: v2\nname: api\nversion: 1.0.0\n";
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", chart_yaml),
                (&escape_rel, tar::EntryType::Regular, "", CM),
            ]),
            "climbs out with ..",
        ),
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", chart_yaml),
                (&escape_abs, tar::EntryType::Regular, "", CM),
            ]),
            "is an absolute path",
        ),
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", chart_yaml),
                (
                    "api/templates/passwd.yaml",
                    tar::EntryType::Symlink,
                    "/etc/passwd",
                    b"",
                ),
            ]),
            "is a symbolic link",
        ),
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", chart_yaml),
                (
                    "api/templates/passwd.yaml",
                    tar::EntryType::Link,
                    "/etc/passwd",
                    b"",
                ),
            ]),
            "is a hard link",
        ),
    ];
    for (archive, want) in cases {
        let server = ChartRepoServer::start(Options::default());
        server.put("api-1.0.0.tgz", &archive);
        server.put("index.yaml", index_for(&archive).as_bytes());
        let run = render_chart(&server.url(), "1.0.0", &[]);
        assert_ne!(run.code, Some(0), "{want}: plumb succeeded:\n{}", run.all());
        assert!(run.stderr.contains(want), "{want}: {}", run.stderr);
        assert!(run.stderr.contains("chart api 1.0.0"), "{}", run.stderr);
        assert!(!run.all().contains("root:x:0:0"), "{}", run.all());
        assert!(
            std::fs::read_dir(outside.path()).unwrap().next().is_none(),
            "{want}: a file was written outside the cache"
        );
    }
}

#[test]
fn index_bombs_and_huge_indexes_are_refused_quickly() {
    // Billion laughs: nine levels of ten aliases each.
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, cur) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        bomb.push_str(&format!(
            "{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
    }
    bomb.push_str("entries:\n  api: *i\n");
    let server = ChartRepoServer::start(Options::default());
    server.put("index.yaml", bomb.as_bytes());
    let run = render_chart(&server.url(), "1.*", &[]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(run.stderr.contains("index.yaml"), "{}", run.stderr);

    // Larger than the download limit (128 MiB): refused on its Content-Length, never parsed.
    let huge = server.charts_dir().join("index.yaml");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len((128 << 20) + 1).unwrap();
    let run = render_chart(&server.url(), "1.*", &[]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr
            .contains("index.yaml exceeds the limit of 128 MiB"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(&huge).unwrap();
}

#[test]
fn credentials_never_follow_redirects_or_chart_urls_to_another_host() {
    let home = ChartRepoServer::start(Options {
        auth: Some(("bot", "chart-pass-42")),
        ..Default::default()
    });
    let elsewhere = ChartRepoServer::start(Options::default());
    home.publish(&chart(
        "api",
        "1.0.0",
        &[("templates/cm.yaml", std::str::from_utf8(CM).unwrap())],
    ));
    let archive = std::fs::read(home.charts_dir().join("api-1.0.0.tgz")).unwrap();
    elsewhere.put("api-1.0.0.tgz", &archive);
    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), &home.url(), "");
    let leaked = |server: &ChartRepoServer| {
        server
            .requests()
            .iter()
            .filter(|r| r.authorization.is_some())
            .count()
    };

    // 1. The repository redirects the archive to another host: followed, without credentials.
    home.redirect(
        "/charts/api-1.0.0.tgz",
        &format!("{}/charts/api-1.0.0.tgz", elsewhere.origin()),
    );
    let run = render_chart(&home.url(), "1.0.0", &["--repo-secret", &secret]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(
        !elsewhere.requests().is_empty(),
        "the redirect was followed"
    );
    assert_eq!(leaked(&elsewhere), 0, "{:?}", elsewhere.requests());
    assert!(
        leaked(&home) > 0,
        "the repository itself got the credentials"
    );

    // 2. The index names the archive on another host: fetched without credentials unless the
    //    Secret says passCredentials (Helm's rule).
    let index = std::fs::read_to_string(home.charts_dir().join("index.yaml")).unwrap();
    let moved = index.replace(
        "- api-1.0.0.tgz",
        &format!("- {}/charts/api-1.0.0.tgz", elsewhere.origin()),
    );
    assert_ne!(moved, index);
    home.put("index.yaml", moved.as_bytes());
    let before = elsewhere.requests().len();
    let run = render_chart(&home.url(), "1.0.0", &["--repo-secret", &secret]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(elsewhere.requests().len() > before);
    assert_eq!(leaked(&elsewhere), 0, "{:?}", elsewhere.requests());
    let passing = secret_file(dir.path(), &home.url(), "  passCredentials: \"true\"\n");
    let run = render_chart(&home.url(), "1.0.0", &["--repo-secret", &passing]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(leaked(&elsewhere) > 0, "passCredentials sends them on");
}

#[test]
fn a_wrong_password_is_never_printed_even_in_debug_logs() {
    let server = ChartRepoServer::start(Options {
        auth: Some(("bot", "the-right-one")),
        ..Default::default()
    });
    server.publish(&chart(
        "api",
        "1.0.0",
        &[("templates/cm.yaml", std::str::from_utf8(CM).unwrap())],
    ));
    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), &server.url(), "");
    let cache = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plumb"));
    child
        .args([
            "render",
            "--repo",
            &server.url(),
            "--chart",
            "api",
            "--revision",
            "1.*",
        ])
        .args(["--repo-secret", &secret, "--cache-dir"])
        .arg(cache.path())
        .env("PLUMB_LOG", "trace");
    let out = child.output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("HTTP 401"), "{all}");
    assert!(!all.contains("chart-pass-42"), "{all}");
    // Basic credentials in base64 (bot:chart-pass-42) do not appear either.
    assert!(!all.contains("Ym90OmNoYXJ0LXBhc3MtNDI"), "{all}");
}

#[test]
fn a_file_dependency_that_leaves_the_repository_is_refused() {
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: passwd\n  version: 0.1.0\n  repository: file://../../../../../../etc\n",
            ),
            ("chart/templates/cm.yaml", std::str::from_utf8(CM).unwrap()),
        ],
        "escaping dependency",
    );
    let cache = tempfile::tempdir().unwrap();
    let url = repo.url();
    let cache_dir = cache.path().display().to_string();
    let run = plumb(&[
        "render",
        "--repo",
        &url,
        "--path",
        "chart",
        "--cache-dir",
        &cache_dir,
    ]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr.contains("dependencies passwd repository")
            && run.stderr.contains("resolves outside the repository root"),
        "{}",
        run.stderr
    );
    assert!(!run.all().contains("root:x:0:0"), "{}", run.all());
}
