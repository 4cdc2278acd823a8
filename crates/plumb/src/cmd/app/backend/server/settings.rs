//! What `plumb app sync/diff/manifests --local` reads from `plumb server` instead of the
//! cluster, as Argo's CLI reads it from argocd-server: the settings (`GET /api/v1/settings`,
//! turned back into the argocd-cm keys the CLI's code reads), the destination's API versions
//! (`GET /api/v1/clusters/{server}`), and the comparison of locally rendered manifests with the
//! live objects (`POST .../managed-resources`, the server's dry run, so the diff is the one
//! `--core` prints).

use anyhow::{Context, Result, bail};
use plumb_model::Settings;
use plumb_model::application::Application;
use plumb_model::settings::{
    INSTANCE_LABEL_KEY, PRUNE_MAX_DELETIONS, PRUNE_MAX_FRACTION, TRACKING_METHOD,
};
use serde_json::{Map, Value, json};

use crate::cmd::app::backend::objects::URL_KEY;
use crate::cmd::remote::{ServerClient, enc};

/// The argocd-cm keys the CLI reads, from the server's answer to `GET /api/v1/settings`
/// (Argo's field names; `pruneBrake` is Plumb's). `url` is the server the CLI talks to, Argo's
/// `appURL`.
pub(crate) fn settings_from_api(answer: &Value, base: &str) -> Settings {
    let mut data = Map::new();
    data.insert(URL_KEY.into(), json!(base));
    let text = |ptr: &str| answer.pointer(ptr).and_then(Value::as_str);
    for (ptr, key) in [
        ("/appLabelKey", INSTANCE_LABEL_KEY),
        ("/trackingMethod", TRACKING_METHOD),
        ("/kustomizeOptions/buildOptions", "kustomize.buildOptions"),
        ("/pruneBrake/maxDeletions", PRUNE_MAX_DELETIONS),
        ("/pruneBrake/maxFraction", PRUNE_MAX_FRACTION),
    ] {
        if let Some(v) = text(ptr) {
            data.insert(key.into(), json!(v));
        }
    }
    Settings::from_config_map(&json!({ "data": data }))
}

/// The server's settings as argocd-cm keys ([`settings_from_api`]).
pub(crate) async fn settings(c: &ServerClient) -> Result<Settings> {
    let answer = c
        .get("/api/v1/settings")
        .await
        .context("reading the server's settings")?;
    Ok(settings_from_api(&answer, c.base()))
}

/// The API versions of the Application's destination, from `GET /api/v1/clusters/{server}`
/// (by name with `id.type=name` when the destination names its cluster), Argo's
/// `info.apiVersions`.
pub(crate) async fn api_versions(c: &ServerClient, app: &Application) -> Result<Vec<String>> {
    let d = &app.spec.destination;
    let path = match (
        d.server.as_deref().filter(|s| !s.is_empty()),
        d.name.as_deref().filter(|n| !n.is_empty()),
    ) {
        (Some(server), _) => format!("/api/v1/clusters/{}", enc(server)),
        (None, Some(name)) => format!("/api/v1/clusters/{}?id.type=name", enc(name)),
        (None, None) => bail!("Application {} has no destination cluster", app.name()),
    };
    let answer = c
        .get(&path)
        .await
        .context("reading the destination cluster from the server")?;
    Ok(answer
        .pointer("/info/apiVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_settings_fields_become_the_argocd_cm_keys() {
        let answer = json!({
            "appLabelKey": "team.example/app",
            "trackingMethod": "label",
            "kustomizeOptions": {"buildOptions": "--enable-helm"},
            "pruneBrake": {"maxDeletions": "3", "maxFraction": "0.2"},
            "controllerNamespace": "argocd"
        });
        let s = settings_from_api(&answer, "https://plumb.example");
        assert_eq!(s.get(URL_KEY), Some("https://plumb.example"));
        assert_eq!(s.get(INSTANCE_LABEL_KEY), Some("team.example/app"));
        assert_eq!(s.get(TRACKING_METHOD), Some("label"));
        assert_eq!(s.get("kustomize.buildOptions"), Some("--enable-helm"));
        assert_eq!(s.get(PRUNE_MAX_DELETIONS), Some("3"));
        assert_eq!(s.get(PRUNE_MAX_FRACTION), Some("0.2"));
        let bare = settings_from_api(&json!({}), "https://p");
        assert_eq!(bare.get(TRACKING_METHOD), None);
    }
}
