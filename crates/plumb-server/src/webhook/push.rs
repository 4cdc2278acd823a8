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

/// The dotted name of a JSON pointer, for messages (`/repository/html_url` is
/// `repository.html_url`).
fn field(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// A string the push cannot be acted on without: missing, empty or of another type, the
/// payload is refused (Argo's typed decoding refuses wrong types; a push naming no repository
/// or ref is no push either).
fn required<'a>(v: &'a Value, pointer: &str) -> Result<&'a str, Unreadable> {
    match v.pointer(pointer) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        None | Some(Value::Null) | Some(Value::String(_)) => Err(Unreadable(format!(
            "error parsing payload: {} is missing",
            field(pointer)
        ))),
        Some(_) => Err(wrong_type(pointer, "a string")),
    }
}

/// A string that may be absent or null (empty then), but not of another type.
fn optional<'a>(v: &'a Value, pointer: &str) -> Result<&'a str, Unreadable> {
    match v.pointer(pointer) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(wrong_type(pointer, "a string")),
    }
}

/// An array that may be absent or null (empty then), but not of another type.
fn array<'a>(v: &'a Value, pointer: &str) -> Result<&'a [Value], Unreadable> {
    match v.pointer(pointer) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(wrong_type(pointer, "an array")),
    }
}

fn wrong_type(pointer: &str, expected: &str) -> Unreadable {
    Unreadable(format!(
        "error parsing payload: {} must be {expected}",
        field(pointer)
    ))
}

fn commit_files(v: &Value) -> Result<Vec<String>, Unreadable> {
    let mut files = Vec::new();
    for (i, commit) in array(v, "/commits")?.iter().enumerate() {
        for key in ["added", "modified", "removed"] {
            let list = array(commit, &format!("/{key}"))
                .map_err(|_| wrong_type(&format!("/commits/{i}/{key}"), "an array"))?;
            for f in list {
                let f = f
                    .as_str()
                    .ok_or_else(|| wrong_type(&format!("/commits/{i}/{key}"), "strings"))?;
                files.push(f.to_string());
            }
        }
    }
    Ok(files)
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
        // Gogs and Gitea use GitHub's field names.
        Provider::GitHub | Provider::Gogs => github(&v)?,
        Provider::GitLab => match gitlab(&v)? {
            Some(push) => push,
            None => return Ok(Event::Ignored),
        },
        Provider::BitbucketCloud => bitbucket_cloud(&v)?,
        Provider::BitbucketServer => bitbucket_server(&v)?,
        Provider::AzureDevOps => azure_devops(&v)?,
    };
    Ok(Event::Push(push))
}

fn github(v: &Value) -> Result<Push, Unreadable> {
    let revision = parse_revision(required(v, "/ref")?);
    Ok(Push {
        urls: url_list(required(v, "/repository/html_url")?),
        touched_head: optional(v, "/repository/default_branch")? == revision,
        revision,
        changed_files: commit_files(v)?,
    })
}

/// `None`: a system hook of another kind (accepted and ignored).
fn gitlab(v: &Value) -> Result<Option<Push>, Unreadable> {
    let kind = match optional(v, "/object_kind")? {
        "" => required(v, "/event_name")?,
        kind => kind,
    };
    if !matches!(kind, "push" | "tag_push") {
        return Ok(None);
    }
    let revision = parse_revision(required(v, "/ref")?);
    Ok(Some(Push {
        urls: url_list(required(v, "/project/web_url")?),
        touched_head: optional(v, "/project/default_branch")? == revision,
        revision,
        changed_files: commit_files(v)?,
    }))
}

fn bitbucket_cloud(v: &Value) -> Result<Push, Unreadable> {
    let urls = url_list(required(v, "/repository/links/html/href")?);
    if array(v, "/push/changes")?.is_empty() {
        return Err(Unreadable(
            "error parsing payload: push.changes is missing".into(),
        ));
    }
    // The first change names the branch (`new` is null when the push deleted it). Bitbucket
    // does not say whether it is the main branch, so HEAD is assumed touched (the controller
    // finds out), as in Argo.
    Ok(Push {
        urls,
        revision: optional(v, "/push/changes/0/new/name")?.to_string(),
        touched_head: true,
        changed_files: Vec::new(),
    })
}

fn bitbucket_server(v: &Value) -> Result<Push, Unreadable> {
    let links = array(v, "/repository/links/clone")?;
    if links.is_empty() {
        return Err(Unreadable(
            "error parsing payload: repository.links.clone is missing".into(),
        ));
    }
    let mut urls = Vec::new();
    for link in links {
        if matches!(optional(link, "/name")?, "http" | "ssh") {
            urls.extend(url_list(optional(link, "/href")?));
        }
    }
    Ok(Push {
        urls,
        revision: parse_revision(required(v, "/changes/0/ref/id")?),
        touched_head: true,
        changed_files: Vec::new(),
    })
}

