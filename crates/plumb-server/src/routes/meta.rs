//! `GET /api/version` and `GET /api/v1/settings`: what the server is and how it is configured,
//! in Argo's `VersionMessage` and `Settings` shapes (the fields Plumb has). The CLI reads the
//! settings and the cluster (`routes/clusters.rs`) for a local render through the server
//! (`plumb app sync/diff/manifests --local`), as Argo's does.

use axum::Json;
use axum::extract::State;
use plumb_model::annotations::DEFAULT_INSTANCE_LABEL;
use plumb_model::settings::{INSTANCE_LABEL_KEY, TRACKING_METHOD};
use plumb_source::SourceType;
use serde_json::{Map, Value, json};

use crate::auth::middleware::Authenticated;
use crate::config::{BuildInfo, tool_version_text};
use crate::error::Result;
use crate::state::AppState;

/// `GET /api/version`: Argo's `VersionMessage` (the fields Plumb has: no Go, kubectl or
/// Jsonnet binary; `Compiler` is the whole `rustc --version`). Public, so, as Argo's
/// `Version`, the build details and tool versions are answered only to a logged-in caller (the
/// class of GHSA-pfgj-mh5m-2p48); an anonymous one gets the version, platform and compiler.
pub(crate) async fn version(
    State(s): State<AppState>,
    caller: Option<Authenticated>,
) -> Json<Value> {
    let b = &s.build;
    if caller.is_none() {
        return Json(json!({
            "Version": b.full_version(),
            "Compiler": b.rustc_version,
            "Platform": BuildInfo::platform(),
        }));
    }
    let (helm, kustomize) = s
        .tool_versions
        .get_or_init(|| {
            let renderer = s.renderer.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    (
                        tool_version_text(renderer.installed_tool_version(SourceType::Helm)),
                        tool_version_text(renderer.installed_tool_version(SourceType::Kustomize)),
                    )
                })
                .await
                .unwrap_or_else(|e| (format!("unknown ({e})"), format!("unknown ({e})")))
            }
        })
        .await
        .clone();
    Json(json!({
        "Version": b.full_version(),
        "BuildDate": b.build_date,
        "GitCommit": b.git_commit,
        "GitTreeState": b.git_tree_state,
        "Compiler": b.rustc_version,
        "Platform": BuildInfo::platform(),
        "HelmVersion": helm,
        "KustomizeVersion": kustomize,
    }))
}

/// `GET /api/v1/settings`. Public (the login page reads it), so, as Argo's `SettingsService.Get`,
/// what describes the installation (the control namespace, the resource customizations with
/// their Lua scripts and ignore rules, Plumb's prune brake) is answered only to a logged-in
/// caller (the class of GHSA-87p9-x75h-p4j2).
pub(crate) async fn settings(
    State(s): State<AppState>,
    caller: Option<Authenticated>,
) -> Result<Json<Value>> {
    let settings = s.settings().await?;
    let mut out = Map::new();
    if let Some(url) = settings.get("url").filter(|u| !u.is_empty()) {
        out.insert("url".into(), json!(url));
    }
    out.insert(
        "appLabelKey".into(),
        json!(
            settings
                .get(INSTANCE_LABEL_KEY)
                .unwrap_or(DEFAULT_INSTANCE_LABEL)
        ),
    );
    out.insert(
        "trackingMethod".into(),
        json!(settings.get(TRACKING_METHOD).unwrap_or("annotation")),
    );
    // Argo's `KustomizeOptions`: the build options argocd-cm sets (`kustomize.buildOptions`).
    let build_options = settings
        .get("kustomize.buildOptions")
        .filter(|o| !o.trim().is_empty());
    out.insert(
        "kustomizeOptions".into(),
        match build_options {
            Some(o) => json!({"buildOptions": o}),
            None => json!({}),
        },
    );
    for (key, field) in [
        ("statusbadge.enabled", "statusBadgeEnabled"),
        ("exec.enabled", "execEnabled"),
    ] {
        if settings.get(key) == Some("true") {
            out.insert(field.into(), json!(true));
        }
    }
    sso_settings(&s, &mut out).await?;
    if caller.is_some() {
        logged_in_settings(&s, &settings, &mut out);
    }
    Ok(Json(Value::Object(out)))
}

