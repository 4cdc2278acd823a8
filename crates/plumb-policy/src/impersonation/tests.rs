//! Argo CD's `TestDeriveServiceAccountToImpersonate`, `TestDeriveServiceAccountMatchingNamespaces`
//! and `TestDeriveServiceAccountMatchingServers` (v3.6.1), then Plumb's stricter names.

use plumb_model::Settings;
use plumb_model::application::AppProject;
use serde_json::json;

use super::*;

const SERVER: &str = "https://kubernetes.svc.local";

fn project(entries: serde_json::Value) -> AppProject {
    serde_json::from_value(json!({
        "metadata": {"name": "test-proj"},
        "spec": {"destinationServiceAccounts": entries}
    }))
    .expect("project")
}

fn entry(server: &str, namespace: &str, sa: &str) -> serde_json::Value {
    json!({"server": server, "namespace": namespace, "defaultServiceAccount": sa})
}

fn derived(
    entries: serde_json::Value,
    dest_ns: &str,
    server: &str,
) -> Result<Option<String>, DeriveError> {
    derive(&project(entries), "argocd-ns", dest_ns, server)
}

fn sa(user: &str) -> Result<Option<String>, DeriveError> {
    Ok(Some(format!("system:serviceaccount:{user}")))
}

#[test]
fn no_entries_match_nothing() {
    assert_eq!(derived(json!([]), "testns", SERVER), Ok(None));
    let none: AppProject =
        serde_json::from_value(json!({"metadata": {}, "spec": {}})).expect("project");
    assert_eq!(derive(&none, "argocd-ns", "testns", SERVER), Ok(None));
}

#[test]
fn exact_and_only_matches() {
    assert_eq!(
        derived(
            json!([entry(SERVER, "testns", "test-sa")]),
            "testns",
            SERVER
        ),
        sa("testns:test-sa")
    );
    let many = json!([
        entry(SERVER, "guestbook", "guestbook-sa"),
        entry(SERVER, "guestbook-test", "guestbook-test-sa"),
        entry(SERVER, "default", "default-sa"),
        entry(SERVER, "testns", "test-sa"),
    ]);
    assert_eq!(derived(many, "testns", SERVER), sa("testns:test-sa"));
    assert_eq!(
        derived(json!([entry(SERVER, "other", "x")]), "testns", SERVER),
        Ok(None)
    );
    assert_eq!(
        derived(
            json!([entry("https://elsewhere", "*", "x")]),
            "testns",
            SERVER
        ),
        Ok(None)
    );
}

#[test]
fn the_first_match_wins_globs_included() {
    let same = json!([
        entry(SERVER, "testns", "test-sa"),
        entry(SERVER, "testns", "test-sa-2"),
        entry(SERVER, "guestbook", "guestbook-sa"),
    ]);
    assert_eq!(derived(same, "testns", SERVER), sa("testns:test-sa"));
    let globbed = json!([
        entry(SERVER, "test*", "test-sa"),
        entry(SERVER, "testns", "test-sa-2"),
    ]);
    assert_eq!(derived(globbed, "testns", SERVER), sa("testns:test-sa"));
    let servers = json!([
        entry("https://kubernetes.svc.*", "testns", "glob-sa"),
        entry(SERVER, "testns", "exact-sa"),
    ]);
    assert_eq!(derived(servers, "testns", SERVER), sa("testns:glob-sa"));
    let catch_all = json!([entry("*", "*", "default-sa")]);
    assert_eq!(
        derived(catch_all, "testns", SERVER),
        sa("testns:default-sa")
    );
    let alternatives = json!([entry(
        "https://{a,kubernetes}.svc.local",
        "test[n-p]s",
        "alt-sa"
    )]);
    assert_eq!(derived(alternatives, "testns", SERVER), sa("testns:alt-sa"));
}

#[test]
fn a_namespaced_account_keeps_its_namespace() {
    let entries = json!([entry(SERVER, "testns", "myns:test-sa")]);
    assert_eq!(derived(entries, "testns", SERVER), sa("myns:test-sa"));
}

#[test]
fn without_a_destination_namespace_the_applications_namespace_is_used() {
    let entries = json!([entry("*", "", "test-sa")]);
    assert_eq!(
        derive(&project(entries.clone()), "app-ns", "", SERVER),
        sa("app-ns:test-sa")
    );
    // An absent `namespace` is the empty pattern: it matches only an empty destination namespace.
    let absent = json!([{"server": "*", "defaultServiceAccount": "test-sa"}]);
    assert_eq!(
        derive(&project(absent.clone()), "app-ns", "", SERVER),
        sa("app-ns:test-sa")
    );
    assert_eq!(
        derive(&project(absent), "app-ns", "testns", SERVER),
        Ok(None)
    );
}

