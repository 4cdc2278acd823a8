//! Project decisions on realistic AppProjects (`testdata/project-*.json`, as `kubectl get -o
//! json` returns them): Argo's `default` project, a restrictive team project, one with deny
//! patterns and a blacklist inside a wildcard whitelist, and a locked one.

use plumb_model::application::{AppProject, Application};
use serde_json::json;

use super::*;

fn load(name: &str) -> serde_json::Value {
    let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn project(name: &str) -> AppProject {
    serde_json::from_value(load(&format!("project-{name}.json"))).unwrap()
}

fn app(name: &str) -> Application {
    serde_json::from_value(load(name)).unwrap()
}

fn payments_api() -> Application {
    app("app-payments-api.json")
}

const LOCAL: &str = "https://kubernetes.default.svc";

fn local(namespace: &str) -> Destination<'_> {
    Destination {
        server: LOCAL,
        name: "in-cluster",
        namespace,
    }
}

fn prod_eu(namespace: &str) -> Destination<'_> {
    Destination {
        server: "https://prod-eu.k8s.acme.internal:6443",
        name: "prod-eu",
        namespace,
    }
}

fn messages(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(ToString::to_string).collect()
}

#[test]
fn the_default_project_permits_everything() {
    let default = project("default");
    let mut app = payments_api();
    app.spec.project = "default".into();
    for dest in [local("payments"), local("kube-system"), prod_eu("")] {
        assert_eq!(check_application(&default, &app, "argocd", &dest), vec![]);
    }
    for repo in [
        "https://github.com/argoproj/argocd-example-apps.git",
        "git@github.com:acme/deep/nested/repo.git",
        "https://charts.bitnami.com/bitnami",
    ] {
        assert!(source_permitted(&default, repo), "{repo}");
    }
    for (group, kind, namespaced) in [
        ("", "Namespace", false),
        ("rbac.authorization.k8s.io", "ClusterRole", false),
        ("apiextensions.k8s.io", "CustomResourceDefinition", false),
        ("apps", "Deployment", true),
        ("", "Secret", true),
    ] {
        assert_eq!(
            check_resource(
                &default,
                group,
                kind,
                "",
                namespaced,
                "anywhere",
                &local("x")
            ),
            Ok(())
        );
    }
}

#[test]
fn source_repos_globs_match_normalized_urls() {
    let payments = project("payments");
    // `.git`, case and the scp form do not matter; `*` does not cross `/`.
    for repo in [
        "https://git.acme.internal/apps/payments.git",
        "https://GIT.acme.internal/Apps/payments",
        "git@git.acme.internal:platform/charts.git",
        "ssh://git@git.acme.internal/platform/charts",
    ] {
        assert!(source_permitted(&payments, repo), "{repo}");
    }
    for repo in [
        "https://git.acme.internal/apps/team/payments.git",
        "https://git.acme.internal/platform/charts.git",
        "https://github.com/acme/payments.git",
    ] {
        assert!(!source_permitted(&payments, repo), "{repo}");
    }
    let mut app = payments_api();
    app.spec.source.as_mut().unwrap().repo_url = "https://github.com/acme/payments.git".into();
    let violations = check_application(&payments, &app, "argocd", &local("payments"));
    assert_eq!(
        messages(&violations),
        [
            "application repo https://github.com/acme/payments.git is not permitted in project 'payments' (sourceRepos)"
        ]
    );
    assert_eq!(violations[0].rule, Rule::SourceRepos);
}

#[test]
fn a_deny_repo_pattern_refuses_what_a_wildcard_allows() {
    let platform = project("platform");
    assert!(source_permitted(
        &platform,
        "https://github.com/acme/ingress.git"
    ));
    let mut app = payments_api();
    app.spec.project = "platform".into();
    app.spec.source.as_mut().unwrap().repo_url =
        "https://github.com/Acme/legacy-billing.git".into();
    assert_eq!(
        messages(&check_application(
            &platform,
            &app,
            "argocd",
            &local("billing")
        )),
        [
            "application repo https://github.com/Acme/legacy-billing.git is not permitted in project 'platform' (sourceRepos: denied by '!https://github.com/acme/legacy-*')"
        ]
    );
}

