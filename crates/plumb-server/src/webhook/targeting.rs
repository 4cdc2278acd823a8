//! Which Applications a push concerns, as Argo CD decides it (`util/webhook`): a source whose
//! repository URL names the pushed repository in any of its forms (https, http, ssh, scp-like
//! `git@host:path`, with or without a user, port, `ssh.`/`altssh.` host prefix or `.git`, any
//! case), whose target revision is the pushed branch or tag (or HEAD, empty, when the push
//! moved the default branch), and, when the Application lists
//! `argocd.argoproj.io/manifest-generate-paths` and the payload lists changed files, one of
//! those files under one of those paths. Every source of a multi-source Application counts, and
//! the dry source of a hydrator.

use regex::Regex;
use serde_json::Value;

use super::push::{Push, parse_revision};

/// Argo's `usernameRegex` (RFC 3986 user part, as shadow's `chkname` allows).
const USERNAME: &str = r"[\w\.][\w\.-]{0,30}[\w\.\$-]?";

/// The Application annotation listing the paths whose changes concern it.
pub(crate) const MANIFEST_GENERATE_PATHS: &str = "argocd.argoproj.io/manifest-generate-paths";

/// A regular expression matching every repository URL that names the repository at `web_url`
/// (Argo's `GetWebURLRegex`); `None` when `web_url` is not an absolute URL with a path.
pub(crate) fn web_url_regex(web_url: &str) -> Option<Regex> {
    let (host, path) = host_and_path(web_url)?;
    let pattern = format!(
        r"(?i)^((https?|ssh)://)?({USERNAME}@)?((alt)?ssh\.)?{host}(:\d+)?[:/]{path}(\.git)?$",
        host = regex::escape(&host),
        path = regex::escape(&path),
    );
    Regex::new(&pattern).ok()
}

/// Host (without user or port) and path (without the leading `/`) of an absolute URL.
fn host_and_path(url: &str) -> Option<(String, String)> {
    let (_, rest) = url.split_once("://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some((host.to_string(), path.to_string()))
}

/// Argo's `sourceRevisionHasChanged`.
pub(crate) fn revision_matches(target_revision: &str, revision: &str, touched_head: bool) -> bool {
    let target = parse_revision(target_revision);
    if target == "HEAD" || target.is_empty() {
        return touched_head;
    }
    if target_revision.starts_with("refs/heads/") || target_revision.starts_with("refs/tags/") {
        return revision == target;
    }
    target_revision == revision
}

/// The (repoURL, targetRevision, path) of every source of an Application object: `spec.source`
/// or each of `spec.sources`, and the hydrator's dry source.
fn sources(app: &Value) -> Vec<(&str, &str, &str)> {
    fn one(s: &Value) -> (&str, &str, &str) {
        let field = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or_default();
        (field("repoURL"), field("targetRevision"), field("path"))
    }
    let spec = &app["spec"];
    let mut out: Vec<_> = match spec.get("sources").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list.iter().map(one).collect(),
        _ => spec.get("source").map(one).into_iter().collect(),
    };
    if let Some(dry) = spec.pointer("/sourceHydrator/drySource") {
        out.push(one(dry));
    }
    out
}

/// Argo's `GetAppRefreshPaths`: the annotation's `;`-separated paths, absolute ones from the
/// repository root, relative ones under each source's path.
fn refresh_paths(app: &Value) -> Vec<String> {
    let Some(list) = app
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(MANIFEST_GENERATE_PATHS))
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for item in list.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        if let Some(abs) = item.strip_prefix('/') {
            paths.push(clean(abs));
        } else {
            for (_, _, source_path) in sources(app) {
                paths.push(clean(&format!("{source_path}/{item}")));
            }
        }
    }
    paths
}

/// A repository path with `.`, `..` and repeated `/` resolved, never above the root, no leading
/// or trailing `/` (the root is "").
fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Argo's `AppFilesHaveChanged`: a changed file equal to, under, or matched (a glob where `*`
/// stays within one directory) by a refresh path.
fn files_changed(refresh: &[String], changed: &[String]) -> bool {
    if changed.is_empty() || refresh.is_empty() {
        return true;
    }
    changed.iter().any(|f| {
        let f = clean(f);
        refresh.iter().any(|p| {
            p.is_empty()
                || f == *p
                || f.strip_prefix(p.as_str())
                    .is_some_and(|r| r.starts_with('/'))
                || globset::GlobBuilder::new(p)
                    .literal_separator(true)
                    .build()
                    .is_ok_and(|g| g.compile_matcher().is_match(&f))
        })
    })
}

