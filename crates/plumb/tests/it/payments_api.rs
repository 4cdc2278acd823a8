//! The payments-api scenario end to end: a real Git repository, the real control plane, `plumb
//! controller` running as a process, and the CLI a release pipeline drives (get, diff, sync,
//! wait), through a release and a tamper.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

const IMAGE: &str = "registry.acme.internal/payments-api";

fn files(version: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "k8s/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: payments-api\nspec:\n  selector:\n    app: payments-api\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n".into(),
        ),
        (
            "k8s/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments-api\ndata:\n  LOG_LEVEL: info\n  CURRENCY: EUR\n".into(),
        ),
        (
            "k8s/deployment.yaml",
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api\nspec:\n  replicas: 3\n  minReadySeconds: 3\n  selector:\n    matchLabels:\n      app: payments-api\n  template:\n    metadata:\n      labels:\n        app: payments-api\n    spec:\n      containers:\n      - name: payments-api\n        image: {IMAGE}:{version}\n        ports:\n        - containerPort: 8080\n        securityContext:\n          runAsNonRoot: true\n          allowPrivilegeEscalation: false\n        envFrom:\n        - configMapRef:\n            name: payments-api\n"
            ),
        ),
    ]
}

struct Controller(Child);

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn plumb(env: &TestEnv, ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env.kubeconfig())
        .args(["-N", ns])
        .env("TZ", "UTC")
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn kubectl(env: &TestEnv, args: &[&str], stdin: Option<&str>) -> Output {
    let out = plumb_testenv::process::output_with_stdin(
        env.kubectl().args(args),
        stdin.unwrap_or_default(),
    );
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn app_json(env: &TestEnv, ns: &str) -> Value {
    let out = kubectl(
        env,
        &[
            "-n",
            ns,
            "get",
            "applications.argoproj.io",
            "payments-api",
            "-o",
            "json",
        ],
        None,
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn wait_for(env: &TestEnv, ns: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let app = app_json(env, ns);
        if cond(&app) {
            return app;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} not reached; status: {:#}",
            app["status"]
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn resource_status<'a>(app: &'a Value, kind: &str) -> &'a Value {
    app["status"]["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["kind"] == kind))
        .unwrap_or(&Value::Null)
}

#[test]
fn payments_api_release_and_tamper() {
    let env = crate::app::env();
    let ctl_ns = env.namespace("argocd");
    let payments = env.namespace("payments");
    kubectl(
        env,
        &["apply", "-f", "-"],
        Some(
            &json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
                "metadata": {"name": "default", "namespace": ctl_ns.name()},
                "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}],
                         "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
            })
            .to_string(),
        ),
    );

    let repo = GitRepo::named("payments");
    repo.commit(&files("v1.3.2"), "payments-api v1.3.2");
    repo.tag("v1.3.2");
    let cache = tempfile::tempdir().unwrap();
    let metrics_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let _controller = Controller(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args([
                "controller",
                "-n",
                ctl_ns.name(),
                "--metrics-addr",
                &format!("127.0.0.1:{metrics_port}"),
            ])
            .arg("--kubeconfig")
            .arg(env.kubeconfig())
            .arg("--cache-dir")
            .arg(cache.path())
            .env("PLUMB_HELM", plumb_testenv::tools::helm())
            .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let out = plumb(
        env,
        ctl_ns.name(),
        &[
            "create",
            "payments-api",
            "--repo",
            &repo.url(),
            "--path",
            "k8s",
            "--revision",
            "v1.3.2",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            payments.name(),
            "--project",
            "default",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));

    // Synced at v1.3.2: Synced and Healthy; the ConfigMap has no health.
    let out = plumb(
        env,
        ctl_ns.name(),
        &["sync", "payments-api", "--timeout", "120"],
    );
    assert!(out.status.success(), "sync v1.3.2: {}", text(&out));
    let out = plumb(
        env,
        ctl_ns.name(),
        &[
            "wait",
            "payments-api",
            "--health",
            "--sync",
            "--timeout",
            "120",
        ],
    );
    assert!(out.status.success(), "wait v1.3.2: {}", text(&out));
    let v132 = repo.head();
    // --refresh asks the controller to compare again and returns once it has (it removes the
    // refresh annotation when done).
    let out = plumb(
        env,
        ctl_ns.name(),
        &["get", "payments-api", "--hard-refresh", "--timeout", "60"],
    );
    assert!(out.status.success(), "get --hard-refresh: {}", text(&out));
    let app = app_json(env, ctl_ns.name());
    assert!(
        app["metadata"]["annotations"]["argocd.argoproj.io/refresh"].is_null(),
        "annotation removed"
    );
    let out = plumb(env, ctl_ns.name(), &["get", "payments-api"]);
    let get = stdout(&out);
    assert!(
        get.contains(&format!(
            "Name:               {}/payments-api\n",
            ctl_ns.name()
        )),
        "{get}"
    );
    assert!(
        get.contains(&format!(
            "Sync Status:        Synced to v1.3.2 ({})\n",
            &v132[..7]
        )),
        "{get}"
    );
    assert!(get.contains("Health Status:      Healthy\n"), "{get}");
    let cm_row = get
        .lines()
        .find(|l| l.contains("ConfigMap"))
        .expect("ConfigMap row");
    let cols: Vec<&str> = cm_row.split_whitespace().collect();
    assert_eq!(
        cols,
        ["ConfigMap", payments.name(), "payments-api", "Synced"],
        "no HEALTH for a ConfigMap: {cm_row:?}"
    );

    // Git gets v1.4.0 with only the image changed; the Application targets it.
    repo.commit(&files("v1.4.0")[2..], "payments-api v1.4.0");
    repo.tag("v1.4.0");
    let v140 = repo.head();
    kubectl(
        env,
        &[
            "-n",
            ctl_ns.name(),
            "patch",
            "applications.argoproj.io",
            "payments-api",
            "--type=merge",
            "-p",
            r#"{"spec":{"source":{"targetRevision":"v1.4.0"}}}"#,
        ],
        None,
    );
    let app = wait_for(env, ctl_ns.name(), "OutOfSync from v1.4.0", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
            && a["status"]["sync"]["revision"] == v140.as_str()
    });
    assert_eq!(app["status"]["health"]["status"], "Healthy");
    assert_eq!(resource_status(&app, "Deployment")["status"], "OutOfSync");
    assert_eq!(resource_status(&app, "Service")["status"], "Synced");
    assert_eq!(resource_status(&app, "ConfigMap")["status"], "Synced");
    let get = stdout(&plumb(env, ctl_ns.name(), &["get", "payments-api"]));
    assert!(
        get.contains(&format!(
            "Sync Status:        OutOfSync from v1.4.0 ({})\n",
            &v140[..7]
        )),
        "{get}"
    );

    // The diff shows exactly the two image lines, and exits 1.
    let out = plumb(
        env,
        ctl_ns.name(),
        &["diff", "payments-api", "--attribution=false"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let diff = stdout(&out);
    assert!(
        diff.starts_with(&format!(
            "\n===== apps/Deployment {}/payments-api ======\n",
            payments.name()
        )),
        "{diff}"
    );
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with("< ") || l.starts_with("> "))
        .collect();
    assert_eq!(changed.len(), 2, "{diff}");
    assert!(
        changed[0].starts_with("< ")
            && changed[0]
                .trim_end()
                .ends_with(&format!("image: {IMAGE}:v1.3.2")),
        "{diff}"
    );
    assert!(
        changed[1].starts_with("> ")
            && changed[1]
                .trim_end()
                .ends_with(&format!("image: {IMAGE}:v1.4.0")),
        "{diff}"
    );
    assert!(diff.lines().any(|l| l == "---"), "{diff}");

    // Sync: Succeeded, Synced to v1.4.0, and Progressing while the rollout runs.
    let out = plumb(
        env,
        ctl_ns.name(),
        &["sync", "payments-api", "--timeout", "120"],
    );
    let sync = stdout(&out);
    assert!(out.status.success(), "sync v1.4.0: {}", text(&out));
    assert!(sync.contains("Phase:              Succeeded\n"), "{sync}");
    assert!(
        sync.contains(&format!(
            "Sync Status:        Synced to v1.4.0 ({})\n",
            &v140[..7]
        )),
        "{sync}"
    );
    assert!(sync.contains("Health Status:      Progressing\n"), "{sync}");
    assert!(sync.contains("Waiting for rollout to finish"), "{sync}");
    assert!(
        sync.contains("Message:            successfully synced (all tasks run)\n"),
        "{sync}"
    );

    // The promotion gate: wait for Healthy.
    let out = plumb(
        env,
        ctl_ns.name(),
        &["wait", "payments-api", "--health", "--timeout", "300"],
    );
    assert!(out.status.success(), "wait --health: {}", text(&out));
    assert!(
        stdout(&out).contains("Health Status:      Healthy\n"),
        "{}",
        text(&out)
    );

    // Tamper: runAsNonRoot removed with kubectl → OutOfSync within seconds.
    let tampered_at = Instant::now();
    kubectl(
        env,
        &[
            "-n",
            payments.name(),
            "patch",
            "deploy",
            "payments-api",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/template/spec/containers/0/securityContext/runAsNonRoot"}]"#,
        ],
        None,
    );
    wait_for(env, ctl_ns.name(), "OutOfSync after the tamper", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    });
    eprintln!("tamper detected after {:?}", tampered_at.elapsed());
    let out = plumb(env, ctl_ns.name(), &["diff", "payments-api"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let diff = stdout(&out);
    let added: Vec<&str> = diff.lines().filter(|l| l.starts_with("> ")).collect();
    assert_eq!(added.len(), 1, "{diff}");
    assert_eq!(
        added[0].trim_start_matches("> ").trim(),
        "runAsNonRoot: true",
        "{diff}"
    );
    assert!(
        !diff.lines().any(|l| l.starts_with("< ")),
        "nothing to remove: {diff}"
    );
    // The API server records no field manager for a removal (checked against v1.36: a
    // removal-only `kubectl patch` leaves no managedFields entry), so the attribution says the
    // field is gone and names who last wrote its parent, instead of inventing a culprit.
    let note = diff
        .lines()
        .find(|l| l.starts_with("# "))
        .unwrap_or_default();
    assert_eq!(
        note.split(" (parent").next(),
        Some(
            "# spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot: not in live; the removal was not recorded by any field manager"
        ),
        "{diff}"
    );
    assert!(
        note.contains("parent last written by plumb-controller (Apply) at "),
        "{diff}"
    );
    let out = plumb(
        env,
        ctl_ns.name(),
        &["wait", "payments-api", "--sync", "--timeout", "5"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "wait --sync must time out: {}",
        text(&out)
    );

    // Metrics and health endpoints of the controller, after a real sync: Argo's series parsed
    // from the exposition.
    let metrics = http_get(metrics_port, "/metrics");
    let series = parse_exposition(&metrics);
    let find = |name: &str, want: &[(&str, &str)]| -> Vec<f64> {
        series
            .iter()
            .filter(|(n, labels, _)| {
                n == name
                    && want
                        .iter()
                        .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|(_, _, v)| *v)
            .collect()
    };
    let ns = ctl_ns.name();
    // The tamper changed the pod template, so a rollout runs: health may be Progressing here.
    let info = find(
        "argocd_app_info",
        &[
            ("name", "payments-api"),
            ("namespace", ns),
            ("project", "default"),
            ("dest_server", "https://kubernetes.default.svc"),
            ("sync_status", "OutOfSync"),
            ("autosync_enabled", "false"),
        ],
    );
    assert_eq!(info, [1.0], "one argocd_app_info series: {metrics}");
    assert!(
        series.iter().any(|(n, l, _)| n == "argocd_app_info"
            && l.get("repo").is_some_and(|r| !r.is_empty())
            && l.contains_key("health_status")
            && l.contains_key("dest_namespace")
            && l.contains_key("operation")),
        "{metrics}"
    );
    let synced = find(
        "argocd_app_sync_total",
        &[
            ("name", "payments-api"),
            ("namespace", ns),
            ("phase", "Succeeded"),
        ],
    );
    assert!(synced.iter().sum::<f64>() >= 1.0, "{metrics}");
    let reconciles = find("argocd_app_reconcile_count", &[("namespace", ns)]);
    assert!(reconciles.iter().sum::<f64>() >= 1.0, "{metrics}");
    assert_eq!(
        find(
            "argocd_cluster_info",
            &[
                ("server", "https://kubernetes.default.svc"),
                ("name", "in-cluster")
            ]
        ),
        [1.0],
        "{metrics}"
    );
    assert!(
        find("argocd_git_request_total", &[]).iter().sum::<f64>() >= 1.0,
        "{metrics}"
    );
    assert!(
        find("plumb_app_reconcile_duration_seconds_count", &[])
            .iter()
            .sum::<f64>()
            >= 1.0,
        "{metrics}"
    );
    // The controller's Kubernetes requests: during the Application's reconciles and its sync
    // (applies are patches of deployments, labelled with the Application).
    // The Application is read from the controller's watch cache (no request); its writes carry
    // its project.
    let app_requests = |verb: &str, kind: &str, project: &str| {
        find(
            "argocd_app_k8s_request_total",
            &[
                ("server", "https://kubernetes.default.svc"),
                ("name", "payments-api"),
                ("namespace", ns),
                ("project", project),
                ("verb", verb),
                ("resource_kind", kind),
            ],
        )
        .iter()
        .sum::<f64>()
    };
    assert!(
        app_requests("patch", "applications", "default") >= 1.0,
        "{metrics}"
    );
    assert!(
        app_requests("patch", "deployments", "default") >= 1.0,
        "{metrics}"
    );
    assert!(
        series
            .iter()
            .any(|(n, l, _)| n == "argocd_app_k8s_request_total"
                && l.get("response_code").is_some_and(|c| c == "200")
                && l.get("dry_run")
                    .is_some_and(|d| d == "true" || d == "false")),
        "{metrics}"
    );
    assert!(metrics.ends_with("# EOF\n"), "{metrics}");
    assert!(http_get(metrics_port, "/readyz").ends_with("ok\n"));
    assert!(http_get(metrics_port, "/healthz").ends_with("ok\n"));

    // Events on the Application: operation start and finish.
    let out = kubectl(
        env,
        &[
            "-n",
            ctl_ns.name(),
            "get",
            "events.events.k8s.io",
            "-o",
            "json",
        ],
        None,
    );
    let events: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reasons: Vec<&str> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["regarding"]["name"] == "payments-api")
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert!(
        reasons.contains(&"OperationStarted") && reasons.contains(&"OperationCompleted"),
        "{reasons:?}"
    );

    // Self-heal: switched on with `plumb app set`, the controller reverts the tamper by itself
    // and says in an Event what it reverted and why no field manager is named for a removal.
    let out = plumb(
        env,
        ctl_ns.name(),
        &[
            "set",
            "payments-api",
            "--sync-policy",
            "automated",
            "--self-heal",
        ],
    );
    assert!(out.status.success(), "set: {}", text(&out));
    let healing = Instant::now();
    wait_for(env, ctl_ns.name(), "Synced after self-heal", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && a["status"]["operationState"]["phase"] == "Succeeded"
            && a["status"]["operationState"]["operation"]["initiatedBy"]["automated"] == true
    });
    eprintln!("self-heal done after {:?}", healing.elapsed());
    let live = kubectl(
        env,
        &[
            "-n",
            payments.name(),
            "get",
            "deploy",
            "payments-api",
            "-o",
            "json",
        ],
        None,
    );
    let live: Value = serde_json::from_slice(&live.stdout).unwrap();
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsNonRoot"],
        true
    );
    let out = kubectl(
        env,
        &[
            "-n",
            ctl_ns.name(),
            "get",
            "events.events.k8s.io",
            "-o",
            "json",
        ],
        None,
    );
    let events: Value = serde_json::from_slice(&out.stdout).unwrap();
    let heal = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["regarding"]["name"] == "payments-api" && e["reason"] == "SelfHeal")
        .filter_map(|e| e["note"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        heal.contains(&format!(
            "apps/Deployment {}/payments-api (spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot removed from the cluster, not recorded by any field manager; parent last written by plumb-controller (Apply) at ",
            payments.name()
        )),
        "{heal}"
    );

    // Cascading delete: the controller deletes what the Application tracked, then lets it go.
    let out = plumb(
        env,
        ctl_ns.name(),
        &["delete", "payments-api", "--cascade=true", "-y"],
    );
    assert!(out.status.success(), "delete: {}", text(&out));
    let start = Instant::now();
    loop {
        let out = kubectl(
            env,
            &[
                "-n",
                payments.name(),
                "get",
                "deploy,svc,cm",
                "-l",
                "app=payments-api",
                "-o",
                "name",
            ],
            None,
        );
        let apps = kubectl(
            env,
            &[
                "-n",
                ctl_ns.name(),
                "get",
                "applications.argoproj.io",
                "-o",
                "name",
            ],
            None,
        );
        let left = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&apps.stdout);
        let tracked = kubectl(
            env,
            &["-n", payments.name(), "get", "deploy,svc,cm", "-o", "name"],
            None,
        );
        let tracked = String::from_utf8_lossy(&tracked.stdout)
            .lines()
            .filter(|l| l.ends_with("/payments-api"))
            .count();
        if tracked == 0 && !left.contains("payments-api") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "cascade delete left: {left} ({tracked} objects)"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn http_get(port: u16, path: &str) -> String {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body
}

/// The samples of an OpenMetrics/Prometheus text exposition: (name, labels, value).
fn parse_exposition(text: &str) -> Vec<(String, std::collections::BTreeMap<String, String>, f64)> {
    let body = text.split("\r\n\r\n").nth(1).unwrap_or(text);
    let mut out = Vec::new();
    for line in body
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (head, value) = line.rsplit_once(' ').expect("sample line has a value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
        let (name, labels) = match head.split_once('{') {
            Some((name, rest)) => {
                let rest = rest.strip_suffix('}').expect("closing brace");
                let mut labels = std::collections::BTreeMap::new();
                // Values are quoted; Plumb's label values hold no `",` sequence.
                for pair in rest.split("\",").filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
                    labels.insert(k.to_string(), v.trim_end_matches('"').to_string());
                }
                (name.to_string(), labels)
            }
            None => (head.to_string(), Default::default()),
        };
        out.push((name, labels, value));
    }
    out
}
