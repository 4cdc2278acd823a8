//! Snapshot tests of the `plumb appset` layouts, from ApplicationSets as the API server returns
//! them (`tests/fixtures/appset-*.json`).

use jiff::tz::TimeZone;
use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;
use serde_json::json;

use super::preview::{GenerateFormat, render_generated};
use super::read::{GetFormat, ListFormat, render_get, render_list};
use crate::output::{Clock, appset};
use crate::snapshot::{check, fixture};

fn clock() -> Clock {
    Clock {
        tz: TimeZone::UTC,
        now: "2026-07-20T10:20:00Z".parse().unwrap(),
    }
}

fn sets() -> Vec<ApplicationSet> {
    vec![
        fixture("appset-addons.json"),
        fixture("appset-guestbook.json"),
    ]
}

#[test]
fn list_layouts() {
    check(
        "appset-list-wide.txt",
        &render_list(&sets(), ListFormat::Wide, &clock()).unwrap(),
    );
    check(
        "appset-list-name.txt",
        &render_list(&sets(), ListFormat::Name, &clock()).unwrap(),
    );
}

#[test]
fn get_layouts() {
    let mut out = render_get(&sets()[1], &[], GetFormat::Wide, &clock()).unwrap();
    out.push_str("---\n");
    let held = [
        "cert-manager".to_string(),
        "external-dns".into(),
        "ingress-nginx".into(),
    ];
    out.push_str(&render_get(&sets()[0], &held, GetFormat::Wide, &clock()).unwrap());
    check("appset-get.txt", &out);
}

fn app(name: &str, path: &str) -> Application {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://github.com/argoproj/argo-cd.git", "targetRevision": "HEAD", "path": path},
                 "destination": {"server": "https://1.2.3.4", "namespace": "guestbook"}}
    }))
    .unwrap()
}

#[test]
fn generate_layouts() {
    let apps = [
        app("engineering-dev-guestbook", "guestbook/engineering-dev"),
        app("engineering-prod-guestbook", "guestbook/engineering-prod"),
    ];
    check(
        "appset-generate-wide.txt",
        &render_generated(&apps, GenerateFormat::Wide).unwrap(),
    );
    check(
        "appset-generate-yaml.txt",
        &render_generated(&apps, GenerateFormat::Yaml).unwrap(),
    );
}

#[test]
fn diff_layout() {
    let set: ApplicationSet = fixture("appset-guestbook.json");
    let generated = [
        app("engineering-dev-guestbook", "guestbook/dev-v2"),
        app("engineering-qa-guestbook", "guestbook/engineering-qa"),
    ];
    let mut live_dev = serde_json::to_value(app(
        "engineering-dev-guestbook",
        "guestbook/engineering-dev",
    ))
    .unwrap();
    live_dev["status"] = json!({"sync": {"status": "Synced"}});
    let live_prod = serde_json::to_value(app(
        "engineering-prod-guestbook",
        "guestbook/engineering-prod",
    ))
    .unwrap();
    let diff = plumb_appset::api::fleet_diff(&set, &generated, &[live_dev, live_prod]);
    check("appset-diff.txt", &appset::fleet_diff(&diff, "argocd"));
}
