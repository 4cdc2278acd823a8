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

/// The fixtures (`fixtures/catalog-apps.json`), each with the triggers Argo's expressions make
/// true on it: worked out by hand from the `when`s of install.yaml, and what the real
/// notifications-engine says ([`the_real_notifications_engine_agrees`]).
fn fixtures() -> Vec<(String, Value, Vec<String>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/catalog-apps.json"
    );
    let text = std::fs::read_to_string(path).expect("fixtures");
    let items: Vec<Value> = serde_json::from_str(&text).expect("fixtures JSON");
    items
        .into_iter()
        .map(|f| {
            let fired = serde_json::from_value(f["fired"].clone()).expect("fired");
            (
                f["what"].as_str().unwrap_or_default().to_string(),
                f["app"].clone(),
                fired,
            )
        })
        .collect()
}

/// What Plumb fires on each fixture: "index trigger conditionKey oncePer" lines.
fn plumb_fired(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    let names: Vec<&str> = engine.triggers.names().collect();
    for (i, (_, app, _)) in fixtures().iter().enumerate() {
        let vars = expr_vars(app, &json!({}), &BTreeMap::new());
        for name in &names {
            for r in engine.triggers.run(name, &vars).expect("configured") {
                if r.triggered {
                    out.push(format!("{i} {name} {} {}", r.key, r.once_per));
                }
            }
        }
    }
    out
}

#[test]
fn the_real_notifications_engine_agrees() {
    // tests/go-engine runs notifications-engine's own pkg/triggers (Go's expr) on the same
    // catalog and fixtures; Go modules come from the module cache or the Go proxy.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/go-engine");
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/catalog-apps.json"
    );
    let out = std::process::Command::new("go")
        .args(["run", "."])
        .arg(catalog_path())
        .arg(fixtures)
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("go (Go 1.24 or later) on PATH");
    assert!(
        out.status.success(),
        "go run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let go: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(plumb_fired(&catalog()), go);
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
        let what = what.as_str();
        let vars = expr_vars(&app, &json!({}), &BTreeMap::new());
        let mut fired = Vec::new();
        for name in &names {
            let results = engine.triggers.run(name, &vars).expect("configured");
            for r in &results {
                assert_eq!(r.error, None, "{what}: {name}");
                // Catalog triggers have one condition each, keyed [0].
                assert!(r.key.starts_with("[0]."), "{}", r.key);
                if r.triggered {
                    fired.push(name.to_string());
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
        let what = what.as_str();
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