/// Argo's `dexConfig` (the connectors' names and types) and `oidcConfig` (never the client
/// secret), and Plumb's `ssoUnavailable`: why the login page cannot offer SSO now.
async fn sso_settings(s: &AppState, out: &mut Map<String, Value>) -> Result<()> {
    use crate::auth::sso::{Status, config::Mode};
    let (inputs, status) = s.sso_now().await?;
    let settings = match inputs.settings() {
        Ok(Some(settings)) => settings,
        Ok(None) => return Ok(()),
        Err(why) => {
            out.insert("ssoUnavailable".into(), json!(why));
            return Ok(());
        }
    };
    match &settings.mode {
        Mode::Dex { connectors } => {
            let list: Vec<Value> = connectors
                .iter()
                .map(|(kind, name)| json!({"name": name, "type": kind}))
                .collect();
            out.insert("dexConfig".into(), json!({"connectors": list}));
        }
        Mode::Oidc => {
            let c = &settings.config;
            let mut o = Map::new();
            o.insert("name".into(), json!(c.name));
            o.insert("issuer".into(), json!(c.issuer));
            o.insert("clientID".into(), json!(c.client_id));
            if !c.cli_client_id.is_empty() {
                o.insert("cliClientID".into(), json!(c.cli_client_id));
            }
            if !c.requested_scopes.is_empty() {
                o.insert("scopes".into(), json!(c.requested_scopes));
            }
            if !c.requested_id_token_claims.is_empty() {
                o.insert("idTokenClaims".into(), json!(c.requested_id_token_claims));
            }
            if c.enable_pkce {
                o.insert("enablePKCEAuthentication".into(), json!(true));
            }
            out.insert("oidcConfig".into(), Value::Object(o));
        }
    }
    if let Status::Unavailable(why) = status {
        out.insert("ssoUnavailable".into(), json!(why));
    }
    Ok(())
}

/// The part of the settings only a logged-in caller (or any, with `--disable-auth`) reads.
fn logged_in_settings(
    s: &AppState,
    settings: &plumb_model::Settings,
    out: &mut Map<String, Value>,
) {
    out.insert("controllerNamespace".into(), json!(s.namespace));
    let overrides = resource_overrides(settings);
    if !overrides.is_empty() {
        out.insert("resourceOverrides".into(), Value::Object(overrides));
    }
    // Plumb's: the brake on mass deletion, which `plumb app sync --prune` asks about through
    // the server as in core mode.
    let mut brake = Map::new();
    for (key, field) in [
        (plumb_model::settings::PRUNE_MAX_DELETIONS, "maxDeletions"),
        (plumb_model::settings::PRUNE_MAX_FRACTION, "maxFraction"),
    ] {
        if let Some(v) = settings.get(key) {
            brake.insert(field.into(), json!(v));
        }
    }
    if !brake.is_empty() {
        out.insert("pruneBrake".into(), Value::Object(brake));
    }
}

