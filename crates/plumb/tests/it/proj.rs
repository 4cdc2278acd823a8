//! `plumb proj ...` end to end against the real control plane: a project created with the
//! binary, then listed, shown (with a repository Secret scoped to it) and its windows listed.
//! The test's namespace is the control namespace (`-N`).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::app::{env, kubectl_apply, text};

fn plumb(ns: &str, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("proj")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn project_spec(ns: &str) -> Value {
    let out = env()
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            "appprojects.argoproj.io",
            "payments",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["spec"].clone()
}

const CREATE: &[&str] = &[
    "create",
    "payments",
    "--description",
    "Payments team services",
    "-d",
    "https://kubernetes.default.svc,payments",
    "-s",
    "https://git.acme.internal/apps/payments.git",
    "--allow-cluster-resource",
    "/Namespace",
    "--orphaned-resources",
];

#[test]
fn create_list_get_and_list_windows() {
    let ns = env().namespace("proj");
    let ns = ns.name();

    // Created silently, like `argocd proj create`; the same spec again is fine.
    assert_eq!(ok(&plumb(ns, CREATE, None)), "");
    assert_eq!(ok(&plumb(ns, CREATE, None)), "");
    assert_eq!(
        project_spec(ns),
        json!({"clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
               "description": "Payments team services",
               "destinations": [{"namespace": "payments", "server": "https://kubernetes.default.svc"}],
               "orphanedResources": {},
               "sourceRepos": ["https://git.acme.internal/apps/payments.git"]})
    );

    // Another spec needs --upsert.
    let mut changed = CREATE.to_vec();
    changed[3] = "Payments and refunds";
    let refused = plumb(ns, &changed, None);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        text(&refused.stderr),
        "plumb: existing project spec is different; use upsert flag to force update; \
         difference in keys \"Description\"\n"
    );

    // The windows come from a file on stdin, with the flags on top.
    let manifest = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "payments"},
        "spec": {"syncWindows": [
            {"kind": "deny", "schedule": "* * * * *", "duration": "1h", "applications": ["payments-*"],
             "manualSync": true},
            {"kind": "allow", "schedule": "0 0 31 4 *", "duration": "1h", "namespaces": ["payments"],
             "timeZone": "Europe/Berlin", "syncOverrun": true}
        ]}
    });
    let mut upsert = changed.clone();
    upsert.extend(["-f", "-", "--upsert"]);
    assert_eq!(ok(&plumb(ns, &upsert, Some(&manifest.to_string()))), "");
    let spec = project_spec(ns);
    assert_eq!(spec["description"], "Payments and refunds");
    assert_eq!(spec["syncWindows"][0]["timeZone"], "UTC");

    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "payments-repo", "namespace": ns,
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": "https://git.acme.internal/apps/payments.git", "project": "payments"}
    }));

    assert_eq!(
        ok(&plumb(ns, &["list"], None)),
        "NAME      DESCRIPTION           DESTINATIONS                             \
         SOURCES                                      CLUSTER-RESOURCE-WHITELIST  \
         NAMESPACE-RESOURCE-BLACKLIST  SIGNATURE-KEYS  ORPHANED-RESOURCES    \
         DESTINATION-SERVICE-ACCOUNTS\n\
         payments  Payments and refunds  https://kubernetes.default.svc,payments  \
         https://git.acme.internal/apps/payments.git  /Namespace                  \
         <none>                        <none>          enabled (warn=false)  <none>\n"
    );
    assert_eq!(ok(&plumb(ns, &["list", "-o", "name"], None)), "payments\n");
    assert_eq!(
        ok(&plumb(ns, &["get", "payments"], None)),
        "Name:                        payments\n\
         Description:                 Payments and refunds\n\
         Destinations:                https://kubernetes.default.svc,payments\n\
         Repositories:                https://git.acme.internal/apps/payments.git\n\
         Source Namespaces:           <none>\n\
         Scoped Repositories:         https://git.acme.internal/apps/payments.git\n\
         Allowed Cluster Resources:   /Namespace\n\
         Scoped Clusters:             <none>\n\
         Denied Namespaced Resources: <none>\n\
         Signature keys:              <none>\n\
         Orphaned Resources:          enabled (warn=false)\n"
    );
    let as_json: Value =
        serde_json::from_str(&ok(&plumb(ns, &["get", "payments", "-o", "json"], None))).unwrap();
    assert_eq!(as_json["metadata"]["namespace"], ns);
    assert_eq!(as_json["spec"], spec);

    assert_eq!(
        ok(&plumb(ns, &["windows", "list", "payments"], None)),
        "ID  STATUS    KIND   SCHEDULE    DURATION  APPLICATIONS  NAMESPACES  CLUSTERS  \
         MANUALSYNC  SYNCOVERRUN  TIMEZONE       USEANDOPERATOR  \n\
         0   Active    deny   * * * * *   1h        payments-*    -           -         \
         Enabled     Disabled     UTC            Disabled        \n\
         1   Inactive  allow  0 0 31 4 *  1h        -             payments    -         \
         Disabled    Enabled      Europe/Berlin  Disabled        \n"
    );

    let missing = plumb(ns, &["get", "billing"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        text(&missing.stderr),
        format!("plumb: project 'billing' not found in namespace '{ns}'\n")
    );
}
