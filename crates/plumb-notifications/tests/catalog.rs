//! Argo CD's notifications catalog (`notifications_catalog/install.yaml` of Argo CD v3.6.1, read
//! from the Go module cache, not copied): every trigger evaluates as Argo's expressions do on
//! realistic Applications, every template renders, and a few messages equal the text derived by
//! hand from Argo's Go templates. (The same comparison against Argo's own notifications
//! controller is the conformance harness's job.)

use std::collections::BTreeMap;
use std::path::PathBuf;

use plumb_notifications::{Config, Engine, expr_vars, template_data};
use serde_json::{Value, json};

const ARGO: &str = "github.com/argoproj/argo-cd/v3@v3.6.1";

fn catalog_path() -> PathBuf {
    let cache = std::env::var("GOMODCACHE")
        .ok()
        .or_else(|| {
            let out = std::process::Command::new("go")
                .args(["env", "GOMODCACHE"])
                .output()
                .ok()?;
            Some(String::from_utf8(out.stdout).ok()?.trim().to_string()).filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "/root/go/pkg/mod".to_string());
    PathBuf::from(cache)
        .join(ARGO)
        .join("notifications_catalog/install.yaml")
}

fn catalog() -> Engine {
    let path = catalog_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run `go mod download {ARGO}`)", path.display()));
    let cm: Value = serde_saphyr::from_str(&text).expect("install.yaml");
    let data: BTreeMap<String, String> = serde_json::from_value(cm["data"].clone()).expect("data");
    let mut data = data;
    data.insert(
        "context".into(),
        "argocdUrl: https://argocd.example.com\n".into(),
    );
    let (cfg, errors) = Config::parse(&data, &BTreeMap::new());
    assert!(errors.is_empty(), "{errors:?}");
    let engine = Engine::new(cfg, Vec::new());
    assert!(engine.errors.is_empty(), "{:?}", engine.errors);
    engine
}

fn app(status: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "guestbook", "namespace": "argocd", "creationTimestamp": "2024-05-01T09:00:00Z"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://github.com/argoproj/argocd-example-apps.git", "path": "guestbook", "targetRevision": "HEAD"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"}
        },
        "status": status,
    })
}

fn op(phase: &str, started: &str, finished: Option<&str>) -> Value {
    let mut o = json!({
        "phase": phase, "startedAt": started, "message": "one or more objects failed to apply",
        "operation": {"sync": {"revision": "4a5b6c7"}},
        "syncResult": {"revision": "4a5b6c7d8e9f00112233445566778899aabbccdd"}
    });
    if let Some(f) = finished {
        o["finishedAt"] = json!(f);
    }
    o
}

/// The fixtures, each with the triggers Argo's expressions make true on it (worked out by hand
/// from the `when`s of install.yaml).
fn fixtures() -> Vec<(&'static str, Value, Vec<&'static str>)> {
    let healthy = |since: &str| json!({"status": "Healthy", "lastTransitionTime": since});
    vec![
        (
            "synced, healthy a minute into the sync (deployed)",
            app(
                json!({"sync": {"status": "Synced", "revision": "4a5b6c7"}, "health": healthy("2024-05-01T10:02:00Z"),
                "operationState": op("Succeeded", "2024-05-01T10:01:00Z", Some("2024-05-01T10:02:30Z"))}),
            ),
            vec!["on-created", "on-deployed", "on-sync-succeeded"],
        ),
        (
            "synced, healthy since before the sync (deployed)",
            app(
                json!({"sync": {"status": "Synced"}, "health": healthy("2024-05-01T08:00:00Z"),
                "operationState": op("Succeeded", "2024-05-01T10:01:00Z", Some("2024-05-01T10:02:30Z"))}),
            ),
            vec!["on-created", "on-deployed", "on-sync-succeeded"],
        ),
        (
            "synced, healthy early in the sync but more than a minute before it ended",
            app(
                json!({"sync": {"status": "Synced"}, "health": healthy("2024-05-01T10:01:10Z"),
                "operationState": op("Succeeded", "2024-05-01T10:01:00Z", Some("2024-05-01T10:05:00Z"))}),
            ),
            vec!["on-created", "on-sync-succeeded"],
        ),
        (
            "sync failed",
            app(
                json!({"sync": {"status": "OutOfSync"}, "health": {"status": "Progressing"},
                "operationState": op("Failed", "2024-05-01T10:01:00Z", Some("2024-05-01T10:01:30Z"))}),
            ),
            vec!["on-created", "on-sync-failed"],
        ),
        (
            "sync errored",
            app(
                json!({"sync": {"status": "OutOfSync"}, "health": {"status": "Missing"},
                "operationState": op("Error", "2024-05-01T10:01:00Z", Some("2024-05-01T10:01:30Z"))}),
            ),
            vec!["on-created", "on-sync-failed"],
        ),
        (
            "syncing",
            app(
                json!({"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"},
                "operationState": op("Running", "2024-05-01T10:01:00Z", None)}),
            ),
            vec!["on-created", "on-sync-running"],
        ),
        (
            "degraded, never synced",
            app(json!({"sync": {"status": "Synced"}, "health": {"status": "Degraded"}})),
            vec!["on-created", "on-health-degraded"],
        ),
        (
            "unknown sync status",
            app(
                json!({"sync": {"status": "Unknown"}, "health": {"status": "Healthy"},
                "conditions": [{"type": "ComparisonError", "message": "repository not accessible"}]}),
            ),
            vec!["on-created", "on-sync-status-unknown"],
        ),
        (
            "being deleted",
            {
                let mut a =
                    app(json!({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}}));
                a["metadata"]["deletionTimestamp"] = json!("2024-05-01T11:00:00Z");
                a
            },
            vec!["on-created", "on-deleted"],
        ),
    ]
}

