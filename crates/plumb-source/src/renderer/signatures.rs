//! The signatures of a render's Git sources, verified against the project's `signatureKeys`
//! before anything is rendered from them: the commit each source resolved to (or the annotated
//! tag its revision names) is the very one rendered next, so nothing can change in between.

use plumb_model::application::ApplicationSource;

use super::request::RenderRequest;
use super::sources::Fetched;
use super::state::Renderer;
use crate::error::{Error, Result};
use crate::redact::strip_url_credentials;

/// Argo's name of the check (`sourceintegrity.verify`), the prefix of every message.
const CHECK_NAME: &str = "GIT/GPG";

impl Renderer {
    /// One message per Git source whose revision fails the project's keys (Argo's
    /// ComparisonError text); empty when every one passes or nothing is to be verified.
    pub(super) fn verify_signatures(
        &self,
        req: &RenderRequest,
        commits: &[String],
        charts: &[Option<Fetched>],
    ) -> Result<Vec<String>> {
        let Some(allowed) = &req.signature_keys else {
            return Ok(Vec::new());
        };
        let keys = self.gpg_keys();
        let n = req.sources.len();
        let mut problems = Vec::new();
        for (i, ((s, commit), chart)) in req.sources.iter().zip(commits).zip(charts).enumerate() {
            // Charts from Helm repositories and OCI artifacts are not Git: not verified (Argo).
            if chart.is_some() {
                continue;
            }
            let revision = s.target_revision_or_head();
            self.git.checkout(&s.repo_url, revision, commit)?;
            let object = self.git.signed_object(&s.repo_url, revision, commit)?;
            let verdict =
                crate::gpg::verify_revision(&keys, allowed, &object).map_err(|detail| {
                    Error::SignatureVerification {
                        url: strip_url_credentials(&s.repo_url),
                        detail,
                    }
                })?;
            if let Some(p) = verdict {
                problems.push(format!("{CHECK_NAME}: {}{p}", source_label(s, i, n)));
            }
        }
        Ok(problems)
    }
}

/// Argo's `InjectSourceName` prefix for an Application of several sources.
fn source_label(s: &ApplicationSource, i: usize, n: usize) -> String {
    if n < 2 {
        return String::new();
    }
    match s.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => format!("source {name}: "),
        None => format!("source {} of {n}: ", i + 1),
    }
}
