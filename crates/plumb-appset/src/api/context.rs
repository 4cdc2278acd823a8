//! The generators' [`Context`] for a preview (`plumb appset generate`/`diff` in core mode, the
//! server's generate and dry-run routes): a Git cache of its own under `cache_dir`.

use std::path::Path;
use std::sync::Arc;

use crate::{Context, Limits};

use super::ApiError;

/// A context reading through `client` with settings and cluster Secrets of
/// `control_namespace`. Git is read without the repository Secrets' credentials: a preview of
/// a set whose generators read a private repository needs the controller (or a later change
/// feeding the credentials in).
pub fn preview_context(
    client: kube::Client,
    control_namespace: &str,
    cache_dir: &Path,
) -> Result<Context, ApiError> {
    let git = plumb_source::GitCache::new(cache_dir.join("git"), plumb_source::Limits::default())
        .map_err(|e| {
        ApiError::Invalid(format!(
            "preparing the Git cache in {}: {e}",
            cache_dir.display()
        ))
    })?;
    let limits = Limits::default();
    let http = reqwest::Client::builder()
        .timeout(limits.http_timeout)
        .build()
        .map_err(|e| ApiError::Invalid(format!("building the HTTP client: {e}")))?;
    Ok(Context {
        client,
        control_namespace: control_namespace.to_string(),
        git: Arc::new(git),
        http,
        limits,
    })
}