#[test]
fn every_trigger_evaluates_as_argo() {
    let engine = catalog();
    let names: Vec<&str> = engine.triggers.names().collect();
    assert_eq!(
        names,
        [
            "on-created",
            "on-deleted",
            "on-deployed",
            "on-health-degraded",
            "on-sync-failed",
            "on-sync-running",
            "on-sync-status-unknown",
            "on-sync-succeeded"
        ]
    );
    for (what, app, expected) in fixtures() {
        let vars = expr_vars(&app, &json!({}), &BTreeMap::new());
        let mut fired = Vec::new();
        for name in &names {
            let results = engine.triggers.run(name, &vars).expect("configured");
            for r in &results {
                assert_eq!(r.error, None, "{what}: {name}");
                // Catalog triggers have one condition each, keyed [0].
                assert!(r.key.starts_with("[0]."), "{}", r.key);
                if r.triggered {
                    fired.push(*name);
                    let once_per = if *name == "on-created" || *name == "on-deleted" {
                        "guestbook"
                    } else if app["status"].get("operationState").is_some() {
                        "4a5b6c7d8e9f00112233445566778899aabbccdd"
                    } else {
                        // Go's %v of a nil interface.
                        "<nil>"
                    };
                    assert_eq!(r.once_per, once_per, "{what}: {name}");
                }
            }
        }
        assert_eq!(fired, expected, "{what}");
    }
}

#[test]
fn every_template_renders() {
    let engine = catalog();
    let names: Vec<String> = engine.templates.names().map(str::to_string).collect();
    assert_eq!(names.len(), 8);
    let ctx = engine.config.context.clone();
    for (what, app, _) in fixtures() {
        for service in ["webhook", "slack"] {
            let data = template_data(&app, &json!({}), &ctx, &BTreeMap::new(), service, "chan");
            for name in &names {
                let n = engine
                    .templates
                    .render(std::slice::from_ref(name), &data)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    n.message.contains("guestbook"),
                    "{what}: {name}: {}",
                    n.message
                );
                if let Some(a) = n.services.get("slack").and_then(|s| s.get("attachments")) {
                    let a = a.as_str().expect("attachments is text");
                    serde_json::from_str::<Value>(a).unwrap_or_else(|e| {
                        panic!("{what}: {name}: attachments are not JSON ({e}): {a}")
                    });
                }
            }
        }
    }
}

#[test]
fn messages_equal_the_text_derived_from_argos_templates() {
    let engine = catalog();
    let ctx = engine.config.context.clone();
    let fx = fixtures();
    let render = |app: &Value, template: &str, service: &str| {
        let data = template_data(app, &json!({}), &ctx, &BTreeMap::new(), service, "");
        engine
            .templates
            .render(&[template.to_string()], &data)
            .expect("renders")
    };
    let n = render(&fx[0].1, "app-sync-succeeded", "webhook");
    assert_eq!(
        n.message,
        " Application guestbook has been successfully synced at 2024-05-01T10:02:30Z.\n\
         Sync operation details are available at: https://argocd.example.com/applications/guestbook?operation=true .\n"
    );
    assert_eq!(
        n.services["email"]["subject"],
        "Application guestbook has been successfully synced."
    );
    let n = render(&fx[0].1, "app-sync-succeeded", "slack");
    assert!(
        n.message
            .starts_with(":white_check_mark: Application guestbook")
    );
    let n = render(&fx[3].1, "app-sync-failed", "webhook");
    assert_eq!(
        n.message,
        "  The sync operation of application guestbook has failed at 2024-05-01T10:01:30Z with the following error: one or more objects failed to apply\n\
         Sync operation details are available at: https://argocd.example.com/applications/guestbook?operation=true .\n"
    );
    // {{if ne .serviceType "slack"}} then a range over the conditions, each block's newlines kept.
    let n = render(&fx[7].1, "app-sync-status-unknown", "webhook");
    assert_eq!(
        n.message,
        " Application guestbook sync is 'Unknown'.\n\
         Application details: https://argocd.example.com/applications/guestbook.\n\
         \n\n    * repository not accessible\n\n\n"
    );
    let n = render(&fx[0].1, "app-deployed", "slack");
    let attachments: Value =
        serde_json::from_str(n.services["slack"]["attachments"].as_str().expect("text"))
            .expect("JSON");
    assert_eq!(attachments[0]["title"], "guestbook");
    assert_eq!(
        attachments[0]["title_link"],
        "https://argocd.example.com/applications/guestbook"
    );
    assert_eq!(attachments[0]["fields"][1]["title"], "Repository");
    assert_eq!(
        attachments[0]["fields"][1]["value"],
        ":arrow_heading_up: https://github.com/argoproj/argocd-example-apps.git"
    );
    assert_eq!(attachments[0]["fields"][2]["value"], "4a5b6c7");
}
