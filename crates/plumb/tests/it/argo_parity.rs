//! Behaviours where Plumb used to differ from Argo CD (issue #13), end to end: the real control
//! plane, `plumb controller` as a process, a real Git repository and the CLI.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::app::{app_json, env, kubectl, kubectl_apply, text};

struct Controller(Child);

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_controller(ns: &str, cache: &std::path::Path) -> Controller {
    Controller(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ns, "--metrics-addr", "127.0.0.1:0"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn plumb(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn both(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

fn wait_app(ns: &str, name: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        if let Some(app) = app_json(ns, name)
            && cond(&app)
        {
            return app;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} not reached; status: {:#}",
            app_json(ns, name)
                .map(|a| a["status"].clone())
                .unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: guestbook-ui\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: guestbook-ui\n  template:\n    metadata:\n      labels:\n        app: guestbook-ui\n    spec:\n      containers:\n      - name: guestbook-ui\n        image: registry.example.com/guestbook-ui:0.2\n";
const CONFIGMAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-flags\ndata:\n  beta: \"off\"\n";

fn create(ns: &str, name: &str, repo: &GitRepo, revision: &str, dest: &str) {
    let out = plumb(
        ns,
        &[
            "create",
            name,
            "--repo",
            &repo.url(),
            "--path",
            "app",
            "--revision",
            revision,
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            dest,
        ],
    );
    assert!(out.status.success(), "create {name}: {}", both(&out));
}

#[test]
fn get_diff_and_tree_read_as_argo_cds() {
    let env = env();
    let ctl_ns = crate::app::control_namespace("parity");
    let dest = env.namespace("parity-dest");
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ctl_ns.name()},
        "data": {"url": "https://plumb.example.com/"}
    }));
    let repo = GitRepo::named("guestbook");
    repo.commit(
        &[
            ("app/deployment.yaml", DEPLOYMENT),
            ("app/flags.yaml", CONFIGMAP),
        ],
        "guestbook",
    );
    let cache = tempfile::tempdir().unwrap();
    let _controller = start_controller(ctl_ns.name(), cache.path());
    let ns = ctl_ns.name();

    // A comparison that fails before any succeeded (no such revision): health is Unknown with
    // the reason, not blank, in the status, `app get` and `app list`.
    create(ns, "broken", &repo, "no-such-tag", dest.name());
    let app = wait_app(ns, "broken", "comparison error", |a| {
        a["status"]["sync"]["status"] == "Unknown"
    });
    assert_eq!(
        app["status"]["health"]["status"], "Unknown",
        "{:#}",
        app["status"]
    );
    assert!(
        app["status"]["health"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no-such-tag"),
        "{:#}",
        app["status"]["health"]
    );
    let out = plumb(ns, &["get", "broken"]);
    assert!(
        text(&out.stdout).contains("\nHealth Status:      Unknown\n"),
        "{}",
        both(&out)
    );
    let out = plumb(ns, &["list"]);
    let list = text(&out.stdout);
    let header = list.lines().next().unwrap_or_default();
    let row = list
        .lines()
        .find(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|n| n == "broken" || n.ends_with("/broken"))
        })
        .unwrap_or_else(|| panic!("no row for broken:\n{list}"));
    let col = header.find("HEALTH").expect("HEALTH column");
    assert!(
        row.get(col..).is_some_and(|c| c.starts_with("Unknown ")),
        "{list}"
    );

    create(ns, "guestbook", &repo, "HEAD", dest.name());
    let out = plumb(ns, &["sync", "guestbook", "--timeout", "120"]);
    assert!(out.status.success(), "sync: {}", both(&out));
    let out = plumb(
        ns,
        &[
            "wait",
            "guestbook",
            "--health",
            "--sync",
            "--timeout",
            "120",
        ],
    );
    assert!(out.status.success(), "wait: {}", both(&out));

    // `URL:` right after `Namespace:`, from argocd-cm's `url` (Argo's printHeader).
    let out = plumb(ns, &["get", "guestbook"]);
    let get = text(&out.stdout);
    let lines: Vec<&str> = get.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Namespace:"))
        .expect("Namespace line");
    assert_eq!(
        lines.get(at + 1).copied(),
        Some("URL:                https://plumb.example.com/applications/guestbook"),
        "{get}"
    );

    // The tree names every owned object by kind and judges it by its kind's rule.
    let out = plumb(ns, &["get", "guestbook", "-o", "tree"]);
    let tree = text(&out.stdout);
    assert!(out.status.success(), "{}", both(&out));
    assert!(
        !tree.contains("─/"),
        "an owned object without its kind:\n{tree}"
    );
    assert!(tree.contains("└─ReplicaSet/guestbook-ui-"), "{tree}");
    let pod_line = tree
        .lines()
        .find(|l| l.contains("─Pod/guestbook-ui-"))
        .unwrap_or_else(|| panic!("no Pod in the tree:\n{tree}"));
    let pod_name = pod_line
        .split("Pod/")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    let pod = kubectl(&["-n", dest.name(), "get", "pod", &pod_name, "-o", "json"]);
    let pod: Value = serde_json::from_slice(&pod.stdout).unwrap();
    let expected = plumb_health::assess(&pod).expect("the Pod rule gives a health");
    let cells: Vec<&str> = pod_line.split_whitespace().collect();
    assert_eq!(
        cells.get(1).copied(),
        Some(expected.code.as_str()),
        "{tree}"
    );

    // Git drops the ConfigMap: `app diff` shows it as removed and exits 1, as `argocd app diff`.
    repo.remove(&["app/flags.yaml"], "drop the flags");
    let out = plumb(ns, &["get", "guestbook", "--refresh", "--timeout", "60"]);
    assert!(out.status.success(), "{}", both(&out));
    let app = wait_app(ns, "guestbook", "ConfigMap requires pruning", |a| {
        a["status"]["resources"].as_array().is_some_and(|rs| {
            rs.iter()
                .any(|r| r["kind"] == "ConfigMap" && r["requiresPruning"] == true)
        })
    });
    assert_eq!(app["status"]["sync"]["status"], "OutOfSync");
    let out = plumb(ns, &["diff", "guestbook", "--attribution=false"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let diff = text(&out.stdout);
    assert!(
        diff.starts_with(&format!(
            "\n===== /ConfigMap {}/guestbook-flags ======\n",
            dest.name()
        )),
        "{diff}"
    );
    assert!(diff.contains("\n<   beta: \"off\"\n"), "{diff}");
    assert!(!diff.lines().any(|l| l.starts_with("> ")), "{diff}");
    let out = plumb(ns, &["diff", "guestbook", "--diff-format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["kind"], "ConfigMap", "{json:#}");
    assert_eq!(json[0]["action"], "extra", "{json:#}");
    assert_eq!(json[0]["changes"][0]["op"], "removed", "{json:#}");
}
