//! `POST /api/webhook`: Git push notifications from GitHub, GitLab, Bitbucket Cloud and Server,
//! Gogs/Gitea and Azure DevOps, as Argo CD's server takes them. The sender is recognised by its
//! headers, its proof checked against its secret in `argocd-secret` ([`verify`]), the push read
//! ([`push`]), and every Application the push concerns, in the control namespace and every
//! namespace the server serves (`--application-namespaces`),
//! ([`targeting`]) gets `argocd.argoproj.io/refresh: normal`, which the controller acts on at
//! once instead of at the next `timeout.reconciliation`.
//!
//! Not authenticated by API token: webhooks prove themselves by their signature, as in Argo CD.
//! The answer says nothing about which Applications exist.

mod push;
mod targeting;
mod verify;

pub use verify::sign_sha256_hex;

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::state::AppState;
use push::Event;
use verify::{Provider, Secrets};

/// The Secret holding the webhook secrets.
const SECRET: &str = "argocd-secret";
/// Argo's `webhook.maxPayloadSizeMB` default.
const DEFAULT_MAX_PAYLOAD_MB: u64 = 50;
/// The refresh annotation and the kind of refresh a push asks for (Argo's `RefreshTypeNormal`).
const REFRESH: &str = "argocd.argoproj.io/refresh";

fn text(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message.into(),
    )
        .into_response()
}

/// `POST /api/webhook`.
pub(crate) async fn receive(State(s): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let Some(provider) = Provider::detect(&headers) else {
        tracing::debug!("ignoring unknown webhook event");
        return text(StatusCode::BAD_REQUEST, "Unknown webhook event");
    };
    let settings = match s.settings().await {
        Ok(settings) => settings,
        Err(e) => return e.into_response(),
    };
    let max_mb = max_payload_mb(&s, &settings);
    let body = match read_body(provider, &headers, body, max_mb).await {
        Ok(body) => body,
        Err(too_large) => return too_large,
    };
    let secrets = match read_secrets(&s).await {
        Ok(secrets) => secrets,
        Err(response) => return response,
    };
    if let Err(refused) = verify::verify(provider, &secrets, &headers, &body) {
        tracing::info!(
            security = 3,
            provider = provider.name(),
            "webhook verification failed: {}",
            refused.0
        );
        return text(
            StatusCode::BAD_REQUEST,
            format!("Webhook processing failed: {}", refused.0),
        );
    }
    let push = match push::parse(provider, event_name(provider, &headers), &body) {
        Ok(Event::Push(push)) => push,
        Ok(Event::Ignored) => return text(StatusCode::OK, ""),
        Err(unreadable) => {
            tracing::info!(
                provider = provider.name(),
                "webhook refused: {}",
                unreadable.0
            );
            return text(
                StatusCode::BAD_REQUEST,
                format!("Webhook processing failed: {}", unreadable.0),
            );
        }
    };
    match refresh(&s, &push).await {
        Ok(_) => text(StatusCode::OK, ""),
        Err(e) => e.into_response(),
    }
}

/// argocd-cm's `webhook.maxPayloadSizeMB`, Argo's default when unset or not a whole number.
fn max_payload_mb(s: &AppState, settings: &plumb_model::Settings) -> u64 {
    match settings.get("webhook.maxPayloadSizeMB") {
        None => DEFAULT_MAX_PAYLOAD_MB,
        Some(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
            tracing::warn!(
                "ConfigMap {}/argocd-cm: webhook.maxPayloadSizeMB {v:?} is not a whole number; using {DEFAULT_MAX_PAYLOAD_MB}",
                s.namespace
            );
            DEFAULT_MAX_PAYLOAD_MB
        }),
    }
}

