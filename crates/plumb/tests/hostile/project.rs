//! Attacks: project bypass. Someone who may edit an Application (or push to its repository)
//! tries to deploy what the AppProject forbids through a door the project checks missed: the
//! operation's own source, a rollback to a source the project no longer permits, the Namespace
//! of `CreateNamespace` (and `managedNamespaceMetadata` on an existing namespace), a hook, a
//! Kustomize remote base rendered by `plumb app diff/manifests` or the API server, and an
//! Application created in a tenant namespace (applications in any namespace) that uses a
//! project not listing that namespace or names itself like another team's Application.
//! The real `plumb controller` and `plumb app` run against the real control plane; each attack
//! must be refused with the rule named, before anything is written.

use serde_json::json;

use crate::running::{Running, env, get_json, kubectl_apply, text, unique};

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

#[test]
fn an_operation_source_outside_source_repos_is_refused() {
    let ctl = Running::start("hostile-opsrc", &[]);
    let dest = env().namespace("hostile-opsrc-dest");
    let allowed = plumb_testenv::git::GitRepo::new();
    allowed.commit(&[("app/cm.yaml", config_map("settings"))], "allowed");
    let evil = plumb_testenv::git::GitRepo::new();
    evil.commit(
        &[("app/cm.yaml", config_map("payload"))],
        "the attacker's repository",
    );
    ctl.create_project(
        "teams",
        json!({"sourceRepos": [allowed.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    );
    let name = unique("opsrc");
    ctl.create_app(
        &name,
        json!({"project": "teams", "source": {"repoURL": allowed.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    // Before the fix the controller rendered and applied `operation.sync.source` unchecked.
    let app = ctl.sync(
        &name,
        json!({"source": {"repoURL": evil.url(), "path": "app"}}),
    );
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Error", "{st:#}");
    assert_eq!(
        st["message"],
        format!(
            "application repo {} is not permitted in project 'teams' (sourceRepos)",
            evil.url()
        )
    );
    assert!(get_json(dest.name(), "configmap", "payload").is_none());
    assert!(get_json(dest.name(), "configmap", "settings").is_none());
}

#[test]
fn a_rollback_to_a_source_the_project_no_longer_permits_is_refused() {
    let ctl = Running::start("hostile-rollback", &[]);
    let dest = env().namespace("hostile-rollback-dest");
    let old = plumb_testenv::git::GitRepo::new();
    old.commit(
        &[("app/cm.yaml", config_map("legacy"))],
        "legacy repository",
    );
    let current = plumb_testenv::git::GitRepo::new();
    current.commit(
        &[("app/cm.yaml", config_map("settings"))],
        "current repository",
    );
    ctl.create_project(
        "teams",
        json!({"sourceRepos": [old.url(), current.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    );
    let name = unique("rollback");
    let spec = |repo: &plumb_testenv::git::GitRepo| {
        json!({"project": "teams", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}})
    };
    ctl.create_app(&name, spec(&old));
    assert_eq!(
        ctl.sync(&name, json!({}))["status"]["operationState"]["phase"],
        "Succeeded"
    );
    ctl.patch_app(&name, &json!({"spec": spec(&current)}));
    assert_eq!(
        ctl.sync(&name, json!({}))["status"]["operationState"]["phase"],
        "Succeeded"
    );
    // The legacy repository is withdrawn from the project (it was compromised, say).
    ctl.create_project(
        "teams",
        json!({"sourceRepos": [current.url()], "destinations": [{"server": "*", "namespace": "*"}]}),
    );
    let out = ctl.plumb_app(&["rollback", &name, "0"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "plumb: application spec for {name} is invalid: InvalidSpecError: application repo {} is not permitted in project 'teams' (sourceRepos)\n",
            old.url()
        )
    );
    let app = ctl.app(&name).unwrap();
    assert!(app["operation"].is_null(), "nothing requested");
}

#[test]
fn create_namespace_cannot_write_a_namespace_the_project_forbids() {
    let ctl = Running::start("hostile-createns", &[]);
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings"))], "one");
    // Any namespace is a destination, but no cluster-scoped kind may be written.
    ctl.create_project(
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}),
    );
    let fresh = unique("hostile-made-ns");
    let name = unique("createns");
    ctl.create_app(
        &name,
        json!({"project": "teams", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": fresh},
               "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}),
    );
    let app = ctl.sync(&name, json!({}));
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        "one or more synchronization tasks are not valid: resource :Namespace is not permitted in project teams (clusterResourceWhitelist)"
    );
    assert!(
        get_json("", "namespace", &fresh).is_none(),
        "created before the check"
    );

    // managedNamespaceMetadata relabelling an existing namespace (here: lifting Pod Security).
    let victim = env().namespace("hostile-victim");
    let relabel = unique("relabel");
    ctl.create_app(
        &relabel,
        json!({"project": "teams", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": victim.name()},
               "syncPolicy": {"syncOptions": ["CreateNamespace=true"],
                              "managedNamespaceMetadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}}),
    );
    let app = ctl.sync(&relabel, json!({}));
    assert_eq!(app["status"]["operationState"]["phase"], "Failed");
    let ns = get_json("", "namespace", victim.name()).unwrap();
    assert!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].is_null(),
        "{:#}",
        ns["metadata"]
    );
}

#[test]
fn a_hook_of_a_forbidden_kind_is_not_created() {
    let ctl = Running::start("hostile-hook", &[]);
    let dest = env().namespace("hostile-hook-dest");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            ("app/cm.yaml", config_map("settings")),
            (
                "app/hook.yaml",
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: grab\n  annotations:\n    argocd.argoproj.io/hook: PreSync\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: admin\nsubjects:\n- kind: ServiceAccount\n  name: default\n".to_string(),
            ),
        ],
        "a hook that grants admin",
    );
    ctl.create_project(
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "namespaceResourceBlacklist": [{"group": "rbac.authorization.k8s.io", "kind": "*"}]}),
    );
    let name = unique("hook");
    ctl.create_app(
        &name,
        json!({"project": "teams", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    let app = ctl.sync(&name, json!({}));
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        "one or more synchronization tasks are not valid: resource rbac.authorization.k8s.io:RoleBinding is not permitted in project teams (namespaceResourceBlacklist: denied by 'rbac.authorization.k8s.io:*')"
    );
    assert!(get_json(dest.name(), "rolebinding", "grab").is_none());
    assert!(get_json(dest.name(), "configmap", "settings").is_none());
}

/// `operation.sync.manifests` (what `app sync --local` sends) is written by whoever may patch
/// the Application, from a tree on their machine: the project's rules judge those objects as
/// they judge rendered ones (a forbidden kind fails the sync, nothing is applied), and a
/// manifest that is not a Kubernetes object is an error naming it, with nothing applied.
#[test]
fn local_manifests_in_an_operation_obey_the_project() {
    let ctl = Running::start("hostile-localops", &[]);
    let dest = env().namespace("hostile-localops-dest");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings"))], "settings");
    ctl.create_project(
        "teams",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "namespaceResourceBlacklist": [{"group": "rbac.authorization.k8s.io", "kind": "*"}]}),
    );
    let name = unique("localops");
    ctl.create_app(
        &name,
        json!({"project": "teams", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    let grab = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                      "metadata": {"name": "grab"},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
                      "subjects": [{"kind": "ServiceAccount", "name": "default"}]});
    let local_cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "local-only"}, "data": {"k": "v"}});
    let app = ctl.sync(
        &name,
        json!({"manifests": [local_cm.to_string(), grab.to_string()]}),
    );
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        "one or more synchronization tasks are not valid: resource rbac.authorization.k8s.io:RoleBinding is not permitted in project teams (namespaceResourceBlacklist: denied by 'rbac.authorization.k8s.io:*')"
    );
    assert!(get_json(dest.name(), "rolebinding", "grab").is_none());
    assert!(get_json(dest.name(), "configmap", "local-only").is_none());

    let app = ctl.sync(
        &name,
        json!({"manifests": [local_cm.to_string(), "kind: ConfigMap\nmetadata: {name: x}\n"]}),
    );
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Error", "{st:#}");
    let message = st["message"].as_str().unwrap_or_default();
    assert!(message.contains("operation.sync.manifests[1]"), "{st:#}");
    assert!(get_json(dest.name(), "configmap", "local-only").is_none());
    assert!(get_json(dest.name(), "configmap", "settings").is_none());
}

/// `plumb app diff`, `plumb app manifests` and the API server's resource routes render with the
/// Application's AppProject, as the controller does: a Kustomize remote base the project's
/// sourceRepos do not allow is refused there too (before, they rendered with no sourceRepos and
/// any https/ssh base passed), and an Application whose project cannot be read is not rendered.
#[test]
fn kustomize_remote_bases_are_checked_against_the_project_in_cli_and_server_renders() {
    let ns = env().namespace("hostile-remote");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            (
                "k/kustomization.yaml",
                "resources:\n- cm.yaml\n- https://git.evil.example/attacker/base//deploy?ref=main\n"
                    .to_string(),
            ),
            ("k/cm.yaml", config_map("settings")),
        ],
        "a remote base outside the project",
    );
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "teams", "namespace": ns.name()},
        "spec": {"sourceRepos": [repo.url(), "https://git.acme.example/*"],
                 "destinations": [{"server": "*", "namespace": "*"}]}
    }));
    let app = |name: &str, project: &str| {
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns.name()},
            "spec": {"project": project, "source": {"repoURL": repo.url(), "path": "k"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": ns.name()}}
        }));
    };
    app("remote", "teams");
    app("orphan", "gone");
    let refusal = "remote target https://git.evil.example/attacker/base//deploy?ref=main is refused: repository https://git.evil.example/attacker/base is not permitted by the project's sourceRepos";
    let missing = "references AppProject gone, which does not exist";
    let kubeconfig = env().kubeconfig().display().to_string();

    for verb in ["diff", "manifests"] {
        for (name, expected) in [("remote", refusal), ("orphan", missing)] {
            let run = crate::repo_reads::plumb(&[
                "app",
                verb,
                name,
                "--kubeconfig",
                &kubeconfig,
                "-N",
                ns.name(),
            ]);
            assert!(
                !matches!(run.code, Some(0 | 1)),
                "plumb app {verb} {name} did not fail: {}",
                run.all()
            );
            assert!(
                run.stderr.contains(expected),
                "plumb app {verb} {name}: {}",
                run.all()
            );
            assert!(!run.stdout.contains("settings"), "{}", run.all());
        }
    }

    let server = crate::server::start_in(ns.name());
    for route in ["manifests", "managed-resources"] {
        for (name, expected) in [("remote", refusal), ("orphan", missing)] {
            let path = format!("/api/v1/applications/{name}/{route}");
            let r = crate::server::raw(
                server.addr,
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            );
            assert!(crate::server::status(&r) >= 400, "{path}: {r}");
            assert!(r.contains(expected), "{path}: {r}");
        }
    }
    assert!(get_json(ns.name(), "configmap", "settings").is_none());
}

