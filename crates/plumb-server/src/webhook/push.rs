//! What a provider's push payload says, reduced to what refresh targeting needs: the
//! repository's URLs, the pushed revision (branch or tag name), whether it moved the default
//! branch, and the changed files when the payload lists them. Field names follow each
//! provider's documented push event, as Argo CD reads them.

use serde_json::Value;

use super::verify::Provider;

/// A push, as far as refresh targeting is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Push {
    /// The repository's web (or clone) URLs.
    pub(crate) urls: Vec<String>,
    /// The pushed branch or tag, without `refs/heads/` or `refs/tags/`.
    pub(crate) revision: String,
    /// Whether the push moved the default branch (or may have: Bitbucket does not say).
    pub(crate) touched_head: bool,
    /// Files added, modified or removed; empty when the payload does not list them.
    pub(crate) changed_files: Vec<String>,
}

/// What a verified request carried.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A push to act on.
    Push(Push),
    /// An event accepted and ignored (GitHub's and Bitbucket Server's pings).
    Ignored,
}

/// Why a payload could not be read (the text is shown to the sender).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unreadable(pub(crate) String);

/// The last component of a ref, as Argo's `ParseRevision`: `refs/heads/feature/x` gives
/// `feature/x` (split in at most three parts on `/`).
pub(crate) fn parse_revision(reference: &str) -> String {
    reference
        .splitn(3, '/')
        .last()
        .unwrap_or_default()
        .to_string()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn commit_files(v: &Value) -> Vec<String> {
    let mut files = Vec::new();
    for commit in v
        .get("commits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["added", "modified", "removed"] {
            for f in commit
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(f) = f.as_str() {
                    files.push(f.to_string());
                }
            }
        }
    }
    files
}

/// Reads `body` as `provider`'s event named by the headers (`event` is the event header's
/// value: `X-GitHub-Event`, `X-Gitlab-Event`, `X-Event-Key`, `X-Gogs-Event`; unused for Azure).
pub(crate) fn parse(provider: Provider, event: &str, body: &[u8]) -> Result<Event, Unreadable> {
    let known = match provider {
        Provider::GitHub => matches!(event, "push" | "ping"),
        Provider::GitLab => matches!(event, "Push Hook" | "Tag Push Hook" | "System Hook"),
        Provider::BitbucketCloud => event == "repo:push",
        Provider::BitbucketServer => matches!(event, "repo:refs_changed" | "diagnostics:ping"),
        Provider::Gogs => event == "push",
        Provider::AzureDevOps => true,
    };
    if !known {
        return Err(Unreadable(format!(
            "event not defined to be parsed: {provider} event {event:?}",
            provider = provider.name()
        )));
    }
    if matches!(event, "ping" | "diagnostics:ping") {
        return Ok(Event::Ignored);
    }
    let v: Value = serde_json::from_slice(body).map_err(|_| {
        Unreadable(format!(
            "error parsing payload: {} {event} payload is not valid JSON",
            provider.name()
        ))
    })?;
    if !v.is_object() {
        return Err(Unreadable(
            "error parsing payload: not a JSON object".into(),
        ));
    }
    let push = match provider {
        Provider::GitHub | Provider::Gogs => {
            // Gogs and Gitea use GitHub's field names.
            let revision = parse_revision(str_at(&v, "/ref"));
            Push {
                urls: url_list(str_at(&v, "/repository/html_url")),
                touched_head: str_at(&v, "/repository/default_branch") == revision,
                revision,
                changed_files: commit_files(&v),
            }
        }
        Provider::GitLab => {
            // System hooks carry many kinds; only pushes and tag pushes refresh.
            let kind = str_at(&v, "/object_kind");
            let kind = if kind.is_empty() {
                str_at(&v, "/event_name")
            } else {
                kind
            };
            if !matches!(kind, "push" | "tag_push") {
                return Ok(Event::Ignored);
            }
            let revision = parse_revision(str_at(&v, "/ref"));
            Push {
                urls: url_list(str_at(&v, "/project/web_url")),
                touched_head: str_at(&v, "/project/default_branch") == revision,
                revision,
                changed_files: commit_files(&v),
            }
        }
        Provider::BitbucketCloud => {
            // The first change names the branch; Bitbucket does not say whether it is the main
            // branch, so HEAD is assumed touched (the controller finds out), as in Argo.
            let revision = v
                .pointer("/push/changes/0/new/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Push {
                urls: url_list(str_at(&v, "/repository/links/html/href")),
                revision,
                touched_head: true,
                changed_files: Vec::new(),
            }
        }
        Provider::BitbucketServer => {
            let mut urls = Vec::new();
            for link in v
                .pointer("/repository/links/clone")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if matches!(str_at(link, "/name"), "http" | "ssh") {
                    urls.extend(url_list(str_at(link, "/href")));
                }
            }
            Push {
                urls,
                revision: parse_revision(str_at(&v, "/changes/0/ref/id")),
                touched_head: true,
                changed_files: Vec::new(),
            }
        }
        Provider::AzureDevOps => {
            if str_at(&v, "/eventType") != "git.push" {
                return Err(Unreadable(format!(
                    "event not defined to be parsed: Azure DevOps event {:?}",
                    str_at(&v, "/eventType")
                )));
            }
            let name = str_at(&v, "/resource/refUpdates/0/name");
            Push {
                urls: url_list(str_at(&v, "/resource/repository/remoteUrl")),
                revision: parse_revision(name),
                touched_head: !name.is_empty()
                    && name == str_at(&v, "/resource/repository/defaultBranch"),
                changed_files: Vec::new(),
            }
        }
    };
    Ok(Event::Push(push))
}

