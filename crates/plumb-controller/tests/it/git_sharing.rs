//! Git once per repository, renders once per input (issue #17): twenty Applications on one
//! repository, a commit touching one of them, `manifest-generate-paths`, and a restart, measured
//! with the controller's own counters on `/metrics` (`plumb_git_requests_total`,
//! `plumb_renders_total`).

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use plumb_controller::ControllerConfig;
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Controlled, DEADLINE};

const APPS: usize = 20;

/// A port nobody listens on right now.
fn free_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// The text of `/metrics`.
async fn scrape(addr: SocketAddr) -> String {
    let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
        return String::new();
    };
    let req = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return String::new();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out).await;
    out
}

/// The value of the series `name` (labels included, as printed), 0 when absent.
fn value(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

fn config_for(cache: &Path, metrics: SocketAddr) -> impl FnOnce(&mut ControllerConfig) {
    let cache = cache.to_path_buf();
    move |c: &mut ControllerConfig| {
        c.cache_dir = cache.clone();
        c.source.cache_dir = cache;
        c.metrics_addr = Some(metrics);
        // A minute, so the sharing does not depend on how fast this machine runs the wave.
        c.source.ref_cache_ttl = Duration::from_secs(60);
    }
}

/// Waits until every Application reports `commit` as its compared revision.
async fn wait_all_at(ctl: &Controlled, names: &[String], commit: &str) {
    for name in names {
        ctl.wait_app(name, "compared at the commit", |a| {
            a["status"]["sync"]["revision"] == commit
        })
        .await;
    }
}

async fn wait_metric(addr: SocketAddr, what: &str, cond: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < DEADLINE {
        last = scrape(addr).await;
        if cond(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    panic!("{what} not reached within {DEADLINE:?}; last /metrics:\n{last}");
}

const LS_REMOTE: &str = "plumb_git_requests_total{request=\"ls-remote\"}";
const FETCH: &str = "plumb_git_requests_total{request=\"fetch\"}";
const RENDERED: &str = "plumb_renders_total{result=\"rendered\"}";
const CACHED: &str = "plumb_renders_total{result=\"cached\"}";
const SKIPPED: &str = "plumb_renders_total{result=\"skipped\"}";

#[tokio::test]
async fn twenty_applications_share_git_and_a_commit_renders_only_what_it_touched() {
    let env = TestEnv::shared();
    let dest = env.namespace("dest-git-sharing");
    let repo = GitRepo::new();
    let files: Vec<(String, String)> = (0..APPS)
        .map(|i| {
            (
                format!("apps/app-{i}/cm.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: git-sharing-{i}\ndata:\n  v: one\n"
                ),
            )
        })
        .chain([("shared/settings.yaml".to_string(), "x: 1\n".to_string())])
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let c1 = repo.commit(&refs, "fleet");

    let cache = tempfile::tempdir().expect("tempdir").keep();
    let metrics = free_addr();
    let ctl = Controlled::start_with(env, "ctl-git-sharing", config_for(&cache, metrics)).await;
    let names: Vec<String> = (0..APPS).map(|i| format!("git-sharing-{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let mut annotations = json!({});
        if i == 0 {
            // Trusted as written, as Argo CD trusts it: only /shared concerns this one.
            annotations = json!({"argocd.argoproj.io/manifest-generate-paths": "/shared"});
        }
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": format!("apps/app-{i}")},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
        }))
        .await;
    }
    wait_all_at(&ctl, &names, &c1).await;
    let text = wait_metric(metrics, "20 renders counted", |t| value(t, RENDERED) >= 20).await;
    eprintln!(
        "cold wave: ls-remote {}, fetch {}, rendered {}, cached {}",
        value(&text, LS_REMOTE),
        value(&text, FETCH),
        value(&text, RENDERED),
        value(&text, CACHED)
    );
    assert!(
        value(&text, LS_REMOTE) <= 2,
        "one listing for the wave, not one per Application:\n{text}"
    );
    assert_eq!(value(&text, FETCH), 1, "{text}");
    assert_eq!(value(&text, RENDERED), APPS as u64, "{text}");

    // One commit touching app-7's path, and app-0's path (whose annotation names only /shared);
    // every Application refreshed as a webhook would.
    let c2 = repo.commit(
        &[
            (
                "apps/app-7/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: git-sharing-7\ndata:\n  v: two\n",
            ),
            (
                "apps/app-0/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: git-sharing-0\ndata:\n  v: two\n",
            ),
        ],
        "app-7 and app-0",
    );
    for name in &names {
        ctl.patch_app(
            name,
            json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
        )
        .await;
    }
    wait_all_at(&ctl, &names, &c2).await;
    let text = wait_metric(metrics, "19 skipped renders counted", |t| {
        value(t, SKIPPED) >= APPS as u64 - 1
    })
    .await;
    eprintln!(
        "after a commit touching one app: ls-remote {}, fetch {}, rendered {}, skipped {}",
        value(&text, LS_REMOTE),
        value(&text, FETCH),
        value(&text, RENDERED),
        value(&text, SKIPPED)
    );
    assert_eq!(
        value(&text, RENDERED),
        APPS as u64 + 1,
        "only app-7 rendered again:\n{text}"
    );
    assert_eq!(value(&text, FETCH), 2, "{text}");

    // A restart: a new controller process state (empty memory) on the same cache directory
    // renders nothing it had. (The first keeps running: its namespace lives with it.)
    let metrics2 = free_addr();
    let client = env.client().await;
    let mut config = ControllerConfig::new(cache.clone());
    config.control_namespace = ctl.ns.name().to_string();
    config.source.tools = plumb_source::Tools {
        helm: plumb_testenv::tools::helm(),
        kustomize: plumb_testenv::tools::kustomize(),
        ..Default::default()
    };
    config_for(&cache, metrics2)(&mut config);
    let task = tokio::spawn(async move {
        let _ = plumb_controller::run(client, config).await;
    });
    let text = wait_metric(
        metrics2,
        "every Application compared after the restart",
        |t| value(t, CACHED) + value(t, SKIPPED) + value(t, RENDERED) >= APPS as u64,
    )
    .await;
    task.abort();
    eprintln!(
        "after a restart: ls-remote {}, fetch {}, rendered {}, cached {}",
        value(&text, LS_REMOTE),
        value(&text, FETCH),
        value(&text, RENDERED),
        value(&text, CACHED)
    );
    assert_eq!(value(&text, RENDERED), 0, "{text}");
    assert_eq!(value(&text, FETCH), 0, "{text}");
}