#[test]
fn every_source_of_a_multi_source_application_is_checked() {
    let payments = project("payments");
    let mut app = app("app-payments-multi.json");
    assert_eq!(
        check_application(&payments, &app, "argocd", &prod_eu("payments")),
        vec![]
    );
    let sources = app.spec.sources.as_mut().unwrap();
    sources.push(sources[1].clone());
    sources[1].repo_url = "https://github.com/acme/values.git".into();
    sources[2].repo_url = "https://github.com/acme/values.git".into();
    assert_eq!(
        messages(&check_application(
            &payments,
            &app,
            "argocd",
            &prod_eu("payments")
        )),
        [
            "application repo https://github.com/acme/values.git is not permitted in project 'payments' (sourceRepos)"
        ]
    );
}

#[test]
fn the_sources_of_a_requested_operation_are_checked_too() {
    // A rollback (or anyone who may edit the Application) writes `operation.sync.source(s)`:
    // the controller renders and applies those instead of the spec's, so they are checked.
    let payments = project("payments");
    let mut app = payments_api();
    let mut op_source = app.spec.source.clone().unwrap();
    op_source.repo_url = "https://github.com/evil/payload.git".into();
    let mut other = op_source.clone();
    other.repo_url = "https://github.com/evil/values.git".into();
    app.operation = Some(plumb_model::application::Operation {
        sync: Some(plumb_model::application::SyncOperation {
            source: Some(op_source),
            sources: Some(vec![other]),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        source_repos(&app)[1..],
        [
            "https://github.com/evil/payload.git",
            "https://github.com/evil/values.git"
        ]
    );
    assert_eq!(
        messages(&check_application(
            &payments,
            &app,
            "argocd",
            &prod_eu("payments")
        )),
        [
            "application repo https://github.com/evil/payload.git is not permitted in project 'payments' (sourceRepos)",
            "application repo https://github.com/evil/values.git is not permitted in project 'payments' (sourceRepos)"
        ]
    );
    // The spec's own repository used again by the operation is reported at most once.
    app.operation = Some(plumb_model::application::Operation {
        sync: Some(plumb_model::application::SyncOperation {
            source: app.spec.source.clone(),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        check_application(&payments, &app, "argocd", &prod_eu("payments")),
        vec![]
    );
}

#[test]
fn destinations_match_by_server_or_by_name() {
    let payments = project("payments");
    let app = payments_api();
    for dest in [
        local("payments"),
        local("payments-canary"),
        // The `prod-eu` entry names the cluster; its server URL is not listed anywhere.
        prod_eu("payments"),
    ] {
        assert_eq!(
            check_application(&payments, &app, "argocd", &dest),
            vec![],
            "{dest:?}"
        );
    }
    // Only by name: without a resolved name the `prod-eu` entry cannot match.
    let unresolved = Destination {
        name: "",
        ..prod_eu("payments")
    };
    assert!(!destination_permitted(&payments, &unresolved));
    let violations = check_application(&payments, &app, "argocd", &prod_eu("payments-canary"));
    assert_eq!(
        messages(&violations),
        [
            "application destination server 'https://prod-eu.k8s.acme.internal:6443' and namespace 'payments-canary' do not match any of the allowed destinations in project 'payments' (destinations)"
        ]
    );
    assert_eq!(violations[0].rule, Rule::Destinations);
}

#[test]
fn a_negated_destination_denies_even_when_another_entry_allows() {
    let platform = project("platform");
    let mut app = payments_api();
    app.spec.project = "platform".into();
    assert!(destination_permitted(&platform, &local("ingress-nginx")));
    assert_eq!(
        messages(&check_application(
            &platform,
            &app,
            "argocd",
            &local("kube-system")
        )),
        [
            "application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'platform' (destinations: denied by namespace '!kube-system')"
        ]
    );
    // `name: '!prod-*'` keeps the project off every production cluster.
    assert_eq!(
        messages(&check_application(
            &platform,
            &app,
            "argocd",
            &prod_eu("web")
        )),
        [
            "application destination server 'https://prod-eu.k8s.acme.internal:6443' and namespace 'web' do not match any of the allowed destinations in project 'platform' (destinations: denied by name '!prod-*')"
        ]
    );
    let staging = Destination {
        server: "https://staging.k8s.acme.internal:6443",
        name: "staging",
        namespace: "web",
    };
    assert!(destination_permitted(&platform, &staging));
}

#[test]
fn source_namespaces_are_checked_outside_the_control_namespace_only() {
    let payments = project("payments");
    let mut app = payments_api();
    for ns in ["argocd", "team-payments", "payments-ci-17", ""] {
        app.metadata.namespace = Some(ns.into());
        assert_eq!(
            check_application(&payments, &app, "argocd", &local("payments")),
            vec![],
            "{ns}"
        );
    }
    app.metadata.namespace = Some("payments-ci-17x".into());
    let violations = check_application(&payments, &app, "argocd", &local("payments"));
    assert_eq!(
        messages(&violations),
        [
            "application 'payments-api' in namespace 'payments-ci-17x' is not allowed to use project payments (sourceNamespaces)"
        ]
    );
    assert_eq!(violations[0].rule, Rule::SourceNamespaces);
    // The default project lists no source namespaces: only the control namespace may use it.
    assert!(!app_namespace_permitted(
        &project("default"),
        "team-payments",
        "argocd"
    ));
    assert!(app_namespace_permitted(
        &project("default"),
        "argocd",
        "argocd"
    ));
}

#[test]
fn every_violation_is_reported_in_order() {
    let payments = project("payments");
    let mut app = payments_api();
    app.metadata.namespace = Some("sandbox".into());
    app.spec.source.as_mut().unwrap().repo_url = "https://github.com/acme/payments.git".into();
    let rules: Vec<Rule> = check_application(&payments, &app, "argocd", &local("default"))
        .iter()
        .map(|v| v.rule)
        .collect();
    assert_eq!(
        rules,
        [
            Rule::SourceRepos,
            Rule::Destinations,
            Rule::SourceNamespaces
        ]
    );
}

#[test]
fn cluster_scoped_kinds_need_the_cluster_whitelist() {
    let payments = project("payments");
    assert_eq!(
        check_resource(
            &payments,
            "",
            "Namespace",
            "",
            false,
            "",
            &local("payments")
        ),
        Ok(())
    );
    let refused = check_resource(
        &payments,
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "",
        false,
        "",
        &local("payments"),
    )
    .unwrap_err();
    assert_eq!(refused.rule, Rule::ClusterResourceWhitelist);
    assert_eq!(
        refused.to_string(),
        "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project payments (clusterResourceWhitelist)"
    );
    // No clusterResourceWhitelist at all: no cluster-scoped kind.
    let locked = project("locked");
    assert_eq!(
        check_resource(&locked, "", "Namespace", "", false, "", &local("x")).map_err(|v| v.rule),
        Err(Rule::ClusterResourceWhitelist)
    );
}

#[test]
fn a_blacklist_entry_beats_a_wildcard_whitelist() {
    let platform = project("platform");
    assert_eq!(
        check_resource(
            &platform,
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "",
            false,
            "",
            &local("x")
        ),
        Ok(())
    );
    let refused = check_resource(
        &platform,
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "",
        false,
        "",
        &local("x"),
    )
    .unwrap_err();
    assert_eq!(refused.rule, Rule::ClusterResourceBlacklist);
    assert_eq!(
        refused.to_string(),
        "resource rbac.authorization.k8s.io:ClusterRoleBinding is not permitted in project platform (clusterResourceBlacklist: denied by 'rbac.authorization.k8s.io:*')"
    );
    let refused = check_resource(
        &platform,
        "apps",
        "DaemonSet",
        "",
        true,
        "monitoring",
        &local("x"),
    )
    .unwrap_err();
    assert_eq!(refused.rule, Rule::NamespaceResourceBlacklist);
    assert_eq!(
        refused.to_string(),
        "resource apps:DaemonSet is not permitted in project platform (namespaceResourceBlacklist: denied by 'apps:DaemonSet')"
    );
}

#[test]
fn namespaced_kinds_are_all_allowed_without_a_namespace_whitelist() {
    let payments = project("payments");
    for (group, kind) in [("apps", "Deployment"), ("", "Secret"), ("batch", "CronJob")] {
        assert_eq!(
            check_resource(
                &payments,
                group,
                kind,
                "",
                true,
                "payments",
                &local("payments")
            ),
            Ok(()),
            "{group}:{kind}"
        );
    }
    assert_eq!(
        check_resource(
            &payments,
            "networking.k8s.io",
            "NetworkPolicy",
            "",
            true,
            "payments",
            &local("payments")
        )
        .map_err(|v| v.rule),
        Err(Rule::NamespaceResourceBlacklist)
    );
    // With a whitelist, only what it lists.
    let platform = project("platform");
    assert_eq!(
        check_resource(
            &platform,
            "apps",
            "StatefulSet",
            "",
            true,
            "db",
            &local("db")
        ),
        Ok(())
    );
    let refused =
        check_resource(&platform, "", "Secret", "", true, "db", &local("db")).unwrap_err();
    assert_eq!(refused.rule, Rule::NamespaceResourceWhitelist);
    assert_eq!(
        refused.to_string(),
        "resource :Secret is not permitted in project platform (namespaceResourceWhitelist)"
    );
    // An explicit empty whitelist permits no namespaced kind (Argo tells `[]` from absent).
    assert_eq!(
        check_resource(
            &project("locked"),
            "",
            "ConfigMap",
            "",
            true,
            "x",
            &local("x")
        )
        .map_err(|v| v.rule),
        Err(Rule::NamespaceResourceWhitelist)
    );
}

#[test]
fn a_resource_namespace_is_checked_against_the_destinations() {
    let payments = project("payments");
    // The Application deploys to `payments`; an object naming another namespace is judged by
    // its own namespace on the same cluster.
    assert_eq!(
        check_resource(
            &payments,
            "",
            "ConfigMap",
            "",
            true,
            "payments-canary",
            &local("payments")
        ),
        Ok(())
    );
    let refused = check_resource(
        &payments,
        "",
        "ConfigMap",
        "",
        true,
        "kube-system",
        &local("payments"),
    )
    .unwrap_err();
    assert_eq!(refused.rule, Rule::Destinations);
    assert_eq!(
        refused.to_string(),
        "namespace kube-system is not permitted in project 'payments' (destinations)"
    );
    // Cluster-scoped objects have no namespace to check.
    assert_eq!(
        check_resource(
            &payments,
            "",
            "Namespace",
            "",
            false,
            "",
            &prod_eu("payments")
        ),
        Ok(())
    );
    let platform = project("platform");
    assert_eq!(
        check_resource(
            &platform,
            "",
            "ConfigMap",
            "",
            true,
            "kube-system",
            &local("web")
        )
        .unwrap_err()
        .to_string(),
        "namespace kube-system is not permitted in project 'platform' (destinations: denied by namespace '!kube-system')"
    );
}

#[test]
fn an_empty_project_permits_nothing() {
    let locked = project("locked");
    let mut app = payments_api();
    app.spec.project = "locked".into();
    assert_eq!(
        check_application(&locked, &app, "argocd", &local("payments"))
            .iter()
            .map(|v| v.rule)
            .collect::<Vec<_>>(),
        [Rule::SourceRepos, Rule::Destinations]
    );
}

#[test]
fn group_kind_patterns_are_filepath_globs() {
    let mut p = project("locked");
    p.spec.namespace_resource_whitelist = Some(vec![
        GroupKind::new("*.acme.io", "*"),
        GroupKind::new("", "Config?ap"),
    ]);
    assert!(group_kind_permitted(
        &p,
        "billing.acme.io",
        "Invoice",
        "",
        true
    ));
    assert!(group_kind_permitted(&p, "", "ConfigMap", "", true));
    assert!(!group_kind_permitted(&p, "acme.io", "Invoice", "", true));
    assert!(!group_kind_permitted(&p, "apps", "ConfigMap", "", true));
    assert!(!group_kind_permitted(
        &p,
        "billing.acme.io",
        "Invoice",
        "",
        false
    ));
}

#[test]
fn rules_print_as_their_field_names() {
    assert_eq!(
        Rule::NamespaceResourceWhitelist.to_string(),
        "namespaceResourceWhitelist"
    );
    assert_eq!(Rule::SourceNamespaces.field(), "sourceNamespaces");
}

#[test]
fn a_source_hydrator_is_refused_and_every_source_is_still_checked() {
    // The dry source names a permitted repository; the source that would be rendered names
    // another tenant's. Both are reported: the hydrator, which Plumb does not run, and the
    // repository that would really be rendered.
    let payments = project("payments");
    let mut app: Application = serde_json::from_value(serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "decoy", "namespace": "argocd"},
        "spec": {
            "project": "payments",
            "source": {"repoURL": "https://github.com/other-tenant/private.git", "path": "."},
            "sourceHydrator": {
                "drySource": {"repoURL": "https://git.acme.internal/apps/payments-api.git", "path": ".", "targetRevision": "HEAD"},
                "syncSource": {"targetBranch": "env/prod", "path": "."}
            },
            "destination": {"server": LOCAL, "namespace": "payments"}
        }
    }))
    .unwrap();
    let found = messages(&check_application(
        &payments,
        &app,
        "argocd",
        &local("payments"),
    ));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("spec.sourceHydrator is not supported by Plumb yet"),
        "{found:?}"
    );
    assert_eq!(
        found[1],
        "application repo https://github.com/other-tenant/private.git is not permitted in project 'payments' (sourceRepos)"
    );
    app.spec.source = None;
    assert_eq!(
        source_repos(&app),
        ["https://git.acme.internal/apps/payments-api.git"],
        "the dry source is still checked"
    );
}

/// Issue #27 (`sourceNamespaces` as Argo's `IsAppNamespacePermitted`): globs, `/regex/`, and
/// hostile patterns that must match nothing rather than everything.
#[test]
fn source_namespaces_patterns_and_hostile_entries() {
    let with = |list: &[&str]| -> AppProject {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"}, "spec": {"sourceNamespaces": list}
        }))
        .unwrap()
    };
    let p = with(&["team-*", "/^ci-[0-9]+$/"]);
    for ok in ["team-a", "team-", "ci-17", "argocd"] {
        assert!(app_namespace_permitted(&p, ok, "argocd"), "{ok}");
    }
    for no in ["teams", "ci-x", "xci-1", "ci-1-x", "other"] {
        assert!(!app_namespace_permitted(&p, no, "argocd"), "{no}");
    }
    // Lone slashes, an unterminated or invalid regex, an empty entry: nothing outside the
    // control namespace is permitted by them.
    let hostile = with(&["/", "//", "/(/", "", "/[/"]);
    for ns in ["team-a", "x", "argocd-2"] {
        assert!(!app_namespace_permitted(&hostile, ns, "argocd"), "{ns}");
    }
    assert!(app_namespace_permitted(&hostile, "argocd", "argocd"));
    assert!(!app_namespace_permitted(&with(&[]), "team-a", "argocd"));
    assert!(app_namespace_permitted(&with(&["*"]), "team-a", "argocd"));
}