/// Whether `push` concerns the Application object `app`.
pub(crate) fn concerns(push: &Push, regexes: &[Regex], app: &Value) -> bool {
    let uses = sources(app).into_iter().any(|(repo, target, _)| {
        revision_matches(target, &push.revision, push.touched_head)
            && regexes.iter().any(|re| re.is_match(repo))
    });
    uses && files_changed(&refresh_paths(app), &push.changed_files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_form_of_the_repository_url_matches() {
        let re = web_url_regex("https://github.com/acme/payments-config").expect("regex");
        for url in [
            "https://github.com/acme/payments-config",
            "https://github.com/acme/payments-config.git",
            "https://GitHub.com/ACME/Payments-Config.git",
            "http://github.com/acme/payments-config",
            "git@github.com:acme/payments-config.git",
            "ssh://git@github.com/acme/payments-config.git",
            "ssh://git@ssh.github.com:443/acme/payments-config.git",
            "ssh://git@altssh.github.com:443/acme/payments-config",
            "https://ci-bot@github.com/acme/payments-config",
            "github.com/acme/payments-config",
        ] {
            assert!(re.is_match(url), "{url}");
        }
        for url in [
            "https://github.com/acme/payments-config-v2",
            "https://github.com/acme/payments",
            "https://github.com/other/payments-config",
            "https://gitlab.com/acme/payments-config",
            "https://github.com.evil.example/acme/payments-config",
            "https://evil.example/github.com/acme/payments-config",
            "https://github.com/acme/payments-config/../../x",
            "",
        ] {
            assert!(!re.is_match(url), "{url}");
        }
    }

    #[test]
    fn regex_metacharacters_in_urls_are_literal() {
        let re = web_url_regex("https://git.acme.internal/a.b/c+d").expect("regex");
        assert!(re.is_match("https://git.acme.internal/a.b/c+d.git"));
        assert!(!re.is_match("https://gitXacme.internal/aXb/c+d"));
        assert!(!re.is_match("https://git.acme.internal/a.b/ccd"));
    }

    #[test]
    fn urls_without_host_or_path_give_no_regex() {
        assert!(web_url_regex("not a url").is_none());
        assert!(web_url_regex("https://github.com").is_none());
        assert!(web_url_regex("https://github.com/").is_none());
    }

    #[test]
    fn bitbucket_server_clone_urls_match_their_forms() {
        let re = web_url_regex("ssh://git@bitbucket.acme.internal:7999/plat/payments-config.git")
            .expect("regex");
        assert!(re.is_match("ssh://git@bitbucket.acme.internal:7999/plat/payments-config.git"));
        let re = web_url_regex("https://bitbucket.acme.internal/scm/plat/payments-config.git")
            .expect("regex");
        assert!(re.is_match("https://bitbucket.acme.internal/scm/plat/payments-config.git"));
    }

    #[test]
    fn revisions_as_argo_matches_them() {
        // HEAD and empty follow the default branch.
        assert!(revision_matches("HEAD", "main", true));
        assert!(revision_matches("", "main", true));
        assert!(!revision_matches("HEAD", "feature", false));
        // Branch and tag names, bare or full.
        assert!(revision_matches("main", "main", true));
        assert!(revision_matches("refs/heads/main", "main", false));
        assert!(revision_matches("refs/tags/v1.4.0", "v1.4.0", false));
        assert!(revision_matches("feature/x", "feature/x", false));
        assert!(!revision_matches("main", "Main", true));
        assert!(!revision_matches("release", "main", true));
        // A commit id or a semver range never equals a pushed ref name.
        assert!(!revision_matches(
            "4e1d7a2b9c0f3e5d7a9b1c3d5e7f9a0b2c4d6e8f",
            "main",
            true
        ));
    }

    fn push(files: &[&str]) -> Push {
        Push {
            urls: vec!["https://github.com/acme/payments-config".into()],
            revision: "main".into(),
            touched_head: true,
            changed_files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn regexes(p: &Push) -> Vec<Regex> {
        p.urls.iter().filter_map(|u| web_url_regex(u)).collect()
    }

    #[test]
    fn multi_source_applications_match_on_any_source() {
        let app = json!({"metadata": {"name": "payments"}, "spec": {"sources": [
            {"repoURL": "https://charts.acme.internal", "chart": "payments", "targetRevision": "1.2.0"},
            {"repoURL": "git@github.com:acme/payments-config.git", "targetRevision": "main", "ref": "values"}
        ]}});
        let p = push(&[]);
        assert!(concerns(&p, &regexes(&p), &app));
        let other = json!({"metadata": {"name": "x"}, "spec": {"sources": [
            {"repoURL": "git@github.com:acme/payments-config.git", "targetRevision": "release"}
        ]}});
        assert!(!concerns(&p, &regexes(&p), &other));
    }

    #[test]
    fn hydrator_dry_source_counts() {
        let app = json!({"metadata": {"name": "h"}, "spec": {"sourceHydrator": {
            "drySource": {"repoURL": "https://github.com/acme/payments-config", "targetRevision": "HEAD", "path": "apps"},
            "syncSource": {"targetBranch": "env/prod", "path": "apps"}}}});
        let p = push(&[]);
        assert!(concerns(&p, &regexes(&p), &app));
    }

    #[test]
    fn manifest_generate_paths_filter_by_changed_files() {
        let app = |paths: &str| {
            json!({"metadata": {"name": "p", "annotations": {MANIFEST_GENERATE_PATHS: paths}},
                   "spec": {"source": {"repoURL": "https://github.com/acme/payments-config",
                                       "targetRevision": "main", "path": "apps/payments"}}})
        };
        let changed = push(&["apps/payments/deployment.yaml"]);
        let re = regexes(&changed);
        assert!(concerns(&changed, &re, &app(".")));
        assert!(concerns(&changed, &re, &app("/apps")));
        assert!(concerns(&changed, &re, &app("../ui;.")));
        assert!(!concerns(&changed, &re, &app("../ui")));
        assert!(!concerns(&changed, &re, &app("/apps/pay")));
        assert!(concerns(&changed, &re, &app("/apps/payments/*.yaml")));
        assert!(!concerns(&changed, &re, &app("/apps/*.yaml")));
        // No list of changed files in the payload: refresh.
        let unknown = push(&[]);
        assert!(concerns(&unknown, &re, &app("../ui")));
    }

    #[test]
    fn cleaning_never_climbs_above_the_root() {
        assert_eq!(clean("apps/payments/../ui/./x"), "apps/ui/x");
        assert_eq!(clean("../../etc"), "etc");
        assert_eq!(clean("/"), "");
    }
}
