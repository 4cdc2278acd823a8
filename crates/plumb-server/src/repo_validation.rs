//! Argo's `argo.ValidateRepo` at create: each source's repository must answer (Git
//! `ls-remote`, a Helm index, an OCI registry) with the credentials stored for it, else the
//! Application is refused with Argo's `application spec for NAME is invalid: InvalidSpecError:
//! repository not accessible: ...` (InvalidArgument). `validate=false` skips it, as in Argo.

use plumb_app::repo_admin::{RepoAdmin, RepoSpec, Role};
use plumb_model::application::{Application, ApplicationSource};
use serde_json::json;

use crate::error::{Error, Result};
use crate::state::AppState;

/// The type Argo's `TestRepoWithKnownType` tests a source's repository as.
fn source_type(src: &ApplicationSource) -> &'static str {
    if src.is_helm_chart() {
        "helm"
    } else if src.repo_url.starts_with("oci://") {
        "oci"
    } else {
        "git"
    }
}

/// Refuses `app` when one of its sources' repositories does not answer. Sources are checked in
/// order and the first inaccessible one is reported, as Argo stops at it. Each check is bounded
/// by the connection check's own timeout.
pub(crate) async fn check(s: &AppState, app: &Application) -> Result<()> {
    let admin = RepoAdmin::new(s.client.clone(), &s.namespace);
    let project = app.spec.project.as_str();
    let stored = admin.repositories().await?;
    for src in app.sources() {
        let kind = source_type(src);
        let found = RepoAdmin::pick(&stored, &src.repo_url, project)
            .or_else(|| RepoAdmin::pick(&stored, &src.repo_url, ""))
            .map(|r| r.spec.clone());
        let (spec, name, proj) = match found {
            Some(spec) => {
                let name = spec.get("name").unwrap_or_default().to_owned();
                let proj = spec.project().to_owned();
                (spec, name, proj)
            }
            None => {
                let mut body = json!({"repo": src.repo_url, "type": kind});
                // A Helm chart from a registry host (no scheme): Argo's Helm OCI.
                if kind == "helm" && !src.repo_url.contains("://") {
                    body["enableOCI"] = json!(true);
                }
                let spec = RepoSpec::from_request(Role::Repository, &body)
                    .map_err(|e| invalid(app, &src.repo_url, "", "", &e.to_string()))?;
                (spec, String::new(), String::new())
            }
        };
        if let Err(e) = admin.check(&spec).await {
            return Err(invalid(app, &src.repo_url, &name, &proj, &e.to_string()));
        }
    }
    Ok(())
}

/// Argo's message, with the repository as its `StringForLogging` prints it (no credentials:
/// they are stripped from the URL).
fn invalid(app: &Application, url: &str, name: &str, project: &str, why: &str) -> Error {
    let url = plumb_source::strip_url_credentials(url);
    Error::InvalidArgument(format!(
        "application spec for {} is invalid: InvalidSpecError: repository not accessible: \
         repositories not accessible: &Repository{{Repo: {url:?}, Type: \"\", Name: {name:?}, \
         Project: {project:?}}}: repo client error while testing repository: {why}",
        app.name()
    ))
}