/// Argo's `Settings.resourceOverrides`: per `<group>/<Kind>` (`Kind` for the core group, `*/*`
/// for `.all`), the customizations of argocd-cm in the fields of Argo's `rawResourceOverride`
/// (`health.lua`, `health.lua.useOpenLibs`, `actions`, `ignoreDifferences`,
/// `ignoreResourceUpdates` as the YAML text argocd-cm holds, `knownTypeFields` as a list), from
/// the split keys (`resource.customizations.<field>.<group>_<kind>`) over the legacy
/// `resource.customizations` map. Values that do not parse are left out here: the controller
/// reports them.
fn resource_overrides(settings: &plumb_model::Settings) -> Map<String, Value> {
    use plumb_model::settings::{LEGACY_CUSTOMIZATIONS, split_group_kind_suffix};
    let mut out: Map<String, Value> = Map::new();
    let key_of = |suffix: &str| match split_group_kind_suffix(suffix) {
        (g, k) if g.is_empty() => k,
        (g, k) => format!("{g}/{k}"),
    };
    if let Some(text) = settings.get(LEGACY_CUSTOMIZATIONS)
        && let Ok(docs) = plumb_yaml::read_documents(text, LEGACY_CUSTOMIZATIONS)
        && let Some(map) = docs.into_iter().next().and_then(|d| match d.value {
            Value::Object(m) => Some(m),
            _ => None,
        })
    {
        for (gk, custom) in map {
            let Value::Object(fields) = custom else {
                continue;
            };
            let mut o = Map::new();
            for (field, v) in fields {
                let v = match (field.as_str(), v) {
                    ("knownTypeFields", v @ Value::Array(_)) => v,
                    ("health.lua.useOpenLibs", v @ Value::Bool(_)) => v,
                    (_, Value::String(t)) => Value::String(t),
                    // Structured ignore rules are shown as argocd-cm would hold them: YAML text.
                    (_, other) => Value::String(plumb_yaml::to_yaml_string(&other)),
                };
                o.insert(field, v);
            }
            out.insert(gk, Value::Object(o));
        }
    }
    let split = [
        (plumb_model::settings::HEALTH_PREFIX, "health.lua"),
        (
            plumb_model::settings::USE_OPEN_LIBS_PREFIX,
            "health.lua.useOpenLibs",
        ),
        (plumb_model::settings::ACTIONS_PREFIX, "actions"),
        (
            plumb_model::settings::IGNORE_DIFFERENCES_PREFIX,
            "ignoreDifferences",
        ),
        (
            "resource.customizations.ignoreResourceUpdates.",
            "ignoreResourceUpdates",
        ),
        (
            "resource.customizations.knownTypeFields.",
            "knownTypeFields",
        ),
    ];
    for (prefix, field) in split {
        for (suffix, text) in settings.with_prefix(prefix) {
            let value = match field {
                "health.lua.useOpenLibs" => json!(text.trim() == "true"),
                "knownTypeFields" => match plumb_yaml::read_documents(text, prefix)
                    .ok()
                    .and_then(|d| d.into_iter().next())
                {
                    Some(d) if d.value.is_array() => d.value,
                    _ => continue,
                },
                _ => json!(text),
            };
            if let Value::Object(o) = out
                .entry(key_of(suffix))
                .or_insert_with(|| Value::Object(Map::new()))
            {
                o.insert(field.into(), value);
            }
        }
    }
    out
}

/// Argo's `SettingsService.GetPlugins`: the config management plugins a render can use (Argo
/// asks its repo server for its sidecars; Plumb reads the plugin directory its renders use,
/// `plumb.plugins.dir` or `--plugin-dir`). Only for logged-in callers, as every settings detail
/// here beyond the public few.
pub(crate) async fn plugins(
    State(s): State<AppState>,
    Authenticated(_caller): Authenticated,
) -> Result<Json<Value>> {
    let engines = s.engines().await?;
    let dir = plumb_app::render_settings::plugins_dir(&engines.settings, &s.render_defaults);
    let set = match dir {
        Some(dir) => tokio::task::spawn_blocking(move || plumb_source::plugin::load(&dir))
            .await
            .map_err(|e| crate::error::Error::Internal(format!("listing plugins: {e}")))?
            .map_err(|e| crate::error::Error::Internal(format!("listing plugins: {e}")))?,
        None => Default::default(),
    };
    Ok(Json(plugins_answer(&set)))
}

