//! `plumb app list` end to end: Argo's filters (`-l` label selector, `-p` project, `-r` repo,
//! `-c` cluster, `-P` path) and every `-o` format, on Applications created through the CLI.

use serde_json::Value;

use crate::app::{control_namespace, kubectl_apply, plumb, text};

fn create(ns: &str, name: &str, repo: &str, path: &str, project: &str, labels: &[&str]) {
    let mut args = vec![
        "create",
        name,
        "--repo",
        repo,
        "--path",
        path,
        "--project",
        project,
        "--dest-server",
        "https://kubernetes.default.svc",
        "--dest-namespace",
        name,
    ];
    for l in labels {
        args.extend(["--label", l]);
    }
    let out = plumb(ns, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn names(ns: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "-o", "name"];
    all.extend_from_slice(args);
    let out = plumb(ns, &all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| l.rsplit('/').next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn list_filters_and_output_formats() {
    let ns = control_namespace("app-list");
    let ns = ns.name();
    kubectl_apply(&serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "payments", "namespace": ns},
        "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}]}
    }));
    let shop = "https://git.acme.internal/apps/shop.git";
    let pay = "https://git.acme.internal/apps/payments.git";
    create(
        ns,
        "cart",
        shop,
        "deploy/cart",
        "default",
        &["team=shop", "tier=web"],
    );
    create(
        ns,
        "checkout",
        shop,
        "deploy/checkout",
        "default",
        &["team=shop", "tier=api"],
    );
    create(
        ns,
        "ledger",
        pay,
        "k8s",
        "payments",
        &["team=payments", "tier=api"],
    );

    assert_eq!(names(ns, &[]), ["cart", "checkout", "ledger"]);
    // -l: equality, inequality and set-based selectors, as the API server evaluates them.
    assert_eq!(names(ns, &["-l", "team=shop"]), ["cart", "checkout"]);
    assert_eq!(names(ns, &["-l", "tier!=web"]), ["checkout", "ledger"]);
    assert_eq!(
        names(ns, &["--selector", "team in (payments),tier=api"]),
        ["ledger"]
    );
    assert_eq!(names(ns, &["-l", "team=nobody"]), Vec::<String>::new());
    // -p (repeatable), -r, -P, -c.
    assert_eq!(names(ns, &["-p", "payments"]), ["ledger"]);
    assert_eq!(
        names(ns, &["-p", "payments", "--project", "default"]),
        ["cart", "checkout", "ledger"]
    );
    assert_eq!(names(ns, &["-r", shop]), ["cart", "checkout"]);
    assert_eq!(names(ns, &["-r", shop, "-P", "deploy/cart"]), ["cart"]);
    assert_eq!(
        names(
            ns,
            &[
                "-c",
                "https://kubernetes.default.svc",
                "-l",
                "team=payments"
            ]
        ),
        ["ledger"]
    );
    assert_eq!(
        names(ns, &["-c", "https://elsewhere.example"]),
        Vec::<String>::new()
    );

    // -o json: an array of the Applications; -o yaml: the same as a YAML list.
    let out = plumb(ns, &["list", "-o", "json", "-l", "team=shop"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let apps: Value = serde_json::from_slice(&out.stdout).unwrap();
    let apps = apps.as_array().unwrap();
    assert_eq!(apps.len(), 2);
    assert_eq!(apps[0]["metadata"]["name"], "cart");
    assert_eq!(apps[0]["kind"], "Application");
    assert_eq!(apps[1]["spec"]["source"]["path"], "deploy/checkout");
    let out = plumb(ns, &["list", "-o", "yaml", "-p", "payments"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let yaml = text(&out.stdout);
    assert!(
        yaml.starts_with("- apiVersion: argoproj.io/v1alpha1\n"),
        "{yaml}"
    );
    assert!(yaml.contains("  name: ledger\n"), "{yaml}");
    assert!(!yaml.contains("name: cart"), "{yaml}");
    // -o wide (the default): Argo's columns, one row per Application kept (STATUS and HEALTH are
    // empty before a controller reports, TARGET without --revision).
    for args in [
        &["list", "-o", "wide", "-r", pay][..],
        &["list", "-r", pay][..],
    ] {
        let out = plumb(ns, args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let rows: Vec<Vec<String>> = text(&out.stdout)
            .lines()
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect();
        assert_eq!(
            rows[0],
            [
                "NAME",
                "CLUSTER",
                "NAMESPACE",
                "PROJECT",
                "STATUS",
                "HEALTH",
                "SYNCPOLICY",
                "CONDITIONS",
                "REPO",
                "PATH",
                "TARGET"
            ]
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            [
                format!("{ns}/ledger").as_str(),
                "https://kubernetes.default.svc",
                "ledger",
                "payments",
                "<none>",
                "<none>",
                pay,
                "k8s"
            ]
        );
    }
    // A bad selector is the API server's error, exit 2.
    let out = plumb(ns, &["list", "-l", "team in shop"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
}