fn url_list(url: &str) -> Vec<String> {
    if url.is_empty() {
        Vec::new()
    } else {
        vec![url.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/webhook")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn push(provider: Provider, event: &str, file: &str) -> Push {
        match parse(provider, event, &fixture(file)) {
            Ok(Event::Push(p)) => p,
            other => panic!("{file}: {other:?}"),
        }
    }

    #[test]
    fn revisions_keep_slashes_after_the_prefix() {
        assert_eq!(parse_revision("refs/heads/main"), "main");
        assert_eq!(parse_revision("refs/heads/feature/x"), "feature/x");
        assert_eq!(parse_revision("refs/tags/v1.2.0"), "v1.2.0");
        assert_eq!(parse_revision("main"), "main");
    }

    #[test]
    fn github_push() {
        let p = push(Provider::GitHub, "push", "github-push.json");
        assert_eq!(p.urls, ["https://github.com/acme/payments-config"]);
        assert_eq!(p.revision, "main");
        assert!(p.touched_head);
        assert_eq!(p.changed_files, ["apps/payments/deployment.yaml"]);
    }

    #[test]
    fn github_tag_push_does_not_touch_head() {
        let p = push(Provider::GitHub, "push", "github-tag.json");
        assert_eq!(p.revision, "v1.4.0");
        assert!(!p.touched_head);
    }

    #[test]
    fn github_ping_and_other_events() {
        assert_eq!(parse(Provider::GitHub, "ping", b"{}"), Ok(Event::Ignored));
        assert!(parse(Provider::GitHub, "pull_request", b"{}").is_err());
        assert!(parse(Provider::GitHub, "push", b"not json").is_err());
        assert!(parse(Provider::GitHub, "push", b"[1]").is_err());
    }

    #[test]
    fn gitlab_push() {
        let p = push(Provider::GitLab, "Push Hook", "gitlab-push.json");
        assert_eq!(p.urls, ["https://gitlab.com/acme/payments-config"]);
        assert_eq!(p.revision, "main");
        assert!(p.touched_head);
        assert_eq!(p.changed_files, ["apps/payments/values.yaml", "README.md"]);
    }

    #[test]
    fn bitbucket_cloud_push() {
        let p = push(Provider::BitbucketCloud, "repo:push", "bitbucket-push.json");
        assert_eq!(p.urls, ["https://bitbucket.org/acme/payments-config"]);
        assert_eq!(p.revision, "release/2026.12");
        assert!(p.touched_head);
    }

    #[test]
    fn bitbucket_server_push() {
        let p = push(
            Provider::BitbucketServer,
            "repo:refs_changed",
            "bitbucketserver-push.json",
        );
        assert_eq!(
            p.urls,
            [
                "ssh://git@bitbucket.acme.internal:7999/plat/payments-config.git",
                "https://bitbucket.acme.internal/scm/plat/payments-config.git"
            ]
        );
        assert_eq!(p.revision, "main");
    }

    #[test]
    fn gogs_push() {
        let p = push(Provider::Gogs, "push", "gogs-push.json");
        assert_eq!(
            p.urls,
            ["https://gitea.acme.internal/platform/payments-config"]
        );
        assert_eq!(p.revision, "main");
        assert!(p.touched_head);
    }

    #[test]
    fn azure_devops_push() {
        let p = push(Provider::AzureDevOps, "", "azuredevops-push.json");
        assert_eq!(
            p.urls,
            ["https://dev.azure.com/acme/platform/_git/payments-config"]
        );
        assert_eq!(p.revision, "main");
        assert!(p.touched_head);
    }
}