fn azure_devops(v: &Value) -> Result<Push, Unreadable> {
    let event = optional(v, "/eventType")?;
    if event != "git.push" {
        return Err(Unreadable(format!(
            "event not defined to be parsed: Azure DevOps event {event:?}"
        )));
    }
    let name = required(v, "/resource/refUpdates/0/name")?;
    Ok(Push {
        urls: url_list(required(v, "/resource/repository/remoteUrl")?),
        revision: parse_revision(name),
        touched_head: name == optional(v, "/resource/repository/defaultBranch")?,
        changed_files: Vec::new(),
    })
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

    /// `fixture` with the field at `pointer` set to `value` (`None`: removed).
    fn altered(file: &str, pointer: &str, value: Option<serde_json::Value>) -> Vec<u8> {
        let mut v: Value = serde_json::from_slice(&fixture(file)).expect("fixture");
        let (parent, key) = pointer.rsplit_once('/').expect("pointer");
        let target = v.pointer_mut(parent).expect("parent");
        match (value, target) {
            (Some(new), Value::Object(o)) => {
                o.insert(key.into(), new);
            }
            (None, Value::Object(o)) => {
                o.remove(key);
            }
            (Some(new), Value::Array(a)) => a[key.parse::<usize>().expect("index")] = new,
            (None, Value::Array(a)) => {
                a.remove(key.parse::<usize>().expect("index"));
            }
            _ => panic!("{pointer}: not in an object or array"),
        }
        serde_json::to_vec(&v).expect("json")
    }

    #[test]
    fn missing_and_wrongly_typed_fields_are_refused() {
        use serde_json::json;
        let cases: &[(Provider, &str, &str, &str)] = &[
            (Provider::GitHub, "push", "github-push.json", "/ref"),
            (
                Provider::GitHub,
                "push",
                "github-push.json",
                "/repository/html_url",
            ),
            (
                Provider::Gogs,
                "push",
                "gogs-push.json",
                "/repository/html_url",
            ),
            (
                Provider::GitLab,
                "Push Hook",
                "gitlab-push.json",
                "/project/web_url",
            ),
            (Provider::GitLab, "Push Hook", "gitlab-push.json", "/ref"),
            (
                Provider::BitbucketCloud,
                "repo:push",
                "bitbucket-push.json",
                "/repository/links/html/href",
            ),
            (
                Provider::BitbucketCloud,
                "repo:push",
                "bitbucket-push.json",
                "/push/changes",
            ),
            (
                Provider::BitbucketServer,
                "repo:refs_changed",
                "bitbucketserver-push.json",
                "/repository/links/clone",
            ),
            (
                Provider::BitbucketServer,
                "repo:refs_changed",
                "bitbucketserver-push.json",
                "/changes",
            ),
            (
                Provider::AzureDevOps,
                "",
                "azuredevops-push.json",
                "/resource/repository/remoteUrl",
            ),
            (
                Provider::AzureDevOps,
                "",
                "azuredevops-push.json",
                "/resource/refUpdates",
            ),
        ];
        for (provider, event, file, pointer) in cases {
            let missing = parse(*provider, event, &altered(file, pointer, None));
            assert!(
                matches!(&missing, Err(Unreadable(m)) if m.contains("missing")),
                "{file} without {pointer}: {missing:?}"
            );
            let wrong = parse(*provider, event, &altered(file, pointer, Some(json!(7))));
            assert!(
                matches!(&wrong, Err(Unreadable(m)) if m.contains("must be") || m.contains("missing")),
                "{file} with {pointer}: 7: {wrong:?}"
            );
        }
        // The shapes that crashed Argo CD's server (GHSA-gpx4-37g2-c8pv, GHSA-f9gq-prrc-hrhc,
        // GHSA-wp4p-9pxh-cgx2): empty lists where it took the first element, `null` objects.
        for (provider, event, file, pointer, value) in [
            (
                Provider::AzureDevOps,
                "",
                "azuredevops-push.json",
                "/resource/refUpdates",
                json!([]),
            ),
            (
                Provider::BitbucketServer,
                "repo:refs_changed",
                "bitbucketserver-push.json",
                "/repository/links/clone",
                json!([]),
            ),
            (
                Provider::BitbucketServer,
                "repo:refs_changed",
                "bitbucketserver-push.json",
                "/changes",
                json!([]),
            ),
            (
                Provider::Gogs,
                "push",
                "gogs-push.json",
                "/repository",
                json!(null),
            ),
        ] {
            let got = parse(
                provider,
                event,
                &altered(file, pointer, Some(value.clone())),
            );
            assert!(got.is_err(), "{file} with {pointer}: {value}: {got:?}");
        }
        // A clone link without its address names no repository: nothing to refresh.
        let got = parse(
            Provider::BitbucketServer,
            "repo:refs_changed",
            &altered(
                "bitbucketserver-push.json",
                "/repository/links/clone",
                Some(json!([{"name": "http"}])),
            ),
        );
        assert!(
            matches!(&got, Ok(Event::Push(p)) if p.urls.is_empty()),
            "{got:?}"
        );
        for (pointer, value) in [
            ("/commits", json!("apps/x.yaml")),
            ("/commits/0/modified", json!({"a": 1})),
            ("/commits/0/added", json!([1])),
            ("/repository/default_branch", json!(["main"])),
            ("/ref", json!(null)),
            ("/ref", json!("")),
        ] {
            let got = parse(
                Provider::GitHub,
                "push",
                &altered("github-push.json", pointer, Some(value.clone())),
            );
            assert!(got.is_err(), "{pointer}: {value}: {got:?}");
        }
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
