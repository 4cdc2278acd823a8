//! `plumb app` on Applications outside the control namespace (Argo's `namespace/name`), against
//! the real control plane without a controller: create, get, list, sync and delete address the
//! tenant's Application by its qualified name or by `-N` with `--control-namespace`.

use std::process::{Command, Output, Stdio};

use serde_json::json;

use super::app::{app_json, control_namespace, env, kubectl_apply, text};

/// `plumb app ARGS` with the given trailing flags (no implicit `-N`).
fn plumb(args: &[&str], flags: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(flags)
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("PLUMB_CONTROL_NAMESPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn create_args<'a>(name: &'a str, dest: &'a str) -> Vec<&'a str> {
    vec![
        "create",
        name,
        "--repo",
        "https://git.acme.internal/apps/web.git",
        "--path",
        "k8s",
        "--dest-server",
        "https://kubernetes.default.svc",
        "--dest-namespace",
        dest,
    ]
}

#[test]
fn qualified_names_and_app_namespace_reach_applications_outside_the_control_namespace() {
    let control = control_namespace("cli-anyns");
    let control = control.name();
    let tenant = env().namespace("cli-tenant");
    let tenant = tenant.name();
    let hidden = env().namespace("cli-hidden");
    let hidden = hidden.name();
    let n = ["-N", control];

    // `app create ns/name` creates it in that namespace (the project is read from the control
    // namespace).
    let qualified = format!("{tenant}/web");
    let out = plumb(&create_args(&qualified, "web"), &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "application 'web' created\n");
    let app = app_json(tenant, "web").expect("created in the tenant namespace");
    assert_eq!(app["spec"]["project"], "default");
    assert!(app_json(control, "web").is_none());

    // -N with --control-namespace: a bare name lives in -N.
    let out = plumb(
        &create_args("api", "api"),
        &["-N", tenant, "--control-namespace", control],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(app_json(tenant, "api").is_some());

    // get by qualified name, and by -N; a bare name is looked up in the control namespace.
    let out = plumb(&["get", &qualified, "-o", "json"], &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["metadata"]["namespace"], tenant);
    let out = plumb(
        &["get", "api", "-o", "json"],
        &["-N", tenant, "--control-namespace", control],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let missing = plumb(&["get", "web"], &n);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains(&format!(
            "application 'web' not found in namespace '{control}'"
        )),
        "{}",
        text(&missing.stderr)
    );

    // An Application in the control namespace and one in a namespace nobody permitted.
    let out = plumb(&create_args("home", "home"), &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = plumb(&create_args(&format!("{hidden}/stray"), "stray"), &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // Without argocd-cmd-params-cm, `app list` shows the control namespace only.
    let out = plumb(&["list", "-o", "name"], &n);
    assert_eq!(text(&out.stdout), format!("{control}/home\n"));
    // With `application.namespaces` permitting the tenant: the control namespace first, then
    // the permitted namespaces; never the hidden one.
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cmd-params-cm", "namespace": control},
        "data": {"application.namespaces": format!("nothing-here, /^{tenant}$/")}
    }));
    let out = plumb(&["list", "-o", "name"], &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{control}/home\n{tenant}/api\n{tenant}/web\n")
    );
    let out = plumb(&["list"], &n);
    let names: Vec<String> = text(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    assert_eq!(
        names,
        vec![
            format!("{control}/home"),
            format!("{tenant}/api"),
            format!("{tenant}/web")
        ]
    );
    // -N set apart from the control namespace lists that namespace alone.
    let out = plumb(
        &["list", "-o", "name"],
        &["-N", tenant, "--control-namespace", control],
    );
    assert_eq!(text(&out.stdout), format!("{tenant}/api\n{tenant}/web\n"));

    // sync --async writes the operation on the tenant's Application.
    let out = plumb(&["sync", &qualified, "--async", "--prune"], &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let app = app_json(tenant, "web").unwrap();
    assert_eq!(app["operation"]["sync"]["prune"], true, "{app:#}");

    // delete ns/name.
    let out = plumb(&["delete", &qualified, "--yes", "--cascade=false"], &n);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(app_json(tenant, "web").is_none());
    assert!(app_json(tenant, "api").is_some());
}
