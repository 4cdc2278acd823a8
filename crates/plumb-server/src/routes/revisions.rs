//! `GET /api/v1/applications/{name}/revisions/{revision}/metadata`: Argo CD's
//! `RevisionMetadata` (author, date, tags, message, signatureInfo) of a commit of the
//! Application's Git repository, read from the server's Git cache (fetched when missing) with
//! the credentials of the Application's project.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use serde_json::{Map, Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::state::AppState;

/// Argo's `RevisionMetadata` JSON of one commit.
pub(crate) fn revision_metadata(m: &plumb_source::CommitMetadata) -> Value {
    let date = jiff::Timestamp::from_second(m.date_seconds)
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut out = Map::new();
    out.insert("author".into(), json!(m.author));
    out.insert("date".into(), json!(date));
    if !m.tags.is_empty() {
        out.insert("tags".into(), json!(m.tags));
    }
    out.insert("message".into(), json!(m.message));
    // Argo fills signatureInfo only when it verifies signatures with GnuPG
    // (ARGOCD_GPG_ENABLED and a project's signatureKeys). Plumb verifies them where it renders
    // and syncs (docs/gpg.md), not for this metadata, so it says whether there is one and that
    // it was not verified here.
    if m.signed {
        out.insert(
            "signatureInfo".into(),
            json!("signed; the signature was not verified"),
        );
    }
    Value::Object(out)
}

/// `GET /api/v1/applications/{name}/revisions/{revision}/metadata[?sourceIndex=N]`.
pub(crate) async fn metadata(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((name, revision)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "get").await?;
    let (_, app) = s.app(&name).await?;
    let index: usize = match q.get("sourceIndex") {
        None => 0,
        Some(i) => i.parse().map_err(|_| {
            Error::InvalidArgument(format!("sourceIndex: expected a number, got {i:?}"))
        })?,
    };
    let sources = app.sources();
    let source = sources.get(index).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "source index {index} not found: application {name} has {} sources",
            sources.len()
        ))
    })?;
    if source.chart.is_some() {
        return Err(Error::InvalidArgument(format!(
            "source {index} of application {name} is a Helm chart: revision metadata is for Git sources"
        )));
    }
    if revision.is_empty() || revision.len() > 255 || revision.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(format!(
            "revision {:?} is not a valid Git revision",
            revision.chars().take(64).collect::<String>()
        )));
    }
    let url = source.repo_url.clone();
    let renderer = s.renderer.clone();
    let rev = revision.clone();
    // With the credentials of the Application's project (Argo's `GetRepository(url, project)`):
    // a repository scoped to it is read with its Secret, one scoped to another project never.
    let scoped = app.clone();
    let found = tokio::task::spawn_blocking(move || {
        plumb_app::project_scope::in_scope_of(&scoped, || {
            renderer.git().commit_metadata(&url, &rev)
        })
    })
    .await
    .map_err(|e| Error::Internal(format!("reading revision metadata: {e}")))?;
    match found {
        Ok(m) => Ok(Json(revision_metadata(&m))),
        Err(e @ plumb_source::Error::RevisionNotFound { .. }) => {
            Err(Error::NotFound(e.to_string()))
        }
        Err(e) => Err(Error::Internal(format!(
            "reading revision {revision} of {}: {e}",
            plumb_source::strip_url_credentials(&source.repo_url)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_shape_with_tags_and_signature_only_when_present() {
        let m = plumb_source::CommitMetadata {
            commit: "a".repeat(40),
            author: "Dev <dev@example.com>".into(),
            date_seconds: 1_700_000_000,
            message: "release 1.2\n\nnotes".into(),
            tags: vec!["v1.2".into()],
            signed: false,
        };
        assert_eq!(
            revision_metadata(&m),
            json!({"author": "Dev <dev@example.com>", "date": "2023-11-14T22:13:20Z",
                "tags": ["v1.2"], "message": "release 1.2\n\nnotes"})
        );
        let bare = plumb_source::CommitMetadata {
            tags: vec![],
            signed: true,
            ..m
        };
        let v = revision_metadata(&bare);
        assert!(v.get("tags").is_none());
        assert!(
            v["signatureInfo"]
                .as_str()
                .is_some_and(|s| s.contains("not verified"))
        );
    }
}