/// A tenant who may write Applications in their own namespace (one the controller reconciles,
/// `--application-namespaces`) points one at the privileged `default` project, whose
/// `sourceNamespaces` does not list that namespace, to deploy a ClusterRole. The controller
/// refuses it with Argo's message and applies nothing, whatever the Application requests.
#[test]
fn an_application_in_a_tenant_namespace_cannot_use_a_project_that_does_not_list_it() {
    let tenant = env().namespace("hostile-tenant");
    let ctl = Running::start(
        "hostile-srcns",
        &[("ARGOCD_APPLICATION_NAMESPACES", tenant.name())],
    );
    let dest = env().namespace("hostile-srcns-dest");
    let role = unique("escalate");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            ("app/cm.yaml", config_map("payload")),
            (
                "app/role.yaml",
                format!(
                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {role}\nrules:\n- apiGroups: ['*']\n  resources: ['*']\n  verbs: ['*']\n"
                ),
            ),
        ],
        "the tenant's payload",
    );
    let name = unique("bypass");
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": tenant.name()},
        "spec": {"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}},
        "operation": {"sync": {"prune": true}, "initiatedBy": {"username": "tenant"}}
    }));
    let expected = format!(
        "application '{name}' in namespace '{}' is not permitted to use project 'default' (sourceNamespaces)",
        tenant.name()
    );
    let get_app = || get_json(tenant.name(), "applications.argoproj.io", &name);
    let start = std::time::Instant::now();
    let app = loop {
        let app = get_app().expect("the Application");
        if app["operation"].is_null() && app["status"]["operationState"]["phase"] == "Error" {
            break app;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "the requested operation was not refused: {:#}\n{}",
            app["status"],
            ctl.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert_eq!(
        app["status"]["operationState"]["message"],
        expected.as_str()
    );
    let cond = crate::running::condition(&app, "UnknownError").expect("the condition");
    assert_eq!(cond["message"], expected.as_str());
    assert_eq!(app["status"]["sync"]["status"], "Unknown");
    assert!(app["status"]["resources"].is_null(), "{:#}", app["status"]);
    assert!(get_json("", "clusterrole", &role).is_none());
    assert!(get_json(dest.name(), "configmap", "payload").is_none());
}

/// A tenant names their Application like a platform Application of the control namespace and
/// syncs an empty directory with prune, hoping to claim (and delete) the platform's objects.
/// Tracking names an Application outside the control namespace `<namespace>_<name>`, so the
/// platform's objects are not the tenant's and survive.
#[test]
fn a_tenant_application_named_like_a_platform_application_cannot_prune_its_objects() {
    let tenant = env().namespace("hostile-twin");
    let ctl = Running::start(
        "hostile-twin-ctl",
        &[("ARGOCD_APPLICATION_NAMESPACES", tenant.name())],
    );
    let dest = env().namespace("hostile-twin-dest");
    ctl.create_project(
        "tenant",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": [tenant.name()]}),
    );
    let platform = plumb_testenv::git::GitRepo::new();
    platform.commit(
        &[("app/cm.yaml", config_map("platform-settings"))],
        "platform",
    );
    ctl.create_app(
        "platform",
        json!({"project": "default", "source": {"repoURL": platform.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    let app = ctl.sync("platform", json!({}));
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    assert!(get_json(dest.name(), "configmap", "platform-settings").is_some());
    let empty = plumb_testenv::git::GitRepo::new();
    empty.commit(&[("app/README.md", "nothing here\n")], "empty");
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "platform", "namespace": tenant.name()},
        "spec": {"project": "tenant", "source": {"repoURL": empty.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {"prune": true, "allowEmpty": true}}},
        "operation": {"sync": {"prune": true}, "initiatedBy": {"username": "tenant"}}
    }));
    let start = std::time::Instant::now();
    let app = loop {
        let app = get_json(tenant.name(), "applications.argoproj.io", "platform")
            .expect("the tenant's Application");
        if app["operation"].is_null()
            && app["status"]["sync"]["status"] == "Synced"
            && app["status"]["operationState"]["phase"] == "Succeeded"
        {
            break app;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "the tenant's Application did not sync: {:#}\n{}",
            app["status"],
            ctl.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert!(
        app["status"]["resources"]
            .as_array()
            .is_none_or(|r| r.is_empty()),
        "{:#}",
        app["status"]
    );
    let cm = get_json(dest.name(), "configmap", "platform-settings")
        .expect("the platform's object survives the tenant's prune");
    assert_eq!(
        cm["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        format!("platform:/ConfigMap:{}/platform-settings", dest.name())
    );
    // The platform's Application still owns it and is in sync.
    let app = ctl.wait_app("platform", "Synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
    });
    assert_eq!(app["status"]["resources"][0]["name"], "platform-settings");
}

/// An operation's local manifests were never signed: while the project requires signed
/// revisions (`signatureKeys` or a `sourceIntegrity` policy selecting the repository), they are
/// refused with Argo's message and nothing is written, before any key is even looked at.
#[test]
fn local_manifests_are_refused_while_source_integrity_applies() {
    let ctl = Running::start("hostile-localsig", &[]);
    let dest = env().namespace("hostile-localsig-dest");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings"))], "settings");
    let local_cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "local-only"}, "data": {"k": "v"}});
    for (project, spec) in [
        (
            "legacy",
            json!({"signatureKeys": [{"keyID": "4AEE18F83AFDEB23"}]}),
        ),
        (
            "policies",
            json!({"sourceIntegrity": {"git": {"policies": [
            {"repos": [{"url": "*"}], "gpg": {"mode": "strict", "keys": ["4AEE18F83AFDEB23"]}}]}}}),
        ),
    ] {
        let mut spec = spec;
        spec["sourceRepos"] = json!(["*"]);
        spec["destinations"] = json!([{"server": "*", "namespace": "*"}]);
        ctl.create_project(project, spec);
        let name = unique(&format!("localsig-{project}"));
        ctl.create_app(
            &name,
            json!({"project": project, "source": {"repoURL": repo.url(), "path": "app"},
                   "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
        );
        let app = ctl.sync(&name, json!({"manifests": [local_cm.to_string()]}));
        let st = &app["status"]["operationState"];
        assert_eq!(st["phase"], "Error", "{project}: {st:#}");
        assert_eq!(
            st["message"],
            "ComparisonError: Cannot use local manifests when source integrity is enforced",
            "{project}"
        );
        assert!(get_json(dest.name(), "configmap", "local-only").is_none());
    }
}
