//! `plumb app logs` end to end: real log lines through the apiserver's `pods/log`, served by kwok
//! for the fake node (docs/testing.md, "Pod logs"). An Application `shop` manages Deployment `web`
//! (two Pods, one container) and Deployment `api` (one Pod, containers `api` and `proxy`) and a
//! ConfigMap; Deployment `outsider` of the same namespace is not managed, and its lines must never
//! show.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use plumb_testenv::pod_logs::{LogFile, LogLine, Stream};
use serde_json::{Value, json};

use crate::app::{control_namespace, env, kubectl, kubectl_apply, patch_status, plumb, text};

fn deployment(ns: &str, name: &str, replicas: u32, containers: &[&str]) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| json!({"name": c, "image": format!("registry.example/{c}:v1")}))
        .collect();
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": containers}}}})
}

/// The names of a Deployment's Pods once it has `count` of them, sorted.
fn pods_of(ns: &str, app: &str, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let out = kubectl(&[
            "-n",
            ns,
            "get",
            "pods",
            "-l",
            &format!("app={app}"),
            "-o",
            "name",
        ]);
        let mut names: Vec<String> = text(&out.stdout)
            .lines()
            .map(|l| l.trim_start_matches("pod/").to_string())
            .collect();
        if names.len() == count {
            names.sort();
            return names;
        }
        assert!(Instant::now() < deadline, "{app}: {names:?} within 120 s");
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn at<'a>(time: &'a str, text: &'a str) -> LogLine<'a> {
    LogLine {
        time,
        stream: Stream::Stdout,
        text,
    }
}

/// The namespace, the log files' directory, and `web`'s two log files (first and second Pod).
struct Shop {
    ns: plumb_testenv::TestNamespace,
    _dir: tempfile::TempDir,
    web: [LogFile; 2],
}

fn setup(prefix: &str) -> Shop {
    let ns = control_namespace(prefix);
    let n = ns.name();
    kubectl_apply(&deployment(n, "web", 2, &["web"]));
    kubectl_apply(&deployment(n, "api", 1, &["api", "proxy"]));
    kubectl_apply(&deployment(n, "outsider", 1, &["web"]));
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": n}, "data": {"mode": "fast"}}));
    let out = plumb(
        n,
        &[
            "create",
            "shop",
            "--repo",
            "https://git.acme.internal/apps/shop.git",
            "--path",
            "deploy",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            n,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    patch_status(
        n,
        "shop",
        &json!({"status": {"resources": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": n, "name": "web", "status": "Synced"},
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": n, "name": "api", "status": "Synced"},
            {"version": "v1", "kind": "ConfigMap", "namespace": n, "name": "settings", "status": "Synced"}
        ]}}),
    );

    let dir = tempfile::tempdir().unwrap();
    let web_pods = pods_of(n, "web", 2);
    let web = [
        LogFile::create(
            dir.path(),
            "web-0.log",
            &[
                at("2026-12-01T10:00:00.000000000Z", "web-0 listening on :8080"),
                at("2026-12-01T10:00:02.000000000Z", "web-0 GET /healthz 200"),
            ],
        ),
        LogFile::create(
            dir.path(),
            "web-1.log",
            &[
                at("2026-12-01T10:00:01.000000000Z", "web-1 listening on :8080"),
                LogLine {
                    time: "2026-12-01T10:00:03.000000000Z",
                    stream: Stream::Stderr,
                    text: "web-1 ERROR upstream timed out",
                },
            ],
        ),
    ];
    for (pod, file) in web_pods.iter().zip(&web) {
        env().set_pod_logs(n, pod, &[(&[], file)]);
    }
    let api_pod = &pods_of(n, "api", 1)[0];
    let api = LogFile::create(
        dir.path(),
        "api.log",
        &[at("2026-12-01T10:00:00.500000000Z", "api ready")],
    );
    let proxy = LogFile::create(
        dir.path(),
        "proxy.log",
        &[
            at("2026-12-01T10:00:00.600000000Z", "proxy ready"),
            at("2026-12-01T10:00:04.000000000Z", "proxy GET /api/cart 200"),
        ],
    );
    env().set_pod_logs(n, api_pod, &[(&["api"], &api), (&["proxy"], &proxy)]);
    let outsider_pod = &pods_of(n, "outsider", 1)[0];
    let outsider = LogFile::create(
        dir.path(),
        "outsider.log",
        &[at("2026-12-01T10:00:00.700000000Z", "outsider line")],
    );
    env().set_pod_logs(n, outsider_pod, &[(&[], &outsider)]);
    Shop { ns, _dir: dir, web }
}

fn logs(ns: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["logs", "shop"];
    all.extend_from_slice(args);
    let out = plumb(ns, &all);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn logs_of_the_named_resource_pods_merged_in_time_order_with_tail_container_and_filters() {
    let shop = setup("logs");
    let ns = shop.ns.name();

    // By owner kind and name: both Pods of `web`, merged by time; never `outsider`'s lines.
    let (code, out, err) = logs(ns, &["--kind", "Deployment", "--name", "web"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "web-0 listening on :8080\nweb-1 listening on :8080\nweb-0 GET /healthz 200\n\
         web-1 ERROR upstream timed out\n"
    );
    assert_eq!(err, "");
    // The same through the group.
    let (code, same, _) = logs(
        ns,
        &["--group", "apps", "--kind", "Deployment", "--name", "web"],
    );
    assert_eq!((code, same.as_str()), (Some(0), out.as_str()));

    // --tail is per Pod, as the kubelet's tailLines.
    let (code, out, err) = logs(
        ns,
        &["--kind", "Deployment", "--name", "web", "--tail", "1"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "web-0 GET /healthz 200\nweb-1 ERROR upstream timed out\n"
    );

    // --container picks one container of a Pod with two.
    let (code, out, err) = logs(ns, &["--name", "api", "-c", "proxy"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "proxy ready\nproxy GET /api/cart 200\n");
    let (code, out, err) = logs(ns, &["--name", "api", "--container", "api"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "api ready\n");
    // Without one, the apiserver asks for a container; the Pod is named, nothing is printed.
    let (code, out, err) = logs(ns, &["--name", "api"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "");
    assert!(
        err.starts_with("plumb: reading the logs of Pod ")
            && err.contains("a container name must be specified"),
        "{err}"
    );

    // Argo's filters: case-insensitive by default, `!` inverts, --match-case.
    let (_, out, _) = logs(ns, &["--name", "web", "--filter", "error"]);
    assert_eq!(out, "web-1 ERROR upstream timed out\n");
    let (_, out, _) = logs(ns, &["--name", "web", "--filter", "error", "-m"]);
    assert_eq!(out, "");
    let (_, out, _) = logs(ns, &["--name", "web", "--filter", "!listening"]);
    assert_eq!(
        out,
        "web-0 GET /healthz 200\nweb-1 ERROR upstream timed out\n"
    );
    // --until-time: nothing written after it.
    let (_, out, _) = logs(
        ns,
        &["--name", "web", "--until-time", "2026-12-01T10:00:01.5Z"],
    );
    assert_eq!(out, "web-0 listening on :8080\nweb-1 listening on :8080\n");
    let (code, _, err) = logs(ns, &["--name", "web", "--until-time", "10am"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid untilTime parameter value"), "{err}");

    // A managed resource that has no Pods, and a resource the Application does not manage.
    let (code, out, err) = logs(ns, &["--kind", "ConfigMap"]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
    assert_eq!(err, "no Pods found for application 'shop'\n");
    let (code, out, err) = logs(ns, &["--kind", "Deployment", "--name", "outsider"]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(err, "plumb: No matching resource found\n");

    // More Pods than argocd-cm's server.maxPodLogsToRender allows.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns,
            "labels": {"app.kubernetes.io/part-of": "argocd"}},
        "data": {"server.maxPodLogsToRender": "1"}}));
    let (code, out, err) = logs(ns, &["--name", "web"]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(
        err,
        "plumb: max pods to view logs are reached. Please provide more granular query\n"
    );
}

/// Runs `plumb app logs shop ARGS` in the background; its stdout lines arrive on the channel.
fn spawn_logs(ns: &str, args: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["app", "logs", "shop"])
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for the child to exit within `secs` (it is killed and the test fails otherwise).
fn exit_within(child: &mut std::process::Child, secs: u64, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: plumb app logs -f still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn logs_follow_streams_new_lines_and_ends_at_until_time() {
    let shop = setup("logsf");
    let ns = shop.ns.name();
    let recv = |rx: &mpsc::Receiver<String>, what: &str| {
        rx.recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{what}: no line within 60 s ({e})"))
    };

    // Follow `web` until an hour from now: the existing lines, then lines as they are written,
    // then the stream ends at the first line written after --until-time (not printed).
    let now = jiff::Timestamp::now();
    let until = now + jiff::SignedDuration::from_secs(3600);
    let (mut child, rx) = spawn_logs(
        ns,
        &[
            "--kind",
            "Deployment",
            "--name",
            "web",
            "-f",
            "--until-time",
            &until.to_string(),
        ],
    );
    let mut first: Vec<String> = (0..4).map(|_| recv(&rx, "existing lines")).collect();
    first.sort();
    assert_eq!(
        first,
        [
            "web-0 GET /healthz 200",
            "web-0 listening on :8080",
            "web-1 ERROR upstream timed out",
            "web-1 listening on :8080"
        ]
    );
    let written = now.to_string();
    shop.web[1].append(&[at(&written, "web-1 GET /cart 200")]);
    assert_eq!(recv(&rx, "the appended line"), "web-1 GET /cart 200");
    let late = (until + jiff::SignedDuration::from_secs(1)).to_string();
    shop.web[0].append(&[at(&late, "web-0 after the end")]);
    let status = exit_within(&mut child, 60, "a line after --until-time");
    assert!(status.success(), "{status}");
    let rest: Vec<String> = rx.try_iter().collect();
    assert!(rest.is_empty(), "{rest:?}");

    // With no new line, the stream ends when the clock passes --until-time.
    let until = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3);
    let (mut child, rx) = spawn_logs(
        ns,
        &[
            "--name",
            "api",
            "-c",
            "proxy",
            "--follow",
            "--tail",
            "1",
            "--until-time",
            &until.to_string(),
        ],
    );
    assert_eq!(recv(&rx, "the last proxy line"), "proxy GET /api/cart 200");
    let status = exit_within(&mut child, 60, "--until-time passed");
    assert!(status.success(), "{status}");
    assert!(rx.try_iter().next().is_none());
}