fn spec_project(spec: serde_json::Value) -> AppProject {
    serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap()
}

/// Argo's `TestAppProject_IsGroupKindPermitted` (`pkg/apis/application/v1alpha1/types_test.go`),
/// case by case.
#[test]
fn argos_is_group_kind_name_permitted_cases() {
    let permitted = |p: &AppProject, group: &str, kind: &str, name: &str, namespaced: bool| {
        group_kind_permitted(p, group, kind, name, namespaced)
    };
    let proj = spec_project(json!({"namespaceResourceWhitelist": [],
        "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}]}));
    assert!(!permitted(&proj, "apps", "ReplicaSet", "", true));
    assert!(!permitted(&proj, "apps", "Deployment", "", true));
    let proj2 = spec_project(json!({
        "namespaceResourceWhitelist": [{"group": "apps", "kind": "ReplicaSet"}],
        "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}]}));
    assert!(permitted(&proj2, "apps", "ReplicaSet", "", true));
    assert!(!permitted(&proj2, "apps", "Action", "", true));
    let proj3 =
        spec_project(json!({"clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}]}));
    assert!(!permitted(&proj3, "", "Namespace", "", false));
    let proj4 = spec_project(json!({
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        "clusterResourceBlacklist": [{"group": "*", "kind": "*"}]}));
    assert!(!permitted(&proj4, "", "Namespace", "", false));
    assert!(permitted(&proj4, "apps", "Action", "", true));
    let proj5 = spec_project(json!({"clusterResourceWhitelist": [],
        "namespaceResourceWhitelist": [{"group": "*", "kind": "*"}]}));
    assert!(!permitted(&proj5, "", "Namespace", "", false));
    assert!(permitted(&proj5, "apps", "Action", "", true));
    let proj6 = spec_project(json!({}));
    assert!(!permitted(&proj6, "", "Namespace", "", false));
    assert!(permitted(&proj6, "apps", "Action", "", true));
    let proj7 = spec_project(json!({"clusterResourceWhitelist":
        [{"group": "", "kind": "Namespace", "name": "team1-*"}]}));
    assert!(!permitted(
        &proj7,
        "",
        "Namespace",
        "other-namespace",
        false
    ));
    assert!(permitted(&proj7, "", "Namespace", "team1-namespace", false));
}

#[test]
fn a_named_cluster_whitelist_entry_permits_only_the_names_it_matches() {
    let p = spec_project(json!({"clusterResourceWhitelist": [
        {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "app-*"},
        {"group": "", "kind": "Namespace", "name": ""}]}));
    let dest = local("x");
    let check = |kind: &str, group: &str, name: &str| {
        check_resource(&p, group, kind, name, false, "", &dest).map_err(|v| v.to_string())
    };
    assert_eq!(
        check("ClusterRole", "rbac.authorization.k8s.io", "app-reader"),
        Ok(())
    );
    assert_eq!(
        check("ClusterRole", "rbac.authorization.k8s.io", "other"),
        Err("resource rbac.authorization.k8s.io:ClusterRole is not permitted in project p (clusterResourceWhitelist)".into())
    );
    // The name pattern is Go's filepath.Match: `?`, classes, and nothing for a bad pattern.
    assert_eq!(
        check("ClusterRole", "rbac.authorization.k8s.io", "app-"),
        Ok(())
    );
    // An empty name is no name: every Namespace.
    assert_eq!(check("Namespace", "", "anything"), Ok(()));
    let q = spec_project(json!({"clusterResourceWhitelist": [
        {"group": "*", "kind": "*", "name": "a?c"},
        {"group": "*", "kind": "*", "name": "[x-z]*"},
        {"group": "*", "kind": "*", "name": "[bad"}]}));
    for (name, ok) in [
        ("abc", true),
        ("abbc", false),
        ("yes", true),
        ("[bad", false),
        ("bad", false),
    ] {
        assert_eq!(
            group_kind_permitted(&q, "", "Namespace", name, false),
            ok,
            "{name}"
        );
    }
    // Names never count for namespaced kinds (the namespaced lists are plain group/kind).
    assert!(group_kind_permitted(&q, "apps", "Deployment", "zzz", true));
}

#[test]
fn a_named_cluster_blacklist_entry_denies_only_the_names_it_matches() {
    let p = spec_project(json!({
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        "clusterResourceBlacklist": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}]}));
    let dest = local("x");
    let refused = check_resource(
        &p,
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "cluster-admin",
        false,
        "",
        &dest,
    )
    .unwrap_err();
    assert_eq!(refused.rule, Rule::ClusterResourceBlacklist);
    assert_eq!(
        refused.to_string(),
        "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project p (clusterResourceBlacklist: denied by 'rbac.authorization.k8s.io:ClusterRole' named 'cluster-admin')"
    );
    assert_eq!(
        check_resource(
            &p,
            "rbac.authorization.k8s.io",
            "ClusterRole",
            "app-reader",
            false,
            "",
            &dest
        ),
        Ok(())
    );
}

#[test]
fn a_hostile_name_pattern_is_matched_in_polynomial_time() {
    // Many stars against the longest name Kubernetes allows: memoized backtracking, no blow-up.
    let pattern = format!("{}b", "*a".repeat(200));
    let p = spec_project(json!({"clusterResourceWhitelist":
        [{"group": "*", "kind": "*", "name": pattern}]}));
    let name = "a".repeat(253);
    assert!(!group_kind_permitted(&p, "", "Namespace", &name, false));
    assert!(group_kind_permitted(
        &p,
        "",
        "Namespace",
        &format!("{}b", "a".repeat(252)),
        false
    ));
}
