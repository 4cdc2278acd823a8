//! Every `plumb proj` verb that changes a project, in core mode against the real control plane:
//! each step runs the binary and checks its exit code, what it printed, and the AppProject as
//! the API server stores it afterwards (Argo's duplicate and missing-entry behaviour included).

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::app::{env, text};

fn plumb(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("proj")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn stored(ns: &str, name: &str) -> Value {
    let out = env()
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            "appprojects.argoproj.io",
            name,
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One step: the arguments, the exit code, a text stdout or stderr must contain (empty: any),
/// and the JSON pointer into the stored project with the value it must then hold (`Null`:
/// absent).
struct Step {
    args: &'static [&'static str],
    code: i32,
    output: &'static str,
    pointer: &'static str,
    want: Value,
}

fn step(
    args: &'static [&'static str],
    code: i32,
    output: &'static str,
    pointer: &'static str,
    want: Value,
) -> Step {
    Step {
        args,
        code,
        output,
        pointer,
        want,
    }
}

fn steps() -> Vec<Step> {
    vec![
        step(
            &["set", "team"],
            2,
            "Please set at least one option to update",
            "/spec/description",
            Value::Null,
        ),
        step(
            &["set", "team", "--description", "Team"],
            0,
            "",
            "/spec/description",
            json!("Team"),
        ),
        step(
            &[
                "add-destination",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
            ],
            0,
            "",
            "/spec/destinations",
            json!([{"server": "https://kubernetes.default.svc", "namespace": "team-*"}]),
        ),
        step(
            &[
                "add-destination",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
            ],
            2,
            "Specified destination is already defined in project",
            "/spec/destinations/1",
            Value::Null,
        ),
        step(
            &["add-destination", "team", "in-cluster", "ops", "--name"],
            0,
            "",
            "/spec/destinations/1",
            json!({"name": "in-cluster", "namespace": "ops"}),
        ),
        step(
            &[
                "remove-destination",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
            ],
            0,
            "",
            "/spec/destinations",
            json!([{"name": "in-cluster", "namespace": "ops"}]),
        ),
        step(
            &["remove-destination", "team", "https://nowhere", "x"],
            2,
            "Specified destination does not exist in project",
            "/spec/destinations/0/name",
            json!("in-cluster"),
        ),
        step(
            &["add-source", "team", "https://git.example/apps.git"],
            0,
            "",
            "/spec/sourceRepos",
            json!(["https://git.example/apps.git"]),
        ),
        step(
            &["add-source", "team", "https://git.example/apps"],
            0,
            "Source repository 'https://git.example/apps.git' already allowed in project",
            "/spec/sourceRepos/1",
            Value::Null,
        ),
        step(
            &["remove-source", "team", "https://git.example/other"],
            0,
            "Source repository 'https://git.example/other' does not exist in project",
            "/spec/sourceRepos/0",
            json!("https://git.example/apps.git"),
        ),
        step(
            &["remove-source", "team", "https://git.example/apps.git"],
            0,
            "",
            "/spec/sourceRepos",
            Value::Null,
        ),
        step(
            &["add-source-namespace", "team", "team-apps"],
            0,
            "",
            "/spec/sourceNamespaces",
            json!(["team-apps"]),
        ),
        step(
            &["add-source-namespace", "team", "team-apps"],
            0,
            "Source namespace '*' already allowed in project",
            "/spec/sourceNamespaces/1",
            Value::Null,
        ),
        step(
            &["remove-source-namespace", "team", "team-apps"],
            0,
            "",
            "/spec/sourceNamespaces",
            Value::Null,
        ),
        step(
            &["remove-source-namespace", "team", "gone"],
            0,
            "Source namespace 'gone' does not exist in project or cannot be removed",
            "/spec/sourceNamespaces",
            Value::Null,
        ),
        step(
            &["allow-cluster-resource", "team", "", "Namespace"],
            0,
            "Group '', kind 'Namespace', and name '' is added to allowed cluster resources",
            "/spec/clusterResourceWhitelist",
            json!([{"group": "", "kind": "Namespace"}]),
        ),
        step(
            &["allow-cluster-resource", "team", "", "Namespace", "team-*"],
            0,
            "Group '', kind 'Namespace', and name 'team-*' is added to allowed cluster resources",
            "/spec/clusterResourceWhitelist/1",
            json!({"group": "", "kind": "Namespace", "name": "team-*"}),
        ),
        step(
            &["deny-cluster-resource", "team", "", "Namespace"],
            0,
            "Group '', kind 'Namespace', and name '' is removed from allowed cluster resources",
            "/spec/clusterResourceWhitelist",
            json!([{"group": "", "kind": "Namespace", "name": "team-*"}]),
        ),
        step(
            &["deny-cluster-resource", "team", "", "Namespace", "team-*"],
            0,
            "Group '', kind 'Namespace', and name 'team-*' is removed from allowed cluster resources",
            "/spec/clusterResourceWhitelist",
            Value::Null,
        ),
        step(
            &["deny-namespace-resource", "team", "", "Secret"],
            0,
            "Group '' and kind 'Secret' is added to denied namespaced resources",
            "/spec/namespaceResourceBlacklist",
            json!([{"group": "", "kind": "Secret"}]),
        ),
        step(
            &[
                "allow-namespace-resource",
                "team",
                "apps",
                "Deployment",
                "--list",
                "allow",
            ],
            0,
            "is added to allowed namespaced resources",
            "/spec/namespaceResourceWhitelist",
            json!([{"group": "apps", "kind": "Deployment"}]),
        ),
        step(
            &["allow-namespace-resource", "team", "", "Secret"],
            0,
            "is removed from denied namespaced resources",
            "/spec/namespaceResourceBlacklist",
            Value::Null,
        ),
        step(
            &[
                "add-orphaned-ignore",
                "team",
                "",
                "ConfigMap",
                "--name",
                "kube-*",
            ],
            0,
            "",
            "/spec/orphanedResources/ignore",
            json!([{"group": "", "kind": "ConfigMap", "name": "kube-*"}]),
        ),
        step(
            &[
                "add-orphaned-ignore",
                "team",
                "",
                "ConfigMap",
                "--name",
                "kube-*",
            ],
            2,
            "Specified resource is already defined in the orphaned ignore list of project",
            "/spec/orphanedResources/ignore/1",
            Value::Null,
        ),
        step(
            &[
                "remove-orphaned-ignore",
                "team",
                "",
                "ConfigMap",
                "--name",
                "kube-*",
            ],
            0,
            "",
            "/spec/orphanedResources/ignore",
            Value::Null,
        ),
        step(
            &["remove-orphaned-ignore", "team", "", "Secret"],
            2,
            "Specified resource does not exist in the orphaned ignore of project",
            "/spec/orphanedResources/ignore",
            Value::Null,
        ),
        step(
            &["add-signature-key", "team", "4AEE18F83AFDEB23"],
            0,
            "",
            "/spec/signatureKeys",
            json!([{"keyID": "4AEE18F83AFDEB23"}]),
        ),
        step(
            &["add-signature-key", "team", "4AEE18F83AFDEB23"],
            2,
            "Specified signature key is already defined in project",
            "/spec/signatureKeys/1",
            Value::Null,
        ),
        step(
            &["add-signature-key", "team", "zz"],
            2,
            "'zz' is not a valid GnuPG key ID",
            "/spec/signatureKeys/1",
            Value::Null,
        ),
        step(
            &["remove-signature-key", "team", "4AEE18F83AFDEB23"],
            0,
            "",
            "/spec/signatureKeys",
            Value::Null,
        ),
        step(
            &["remove-signature-key", "team", "4AEE18F83AFDEB23"],
            2,
            "Specified signature key is not configured for project",
            "/spec/signatureKeys",
            Value::Null,
        ),
        step(
            &[
                "add-destination-service-account",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
                "deployer",
                "--service-account-namespace",
                "ops",
            ],
            0,
            "",
            "/spec/destinationServiceAccounts",
            json!([{"server": "https://kubernetes.default.svc", "namespace": "team-*", "defaultServiceAccount": "ops:deployer"}]),
        ),
        step(
            &[
                "add-destination-service-account",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
                "deployer",
                "--service-account-namespace",
                "ops",
            ],
            2,
            "Specified destination service account is already defined in project",
            "/spec/destinationServiceAccounts/1",
            Value::Null,
        ),
        step(
            &[
                "remove-destination-service-account",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
                "ops:deployer",
            ],
            0,
            "",
            "/spec/destinationServiceAccounts",
            Value::Null,
        ),
        step(
            &[
                "remove-destination-service-account",
                "team",
                "https://kubernetes.default.svc",
                "team-*",
                "ops:deployer",
            ],
            2,
            "Specified destination service account does not exist in project",
            "/spec/destinationServiceAccounts",
            Value::Null,
        ),
        step(
            &["role", "create", "team", "ci", "--description", "CI"],
            0,
            "Role 'ci' created",
            "/spec/roles",
            json!([{"name": "ci", "description": "CI"}]),
        ),
        step(
            &["role", "create", "team", "ci"],
            0,
            "Role 'ci' already exists",
            "/spec/roles/1",
            Value::Null,
        ),
        step(
            &["role", "add-policy", "team", "ci", "-a", "sync", "-o", "*"],
            0,
            "",
            "/spec/roles/0/policies",
            json!(["p, proj:team:ci, applications, sync, team/*, allow"]),
        ),
        step(
            &["role", "add-policy", "team", "ci", "-a", "sync", "-o", "*"],
            2,
            "policy 'p, proj:team:ci, applications, sync, team/*, allow' already exists for role 'ci'",
            "/spec/roles/0/policies/1",
            Value::Null,
        ),
        step(
            &[
                "role",
                "add-policy",
                "team",
                "ci",
                "-a",
                "get",
                "-o",
                "../other/*",
            ],
            2,
            "object must be of form",
            "/spec/roles/0/policies/1",
            Value::Null,
        ),
        step(
            &["role", "add-policy", "team", "nope", "-a", "get", "-o", "*"],
            2,
            "role 'nope' does not exist in project 'team'",
            "/spec/roles/1",
            Value::Null,
        ),
        step(
            &[
                "role",
                "remove-policy",
                "team",
                "ci",
                "-a",
                "sync",
                "-o",
                "*",
            ],
            0,
            "",
            "/spec/roles/0/policies",
            Value::Null,
        ),
        step(
            &["role", "add-group", "team", "ci", "acme:ops"],
            0,
            "Group 'acme:ops' added to role 'ci'",
            "/spec/roles/0/groups",
            json!(["acme:ops"]),
        ),
        step(
            &["role", "add-group", "team", "ci", "acme:ops"],
            0,
            "Group 'acme:ops' already present in role 'ci'",
            "/spec/roles/0/groups",
            json!(["acme:ops"]),
        ),
        step(
            &["role", "remove-group", "team", "ci", "acme:ops"],
            0,
            "Group 'acme:ops' removed from role 'ci'",
            "/spec/roles/0/groups",
            Value::Null,
        ),
        step(
            &["role", "create-token", "team", "ci"],
            2,
            "create-token needs plumb server",
            "/spec/roles/0/jwtTokens",
            Value::Null,
        ),
        step(
            &[
                "windows",
                "add",
                "team",
                "--kind",
                "deny",
                "--schedule",
                "0 22 * * *",
                "--duration",
                "1h",
                "--applications",
                "web,api",
                "--manual-sync",
            ],
            0,
            "",
            "/spec/syncWindows",
            json!([{"kind": "deny", "schedule": "0 22 * * *", "duration": "1h", "timeZone": "UTC",
                     "applications": ["web", "api"], "manualSync": true}]),
        ),
        step(
            &[
                "windows",
                "add",
                "team",
                "--kind",
                "allow",
                "--schedule",
                "0 22 * *",
                "--duration",
                "1h",
                "--applications",
                "*",
            ],
            2,
            "cannot parse schedule '0 22 * *'",
            "/spec/syncWindows/1",
            Value::Null,
        ),
        step(
            &["windows", "disable-manual-sync", "team", "0"],
            0,
            "",
            "/spec/syncWindows/0/manualSync",
            Value::Null,
        ),
        step(
            &["windows", "enable-sync-overrun", "team", "0"],
            0,
            "",
            "/spec/syncWindows/0/syncOverrun",
            json!(true),
        ),
        step(
            &["windows", "disable-sync-overrun", "team", "0"],
            0,
            "",
            "/spec/syncWindows/0/syncOverrun",
            Value::Null,
        ),
        step(
            &["windows", "enable-manual-sync", "team", "7"],
            2,
            "window with id '7' not found",
            "/spec/syncWindows/1",
            Value::Null,
        ),
        step(
            &[
                "windows",
                "update",
                "team",
                "0",
                "--schedule",
                "0 6 * * *",
                "--time-zone",
                "Europe/Paris",
            ],
            0,
            "",
            "/spec/syncWindows/0/schedule",
            json!("0 6 * * *"),
        ),
        step(
            &["windows", "update", "team", "0"],
            2,
            "cannot update: require one or more of schedule",
            "/spec/syncWindows/0/timeZone",
            json!("Europe/Paris"),
        ),
        step(
            &["windows", "delete", "team", "0"],
            0,
            "",
            "/spec/syncWindows",
            Value::Null,
        ),
        step(
            &["windows", "delete", "team", "0"],
            2,
            "window with id '0' not found",
            "/spec/syncWindows",
            Value::Null,
        ),
        step(
            &["role", "delete", "team", "ci"],
            0,
            "Role 'ci' deleted",
            "/spec/roles",
            Value::Null,
        ),
    ]
}

