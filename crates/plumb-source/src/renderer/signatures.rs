//! The signatures of a render's Git sources, verified against the project's source integrity
//! (`spec.sourceIntegrity`, legacy `signatureKeys` folded in) before anything is rendered from
//! them: the commit each source resolved to (or the annotated tag its revision names) is the
//! very one rendered next, so nothing can change in between.
//!
//! Per source, as Argo's `sourceintegrity.VerifyGit`: the one policy whose repository globs
//! select the URL (`plumb_policy::source_integrity`), then `head` (the tag, else the commit)
//! or `strict` (the tag, and the history down to the root or to good seal commits).

use plumb_model::application::{ApplicationSource, GIT_GPG_CHECK};
use plumb_policy::source_integrity::{GitCheck, GpgDepth, git_check};

use super::request::RenderRequest;
use super::sources::Fetched;
use super::state::Renderer;
use crate::error::{Error, Result};
use crate::git::SignedObject;
use crate::gpg::{GpgKeys, describe_problems, is_good_seal};
use crate::redact::strip_url_credentials;

impl Renderer {
    /// One message per Git source whose revision fails its policy (Argo's ComparisonError text:
    /// the source's problems, each `GIT/GPG: ...`, one per line); empty when every one passes
    /// or nothing is to be verified.
    pub(super) fn verify_signatures(
        &self,
        req: &RenderRequest,
        commits: &[String],
        charts: &[Option<Fetched>],
    ) -> Result<Vec<String>> {
        let Some(integrity) = &req.source_integrity else {
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
            let failed = |detail: String| Error::SignatureVerification {
                url: strip_url_credentials(&s.repo_url),
                detail,
            };
            let (depth, allowed) = match git_check(Some(integrity), &s.repo_url) {
                GitCheck::None => continue,
                GitCheck::Fail(message) => return Err(failed(message)),
                GitCheck::Gpg { depth, keys } => (depth, keys),
            };
            let found = self.source_problems(&keys, s, commit, depth, &allowed)?;
            if found.is_empty() {
                continue;
            }
            let label = source_label(s, i, n);
            let lines: Vec<String> = found
                .iter()
                .map(|p| format!("{GIT_GPG_CHECK}: {label}{p}"))
                .collect();
            problems.push(lines.join("\n"));
        }
        Ok(problems)
    }

    /// The problems of one source's revision at `depth` (Argo's `LsSignatures`).
    fn source_problems(
        &self,
        keys: &GpgKeys,
        s: &ApplicationSource,
        commit: &str,
        depth: GpgDepth,
        allowed: &[String],
    ) -> Result<Vec<String>> {
        let url = &s.repo_url;
        let revision = s.target_revision_or_head();
        let failed = |detail: String| Error::SignatureVerification {
            url: strip_url_credentials(url),
            detail,
        };
        self.git.checkout(url, revision, commit)?;
        let head = self.git.signed_object(url, revision, commit)?;
        let is_tag = head.revision != commit;
        let mut listed: Vec<std::result::Result<SignedObject, String>> = Vec::new();
        if depth == GpgDepth::Head {
            listed.push(Ok(head));
            return describe_problems(keys, allowed, listed).map_err(failed);
        }
        if is_tag {
            listed.push(Ok(head));
        }
        let mut seals = Vec::new();
        for candidate in self.git.seal_candidates(url, commit)? {
            if is_good_seal(keys, &candidate).map_err(failed)? {
                seals.push(candidate.revision);
            }
        }
        let history = self.git.strict_commits(url, commit, &seals)?;
        let commits = history
            .iter()
            .map(|c| self.git.signed_commit(url, c).map_err(|e| e.to_string()));
        describe_problems(keys, allowed, listed.into_iter().chain(commits)).map_err(failed)
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
