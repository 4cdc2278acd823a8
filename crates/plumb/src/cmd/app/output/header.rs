//! The inputs of Argo's header that are read, not taken from the Application.

use anyhow::Result;
use plumb_model::application::Application;

use crate::cmd::app::backend::objects::URL_KEY;
use crate::cmd::app::client::AppClient;
use crate::cmd::app::output::windows;
use crate::output::wide::HeaderContext;

/// The header inputs read from the cluster: the UI URL from the settings and, when
/// `with_windows`, the project's sync windows (Argo's `app wait`/`app sync` pass none).
pub(crate) async fn header_context(
    client: &AppClient,
    app: &Application,
    with_windows: bool,
) -> Result<HeaderContext> {
    let settings = client.settings().await?;
    let url = settings
        .get(URL_KEY)
        .map(|base| format!("{}/applications/{}", base.trim_end_matches('/'), app.name()));
    let windows = if with_windows {
        let project = client.project(&app.spec.project).await?;
        windows::window_summary(app, project.as_ref())
    } else {
        Default::default()
    };
    Ok(HeaderContext { url, windows })
}