#[test]
fn every_verb_changes_what_argo_changes() {
    let guard = env().namespace("proj-verbs");
    let ns = guard.name().to_string();
    let out = plumb(&ns, &["create", "team"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for s in steps() {
        let out = plumb(&ns, s.args);
        let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(s.code), "{:?}: {printed}", s.args);
        assert!(printed.contains(s.output), "{:?}: {printed}", s.args);
        let project = stored(&ns, "team");
        let got = project.pointer(s.pointer).cloned().unwrap_or(Value::Null);
        assert_eq!(got, s.want, "{:?}: {}", s.args, s.pointer);
    }
}

#[test]
fn role_reads_and_core_token_delete() {
    let guard = env().namespace("proj-roles");
    let ns = guard.name().to_string();
    assert_eq!(plumb(&ns, &["create", "team"]).status.code(), Some(0));
    assert_eq!(
        plumb(&ns, &["role", "create", "team", "ci"]).status.code(),
        Some(0)
    );
    let patch = json!({"spec": {"roles": [{"name": "ci", "jwtTokens": [{"iat": 1700000000, "id": "t1"}, {"iat": 1700000100, "id": "t2"}]}]}});
    let out = env()
        .kubectl()
        .args([
            "-n",
            &ns,
            "patch",
            "appprojects.argoproj.io",
            "team",
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = plumb(&ns, &["role", "list-tokens", "team", "ci", "-u"]);
    assert_eq!(
        text(&out.stdout),
        "ID    ISSUED AT     EXPIRES AT\nt1    1700000000    0\nt2    1700000100    0\n"
    );
    let out = plumb(&ns, &["role", "list", "team", "-o", "name"]);
    assert_eq!(text(&out.stdout), "ci\n");
    let out = plumb(&ns, &["role", "get", "team", "ci"]);
    assert!(text(&out.stdout).starts_with("Role Name:     ci\nDescription:   \nPolicies:\np, proj:team:ci, projects, get, team, allow\nGroups:\n<none>\nJWT Tokens:\n"), "{}", text(&out.stdout));
    let out = plumb(&ns, &["role", "delete-token", "team", "ci", "1700000000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        stored(&ns, "team").pointer("/spec/roles/0/jwtTokens"),
        Some(&json!([{"iat": 1700000100, "id": "t2"}]))
    );
    let out = plumb(&ns, &["role", "list-tokens", "team", "nope"]);
    assert!(text(&out.stderr).contains("role 'nope' does not exist in project 'team'"));
}

#[test]
fn delete_refuses_default_and_projects_in_use() {
    let guard = env().namespace("proj-delete");
    let ns = guard.name().to_string();
    assert_eq!(plumb(&ns, &["create", "team"]).status.code(), Some(0));
    let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {"project": "team", "destination": {"server": "https://kubernetes.default.svc", "namespace": ns},
                 "source": {"repoURL": "https://git.example/x.git", "path": "."}}});
    super::app::kubectl_apply(&app);
    let out = plumb(&ns, &["delete", "team"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("project is referenced by 1 applications"),
        "{}",
        text(&out.stderr)
    );
    let out = plumb(&ns, &["delete", "default"]);
    assert!(text(&out.stderr).contains("name 'default' is reserved and cannot be deleted"));
    let out = env()
        .kubectl()
        .args([
            "-n",
            &ns,
            "delete",
            "applications.argoproj.io",
            "web",
            "--wait=false",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    // The Application may carry a finalizer nobody removes here: strip it so it goes.
    let _ = env()
        .kubectl()
        .args([
            "-n",
            &ns,
            "patch",
            "applications.argoproj.io",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ])
        .output();
    let out = plumb(&ns, &["delete", "team"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = env()
        .kubectl()
        .args(["-n", &ns, "get", "appprojects.argoproj.io", "team"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
