//! `--refresh` and `--hard-refresh`: asking the controller to compare again, and waiting for it.

use std::time::Duration;

use anyhow::{Result, bail};
use futures::StreamExt;
use plumb_model::annotations::REFRESH;
use plumb_model::application::Application;

use super::client::AppClient;

/// Which refresh to ask the controller for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// Compare again with the latest commit of the target revision.
    Normal,
    /// Also drop cached manifests and render again.
    Hard,
}

/// Sets `argocd.argoproj.io/refresh` and waits until the controller removed it (it does when
/// the refresh is done); `timeout` 0 waits forever. Returns the refreshed Application.
pub(crate) async fn refresh(
    client: &AppClient,
    name: &str,
    kind: Refresh,
    timeout: u64,
) -> Result<Application> {
    let value = match kind {
        Refresh::Normal => "normal",
        Refresh::Hard => "hard",
    };
    client
        .merge_patch(
            name,
            &serde_json::json!({"metadata": {"annotations": {REFRESH: value}}}),
        )
        .await?;
    let mut stream = client.watch(name);
    let wait = async {
        while let Some(event) = stream.next().await {
            match event {
                Ok(Some(app)) if app.metadata.annotation(REFRESH).is_none() => return Ok(app),
                Ok(Some(_)) => {}
                Ok(None) => bail!("application '{name}' was deleted while refreshing"),
                Err(e) => {
                    tracing::warn!("{e:#}; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        bail!("the watch of Application {name} ended")
    };
    if timeout == 0 {
        wait.await
    } else {
        match tokio::time::timeout(Duration::from_secs(timeout), wait).await {
            Ok(result) => result,
            Err(_) => bail!(
                "timed out ({timeout}s) waiting for the controller to refresh application '{name}' (is `plumb controller` running?)"
            ),
        }
    }
}
