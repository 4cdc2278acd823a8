//! Which of a project's sync windows apply to an Application (Argo's `SyncWindows.Matches`).

use plumb_model::application::{AppProject, Application, SyncWindow};

use crate::pattern;

/// Argo CD matches window selectors with `util/glob.Match` (gobwas/glob, no separators).
fn glob(pattern: &str, text: &str) -> bool {
    pattern::glob(pattern, text, &[])
}

fn set(list: &Option<Vec<String>>) -> Option<&[String]> {
    list.as_deref().filter(|l| !l.is_empty())
}

/// Whether a window's selectors name this Application: `applications` globs against its name,
/// `clusters` against its destination server or name (an empty one never matches, not even
/// `*`), `namespaces` against its destination namespace. The selectors that are set are OR'ed,
/// or AND'ed with `andOperator`; a window with none set applies to nothing.
pub fn matches(window: &SyncWindow, app: &Application) -> bool {
    let dest = &app.spec.destination;
    let server = dest.server.as_deref().unwrap_or_default();
    let name = dest.name.as_deref().unwrap_or_default();
    let namespace = dest.namespace.as_deref().unwrap_or_default();
    let checks = [
        set(&window.applications).map(|pats| pats.iter().any(|p| glob(p, app.name()))),
        set(&window.clusters).map(|pats| {
            pats.iter().any(|p| {
                (!name.is_empty() && glob(p, name)) || (!server.is_empty() && glob(p, server))
            })
        }),
        set(&window.namespaces).map(|pats| pats.iter().any(|p| glob(p, namespace))),
    ];
    let mut given = checks.into_iter().flatten().peekable();
    if given.peek().is_none() {
        return false;
    }
    if window.and_operator == Some(true) {
        given.all(|b| b)
    } else {
        given.any(|b| b)
    }
}

/// The windows of `project` that apply to `app`, in the project's order.
pub fn assigned<'a>(project: &'a AppProject, app: &Application) -> Vec<&'a SyncWindow> {
    project
        .spec
        .sync_windows
        .iter()
        .flatten()
        .filter(|w| matches(w, app))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn app(dest: serde_json::Value) -> Application {
        serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "payments", "destination": dest,
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s"}}
        }))
        .unwrap()
    }

    fn window(v: serde_json::Value) -> SyncWindow {
        let mut base = json!({"kind": "deny", "schedule": "0 2 * * *", "duration": "1h"});
        base.as_object_mut()
            .unwrap()
            .extend(v.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn selectors_are_ored_by_default() {
        let a = app(json!({"server": "https://kubernetes.default.svc", "namespace": "payments"}));
        assert!(matches(&window(json!({"applications": ["pay*"]})), &a));
        assert!(matches(&window(json!({"namespaces": ["payments"]})), &a));
        assert!(matches(
            &window(json!({"clusters": ["https://kubernetes.*"]})),
            &a
        ));
        assert!(matches(
            &window(json!({"applications": ["billing"], "namespaces": ["pay*"]})),
            &a
        ));
        assert!(!matches(
            &window(json!({"applications": ["billing"], "namespaces": ["billing"]})),
            &a
        ));
        // No selector (or only empty lists): the window applies to nothing.
        assert!(!matches(&window(json!({})), &a));
        assert!(!matches(&window(json!({"applications": []})), &a));
    }

    #[test]
    fn and_operator_needs_every_given_selector() {
        let a = app(json!({"name": "in-cluster", "namespace": "payments"}));
        let w = |v| window(v);
        assert!(matches(
            &w(json!({"applications": ["pay*"], "namespaces": ["payments"], "andOperator": true})),
            &a
        ));
        assert!(!matches(
            &w(json!({"applications": ["pay*"], "clusters": ["prod-*"], "andOperator": true})),
            &a
        ));
        assert!(matches(
            &w(json!({"clusters": ["in-cluster"], "andOperator": true})),
            &a
        ));
        assert!(!matches(&w(json!({"andOperator": true})), &a));
    }

    #[test]
    fn an_empty_destination_name_or_server_never_matches_a_cluster_glob() {
        let by_name = app(json!({"name": "in-cluster", "namespace": "payments"}));
        // `*` matches the name; the absent server does not count.
        assert!(matches(&window(json!({"clusters": ["*"]})), &by_name));
        assert!(!matches(
            &window(json!({"clusters": ["https://*"]})),
            &by_name
        ));
        let by_server = app(json!({"server": "https://10.0.0.1:6443", "namespace": "payments"}));
        assert!(!matches(
            &window(json!({"clusters": ["in-cluster"]})),
            &by_server
        ));
        // An Application without a namespace still matches `*` namespaces.
        let no_ns = app(json!({"server": "https://10.0.0.1:6443"}));
        assert!(matches(&window(json!({"namespaces": ["*"]})), &no_ns));
    }

    #[test]
    fn assigned_keeps_the_project_order() {
        let project: AppProject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "payments", "namespace": "argocd"},
            "spec": {"syncWindows": [
                {"kind": "deny", "schedule": "0 2 * * *", "duration": "1h", "applications": ["payments-*"]},
                {"kind": "allow", "schedule": "0 8 * * *", "duration": "8h", "namespaces": ["billing"]},
                {"kind": "allow", "schedule": "0 9 * * 1-5", "duration": "8h", "namespaces": ["pay*"]}
            ]}
        }))
        .unwrap();
        let a = app(json!({"server": "https://kubernetes.default.svc", "namespace": "payments"}));
        let got: Vec<_> = assigned(&project, &a)
            .iter()
            .map(|w| w.schedule.clone().unwrap())
            .collect();
        assert_eq!(got, ["0 2 * * *", "0 9 * * 1-5"]);
    }

    #[test]
    fn selectors_use_argos_full_glob_syntax() {
        let a = app(json!({"name": "in-cluster", "namespace": "payments"}));
        assert!(matches(&window(json!({"namespaces": ["pay?ents"]})), &a));
        assert!(matches(
            &window(json!({"namespaces": ["{billing,payments}"]})),
            &a
        ));
        assert!(matches(&window(json!({"namespaces": ["[op]ayments"]})), &a));
        assert!(!matches(
            &window(json!({"namespaces": ["[!p]ayments"]})),
            &a
        ));
    }
}
