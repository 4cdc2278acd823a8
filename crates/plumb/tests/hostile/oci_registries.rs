//! Attacks: OCI registries. Whoever runs (or can push to) a registry that an Application names
//! serves Plumb manifests and layers: a chart layer whose entries climb out of the chart, are
//! absolute or are links to host files; a layer far larger than any chart; a manifest that
//! declares an absurd size or lies about its layer's size. Each test runs the real `plumb render`
//! against a real registry on 127.0.0.1 (plumb-testenv's `OciRegistry`, the CNCF distribution
//! registry) and checks that Plumb refuses with a clear error naming the repository, downloads
//! no more than it was told to, and writes nothing outside its cache.

use std::io::Write;
use std::path::Path;

use plumb_testenv::oci_registry::{OciRegistry, Options};

use crate::repo_reads::{Run, plumb};

const HELM_CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const HELM_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";

/// A Secret trusting the registry without its CA (`insecure`), as a file for `--repo-secret`.
fn secret_file(dir: &Path, url: &str) -> String {
    let path = dir.join("registry-secret.yaml");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: registry\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: repository\nstringData:\n  type: helm\n  enableOCI: \"true\"\n  url: {url}\n  insecure: \"true\"\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// `plumb render --repo oci://HOST/charts --chart api --revision <rev>` with its own cache.
fn render_chart(reg: &OciRegistry, revision: &str, extra: &[&str]) -> Run {
    let cache = tempfile::tempdir().unwrap();
    let url = reg.url("charts");
    let secret = secret_file(cache.path(), &url);
    let cache_dir = cache.path().join("c").display().to_string();
    let mut args = vec![
        "render",
        "--repo",
        &url,
        "--chart",
        "api",
        "--revision",
        revision,
        "--repo-secret",
        &secret,
        "--cache-dir",
        &cache_dir,
    ];
    args.extend_from_slice(extra);
    plumb(&args)
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

const CHART_YAML: &[u8] = b"apiVersion: v2\nname: api\nversion: 1.0.0\n";
const CM: &[u8] = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n";

#[test]
fn oci_chart_layers_that_escape_or_hold_links_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let escape_rel = format!(
        "api/../../../../../../../..{}/escaped.yaml",
        outside.path().display()
    );
    let escape_abs = format!("{}/absolute.yaml", outside.path().display());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", CHART_YAML),
                (&escape_rel, tar::EntryType::Regular, "", CM),
            ]),
            "climbs out with ..",
        ),
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", CHART_YAML),
                (&escape_abs, tar::EntryType::Regular, "", CM),
            ]),
            "is an absolute path",
        ),
        (
            hostile_tgz(&[
                ("api/Chart.yaml", tar::EntryType::Regular, "", CHART_YAML),
                (
                    "api/templates/passwd.yaml",
                    tar::EntryType::Symlink,
                    "/etc/passwd",
                    b"",
                ),
            ]),
            "is a symbolic link",
        ),
    ];
    let reg = OciRegistry::start(Options::default());
    for (i, (layer, want)) in cases.into_iter().enumerate() {
        let tag = format!("1.0.{i}");
        reg.push_raw(
            "charts/api",
            &tag,
            HELM_CONFIG,
            &[(HELM_CHART_LAYER, layer, None)],
        );
        let run = render_chart(&reg, &tag, &[]);
        assert_ne!(run.code, Some(0), "{want}: plumb succeeded:\n{}", run.all());
        assert!(run.stderr.contains(want), "{want}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("{}/api@{tag}", reg.url("charts"))),
            "{}",
            run.stderr
        );
        assert!(!run.all().contains("root:x:0:0"), "{}", run.all());
        assert!(
            std::fs::read_dir(outside.path()).unwrap().next().is_none(),
            "{want}: a file was written outside the cache"
        );
    }
}

#[test]
fn oci_layers_larger_than_the_limit_or_than_declared_are_not_downloaded() {
    let reg = OciRegistry::start(Options::default());
    let chart = hostile_tgz(&[
        ("api/Chart.yaml", tar::EntryType::Regular, "", CHART_YAML),
        ("api/templates/cm.yaml", tar::EntryType::Regular, "", CM),
    ]);
    // A manifest declaring an absurd size (2^60 bytes) for a small layer: refused on the
    // declaration, before a byte of the layer is asked for.
    reg.push_raw(
        "charts/api",
        "1.0.0",
        HELM_CONFIG,
        &[(HELM_CHART_LAYER, chart.clone(), Some(1 << 60))],
    );
    let run = render_chart(&reg, "1.0.0", &[]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr.contains("declares 1152921504606846976 bytes")
            && run.stderr.contains("download limit"),
        "{}",
        run.stderr
    );

    // A layer bigger than its manifest says (200 KiB declared as 64 bytes): reading stops at
    // the declared size and the layer is refused.
    let mut big = chart.clone();
    big.extend(std::iter::repeat_n(0u8, 200 << 10));
    reg.push_raw(
        "charts/api",
        "1.0.1",
        HELM_CONFIG,
        &[(HELM_CHART_LAYER, big, Some(64))],
    );
    let run = render_chart(&reg, "1.0.1", &[]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr
            .contains("longer than the 64 bytes its manifest declares"),
        "{}",
        run.stderr
    );

    // A layer over the download limit (lowered by the settings key to 64 KiB): refused on its
    // declared size.
    let mut large = chart;
    large.extend(std::iter::repeat_n(0u8, 100 << 10));
    reg.push_raw(
        "charts/api",
        "1.0.2",
        HELM_CONFIG,
        &[(HELM_CHART_LAYER, large, None)],
    );
    let settings = tempfile::tempdir().unwrap();
    let cm = settings.path().join("argocd-cm.yaml");
    std::fs::write(
        &cm,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  plumb.repository.maxDownloadSize: 64Ki\n",
    )
    .unwrap();
    let cm = cm.display().to_string();
    let run = render_chart(&reg, "1.0.2", &["--settings", &cm]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr.contains("download limit of 65536 bytes"),
        "{}",
        run.stderr
    );
}