/// The payload, read up to `max_mb` (a larger one, declared or sent, is refused).
async fn read_body(
    provider: Provider,
    headers: &HeaderMap,
    body: Body,
    max_mb: u64,
) -> Result<axum::body::Bytes, Response> {
    let limit = usize::try_from(max_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX);
    let too_large = || {
        tracing::warn!(
            security = 2,
            provider = provider.name(),
            "webhook payload larger than {max_mb} MB refused"
        );
        text(
            StatusCode::BAD_REQUEST,
            format!(
                "Webhook processing failed: The payload is either too large or corrupted. Please check the payload size (must be under {max_mb} MB) and ensure it is valid JSON"
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large())
}

/// The provider's name of the event (`push`, `Push Hook`, ...), from its header.
fn event_name(provider: Provider, headers: &HeaderMap) -> &str {
    let event_header = match provider {
        Provider::GitHub => "x-github-event",
        Provider::GitLab => "x-gitlab-event",
        Provider::BitbucketCloud | Provider::BitbucketServer => "x-event-key",
        Provider::Gogs => "x-gogs-event",
        Provider::AzureDevOps => "x-vss-activityid",
    };
    headers
        .get(event_header)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// The webhook keys of `argocd-secret`; none when the Secret does not exist.
async fn read_secrets(s: &AppState) -> Result<Secrets, Response> {
    let api: Api<Secret> = Api::namespaced(s.client.clone(), &s.namespace);
    match api.get_opt(SECRET).await {
        Ok(secret) => {
            let data: BTreeMap<String, Vec<u8>> = secret
                .and_then(|sec| sec.data)
                .unwrap_or_default()
                .into_iter()
                .filter(|(k, _)| k.starts_with("webhook."))
                .map(|(k, v)| (k, v.0))
                .collect();
            Ok(Secrets::from_data(&data))
        }
        Err(e) => Err(crate::error::Error::kube(
            format!("reading Secret {}/{SECRET}", s.namespace),
            e,
        )
        .into_response()),
    }
}

/// Marks every Application `push` concerns for a normal refresh; returns their names.
async fn refresh(s: &AppState, push: &push::Push) -> crate::error::Result<Vec<String>> {
    for url in &push.urls {
        tracing::info!(
            repo = %plumb_source::strip_url_credentials(url),
            revision = %push.revision,
            touched_head = push.touched_head,
            "received push event"
        );
    }
    let regexes = repository_regexes(push);
    if regexes.is_empty() {
        return Ok(Vec::new());
    }
    let mut refreshed = Vec::new();
    for obj in served_applications(s).await? {
        let Some(name) = obj.metadata.name.clone() else {
            continue;
        };
        let ns = obj.metadata.namespace.clone().unwrap_or_default();
        if !s.namespace_enabled(&ns) {
            continue;
        }
        let pending_hard = obj
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REFRESH))
            .is_some_and(|v| v == "hard");
        let value: Value = match serde_json::to_value(&obj) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if !targeting::concerns(push, &regexes, &value) {
            continue;
        }
        let shown = if ns == s.namespace {
            name.clone()
        } else {
            format!("{ns}/{name}")
        };
        // A hard refresh already asked for covers this one.
        if pending_hard || request_refresh(s, &ns, &name, &shown).await {
            refreshed.push(shown);
        }
    }
    Ok(refreshed)
}

/// The patterns of the web URLs of the pushed repositories (URLs that are not absolute with a
/// path are ignored).
fn repository_regexes(push: &push::Push) -> Vec<regex::Regex> {
    push.urls
        .iter()
        .filter_map(|u| {
            let re = targeting::web_url_regex(u);
            if re.is_none() {
                tracing::warn!(
                    "webhook repository URL {:?} is not an absolute URL with a path; ignored",
                    plumb_source::strip_url_credentials(u)
                );
            }
            re
        })
        .collect()
}

/// The Applications of every namespace the server serves: the control namespace, and those of
/// `--application-namespaces` (one cluster-wide list then, filtered by the caller).
async fn served_applications(s: &AppState) -> crate::error::Result<Vec<DynamicObject>> {
    let api = if s.app_namespaces.is_empty() {
        s.apps()
    } else {
        Api::all_with(s.client.clone(), &plumb_app::application_resource())
    };
    let apps = api.list(&Default::default()).await.map_err(|e| {
        crate::error::Error::kube(format!("listing Applications in {}", s.namespace), e)
    })?;
    Ok(apps.items)
}

/// Annotates the Application for a normal refresh; whether it was (one deleted since the list
/// was not, and a failure is logged).
async fn request_refresh(s: &AppState, ns: &str, name: &str, shown: &str) -> bool {
    let patch = json!({"metadata": {"annotations": {REFRESH: "normal"}}});
    let apps: Api<DynamicObject> =
        Api::namespaced_with(s.client.clone(), ns, &plumb_app::application_resource());
    match apps
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {
            tracing::info!(application = %shown, "webhook: refresh requested");
            true
        }
        // Deleted since the list: nothing to refresh.
        Err(kube::Error::Api(e)) if e.code == 404 => false,
        Err(e) => {
            tracing::warn!("webhook: requesting a refresh of Application {ns}/{name}: {e}");
            false
        }
    }
}