#[test]
fn malformed_globs_are_errors_naming_the_field() {
    let bad_ns = derived(json!([entry(SERVER, "e[[a*", "test-sa")]), "testns", SERVER)
        .expect_err("namespace glob");
    let text = bad_ns.to_string();
    assert!(
        text.starts_with("invalid glob pattern for destination namespace"),
        "{text}"
    );
    assert!(
        text.contains("spec.destinationServiceAccounts[0].namespace"),
        "{text}"
    );
    let bad_server =
        derived(json!([entry("[", "testns", "test-sa")]), "testns", SERVER).expect_err("server");
    let text = bad_server.to_string();
    assert!(
        text.starts_with("invalid glob pattern for destination server"),
        "{text}"
    );
    assert!(
        text.contains("spec.destinationServiceAccounts[0].server"),
        "{text}"
    );
    // Argo stops at the first entry whose pattern does not compile, even before a match.
    let later = json!([
        entry(SERVER, "other", "a"),
        entry(SERVER, "[", "b"),
        entry("*", "*", "c")
    ]);
    assert!(matches!(
        derived(later, "testns", SERVER),
        Err(DeriveError::NamespaceGlob { index: 1, .. })
    ));
}

#[test]
fn blank_or_disallowed_names_use_argos_message() {
    for name in ["", "   ", "sa*", "ns/sa", "sa!", "{sa}", "a\\b"] {
        let err = derived(json!([entry("*", "*", name)]), "testns", SERVER).expect_err(name);
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "default service account contains invalid chars '{name}'"
            )),
            "{text}"
        );
        assert!(text.contains("spec.destinationServiceAccounts[0].defaultServiceAccount"));
    }
}

#[test]
fn names_no_service_account_could_have_are_refused() {
    for name in [
        "my sa",
        " sa",
        "a:b:c",
        ":sa",
        "ns:",
        "Deployer",
        "ns: sa",
        "-sa",
        "sa\u{0}",
        &"a".repeat(254),
    ] {
        let err = derived(json!([entry("*", "*", name)]), "testns", SERVER).expect_err(name);
        assert!(
            matches!(err, DeriveError::NotAServiceAccount { index: 0, .. }),
            "{name:?}: {err}"
        );
        assert!(
            err.to_string()
                .contains("spec.destinationServiceAccounts[0].defaultServiceAccount"),
            "{err}"
        );
    }
    assert_eq!(
        derived(json!([entry("*", "*", "deploy.v1")]), "testns", SERVER),
        sa("testns:deploy.v1")
    );
}

#[test]
fn the_operation_messages_are_argos() {
    let on = Mode::On { enforced: true };
    let p = project(json!([entry(SERVER, "allowed", "deployer")]));
    assert_eq!(
        sync_identity(on, &p, "argocd", "refused", SERVER),
        Err(format!(
            "no matching service account found for destination server {SERVER} and namespace refused"
        ))
    );
    assert_eq!(
        sync_identity(on, &p, "argocd", "allowed", SERVER),
        Ok(Some("system:serviceaccount:allowed:deployer".into()))
    );
    let lax = Mode::On { enforced: false };
    assert_eq!(
        sync_identity(lax, &p, "argocd", "refused", SERVER),
        Ok(None)
    );
    assert_eq!(
        sync_identity(Mode::Off, &p, "argocd", "allowed", SERVER),
        Ok(None)
    );
    let blank = project(json!([entry("*", "*", "")]));
    let msg = sync_identity(on, &blank, "argocd", "x", SERVER).expect_err("blank");
    assert!(
        msg.starts_with("failed to derive service account to impersonate: default service account contains invalid chars ''"),
        "{msg}"
    );
}

#[test]
fn the_mode_follows_argocd_cm() {
    let settings = |pairs: &[(&str, &str)]| {
        Settings::from_data(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        )
    };
    assert_eq!(Mode::of(&settings(&[])), Mode::Off);
    assert_eq!(
        Mode::of(&settings(&[(IMPERSONATION_ENABLED, "false")])),
        Mode::Off
    );
    assert_eq!(
        Mode::of(&settings(&[(IMPERSONATION_ENABLED, "yes")])),
        Mode::Off
    );
    assert_eq!(
        Mode::of(&settings(&[(IMPERSONATION_ENABLED, "true")])),
        Mode::On { enforced: true }
    );
    assert_eq!(
        Mode::of(&settings(&[(IMPERSONATION_ENABLED, " true\n")])),
        Mode::On { enforced: true }
    );
    assert_eq!(
        Mode::of(&settings(&[
            (IMPERSONATION_ENABLED, "true"),
            (IMPERSONATION_ENFORCED, "false")
        ])),
        Mode::On { enforced: false }
    );
    assert_eq!(
        Mode::of(&settings(&[
            (IMPERSONATION_ENABLED, "true"),
            (IMPERSONATION_ENFORCED, "no")
        ])),
        Mode::On { enforced: true }
    );
}

#[test]
fn a_pathological_glob_is_judged_in_bounded_time() {
    let pattern = "*a".repeat(20) + "*b";
    let namespace = "a".repeat(63);
    let entries = json!([entry(&pattern, &pattern, "sa"), entry("*", "*", "fallback")]);
    assert_eq!(
        derived(entries, &namespace, &"a".repeat(200)),
        sa(&format!("{namespace}:fallback"))
    );
}
