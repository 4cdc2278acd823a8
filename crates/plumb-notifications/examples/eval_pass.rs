//! The budget: 1,000 Applications with 3 subscriptions each, one full evaluation pass
//! (Argo's catalog triggers), CPU time measured. `cargo run -p plumb-notifications --example
//! eval_pass` (reads the catalog from the Go module cache; numbers go to docs/performance.md).

use std::collections::BTreeMap;

use plumb_notifications::{Config, Engine};
use serde_json::{Value, json};

fn main() {
    let cache = std::env::var("GOMODCACHE").unwrap_or_else(|_| "/root/go/pkg/mod".into());
    let path =
        format!("{cache}/github.com/argoproj/argo-cd/v3@v3.6.1/notifications_catalog/install.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cm: Value = serde_saphyr::from_str(&text).expect("install.yaml");
    let mut data: BTreeMap<String, String> =
        serde_json::from_value(cm["data"].clone()).expect("data");
    data.insert(
        "service.webhook.hook".into(),
        "url: http://127.0.0.1:9/\n".into(),
    );
    let (cfg, _) = Config::parse(&data, &BTreeMap::new());
    let engine = Engine::new(cfg, Vec::new());
    let apps: Vec<Value> = (0..1000)
        .map(|i| {
            json!({
                "metadata": {"name": format!("app-{i}"), "namespace": "argocd", "annotations": {
                    "notifications.argoproj.io/subscribe.on-sync-succeeded.hook": "a",
                    "notifications.argoproj.io/subscribe.on-sync-failed.hook": "a",
                    "notifications.argoproj.io/subscribe.on-deployed.hook": "a",
                    "notified.notifications.argoproj.io": "{}"}},
                "spec": {"project": "default", "source": {"repoURL": "https://github.com/o/r.git", "path": format!("apps/{i}")},
                    "destination": {"server": "https://kubernetes.default.svc", "namespace": format!("ns-{i}")}},
                "status": {"sync": {"status": "Synced", "revision": "abc"},
                    "health": {"status": "Healthy", "lastTransitionTime": "2024-05-01T10:02:00Z"},
                    "operationState": {"phase": "Succeeded", "startedAt": "2024-05-01T10:01:00Z",
                        "finishedAt": "2024-05-01T10:02:30Z", "syncResult": {"revision": "abc"}},
                    "resources": (0..20).map(|r| json!({"kind": "Deployment", "name": format!("d{r}"), "status": "Synced"})).collect::<Vec<_>>()}
            })
        })
        .collect();
    for round in 0..3 {
        let cpu = cpu_time::ProcessTime::now();
        let wall = std::time::Instant::now();
        let mut fired = 0;
        for app in &apps {
            let plan = engine.plan(app, None);
            fired += plan
                .triggers
                .iter()
                .flat_map(|t| &t.1)
                .filter(|r| r.triggered)
                .count();
        }
        println!(
            "pass {round}: 1000 apps x 3 subscriptions, {fired} conditions true: {:?} CPU, {:?} wall",
            cpu.elapsed(),
            wall.elapsed()
        );
    }
}
