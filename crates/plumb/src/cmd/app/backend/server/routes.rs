//! Argo CD's REST paths of one Application, and the Application read from them.

use anyhow::Result;
use plumb_model::application::Application;

use crate::cmd::app::backend::objects::application;
use crate::cmd::app::client::AppClient;
use crate::cmd::remote::{ServerClient, enc};

/// `/api/v1/applications/{name}{suffix}` for a possibly qualified name (`namespace/name`: Argo's
/// `appNamespace` query parameter), with `query`.
pub(crate) fn app_url(qualified: &str, suffix: &str, query: &[(&str, &str)]) -> String {
    let (ns, name) = match qualified.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (Some(ns), n),
        Some((_, n)) => (None, n),
        None => (None, qualified),
    };
    let params: Vec<String> = ns
        .map(|ns| ("appNamespace", ns))
        .into_iter()
        .chain(query.iter().copied())
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    let q = if params.is_empty() {
        String::new()
    } else {
        format!("?{}", params.join("&"))
    };
    format!("/api/v1/applications/{}{suffix}{q}", enc(name))
}

/// `/api/v1/applications/{name}{suffix}` of a possibly qualified name as `client` locates it,
/// with `query`.
pub(crate) fn app_path(
    client: &AppClient,
    qualified: &str,
    suffix: &str,
    query: &[(&str, &str)],
) -> String {
    let (ns, name) = client.locate(qualified);
    app_url(&format!("{ns}/{name}"), suffix, query)
}

/// The Application `name`, refreshed first when `refresh` names a refresh (`normal`, `hard`).
pub(crate) async fn fetch_app(
    c: &ServerClient,
    name: &str,
    refresh: Option<&str>,
) -> Result<Application> {
    let query: Vec<(&str, &str)> = refresh.map(|r| ("refresh", r)).into_iter().collect();
    application(c.get(&app_url(name, "", &query)).await?)
}

#[cfg(test)]
mod tests {
    use super::app_url;

    #[test]
    fn qualified_names_become_app_namespace() {
        assert_eq!(app_url("web", "", &[]), "/api/v1/applications/web");
        assert_eq!(
            app_url("team-a/web", "/manifests", &[("revision", "v1 2")]),
            "/api/v1/applications/web/manifests?appNamespace=team-a&revision=v1+2"
        );
        assert_eq!(
            app_url("web", "", &[("refresh", "hard")]),
            "/api/v1/applications/web?refresh=hard"
        );
    }
}