/// `{"plugins":[{"name":…}]}` by name; `{}` with none (Go's `omitempty`).
fn plugins_answer(set: &plumb_source::plugin::PluginSet) -> Value {
    let mut names: Vec<&str> = set.plugins.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return json!({});
    }
    json!({"plugins": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()})
}

/// `GET /readyz`: ready when the Kubernetes API answers a list of the control namespace's
/// Applications within 5 s (the server keeps no caches of its own, so that is what it needs to
/// answer); 503 naming the failure otherwise.
pub(crate) async fn ready(State(s): State<AppState>) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let apps = s.apps();
    let params = kube::api::ListParams::default().limit(1);
    match tokio::time::timeout(std::time::Duration::from_secs(5), apps.list(&params)).await {
        Ok(Ok(_)) => (StatusCode::OK, "ok\n".to_string()).into_response(),
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: listing Applications in {}: {e}\n", s.namespace),
        )
            .into_response(),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the Kubernetes API did not answer within 5 s\n".to_string(),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GetPlugins answers with the names of the plugin directory's valid plugins, by name, and
    /// `{}` when there are none (Argo's `omitempty`); an invalid file lists nothing.
    #[test]
    fn plugins_are_listed_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plugin = |name: &str| {
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: {name}\nspec:\n  generate:\n    command: [sh, -c, cat manifests.yaml]\n"
            )
        };
        std::fs::write(dir.path().join("b.yaml"), plugin("kustomize-envsubst")).expect("write");
        std::fs::write(dir.path().join("a.yaml"), plugin("cdk8s")).expect("write");
        std::fs::write(dir.path().join("broken.yaml"), "kind: [").expect("write");
        let set = plumb_source::plugin::load(dir.path()).expect("load");
        assert_eq!(
            plugins_answer(&set),
            json!({"plugins": [{"name": "cdk8s"}, {"name": "kustomize-envsubst"}]})
        );
        assert_eq!(plugins_answer(&Default::default()), json!({}));
    }

    #[test]
    fn resource_overrides_use_argos_keys_and_fields() {
        let settings = plumb_model::Settings::from_config_map(&json!({"data": {
            "resource.customizations": "apps/Deployment:\n  health.lua: return {}\n  ignoreDifferences: |\n    jsonPointers:\n    - /spec/replicas\nConfigMap:\n  ignoreDifferences:\n    jqPathExpressions: [.data.x]\n",
            "resource.customizations.ignoreDifferences.all": "managedFieldsManagers:\n- kube-controller-manager\n",
            "resource.customizations.health.cert-manager.io_Certificate": "return {status = 'Healthy'}",
            "resource.customizations.useOpenLibs.cert-manager.io_Certificate": "true",
            "resource.customizations.knownTypeFields.argoproj.io_Rollout": "- field: spec.template.spec\n  type: core/v1/PodSpec\n",
            "resource.customizations.actions.apps_Deployment": "discovery.lua: return {}\n",
        }}));
        let o = resource_overrides(&settings);
        assert_eq!(
            o["apps/Deployment"]["ignoreDifferences"],
            "jsonPointers:\n- /spec/replicas\n"
        );
        assert_eq!(o["apps/Deployment"]["health.lua"], "return {}");
        assert_eq!(
            o["apps/Deployment"]["actions"],
            "discovery.lua: return {}\n"
        );
        assert!(
            o["ConfigMap"]["ignoreDifferences"]
                .as_str()
                .is_some_and(|t| t.contains(".data.x")),
            "{o:?}"
        );
        assert_eq!(
            o["*/*"]["ignoreDifferences"],
            "managedFieldsManagers:\n- kube-controller-manager\n"
        );
        assert_eq!(
            o["cert-manager.io/Certificate"]["health.lua.useOpenLibs"],
            true
        );
        assert_eq!(
            o["argoproj.io/Rollout"]["knownTypeFields"][0]["type"],
            "core/v1/PodSpec"
        );
    }
}
