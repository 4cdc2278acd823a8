//! Kustomize remote bases, read the way kustomize reads them: which entries are remote, their
//! repository, ref and directory, and which forms are never allowed. Plumb fetches them itself
//! ([`super::kustomize_scratch`]).

use std::collections::BTreeMap;

/// What a kustomization entry names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A path inside the checkout (checked by the caller).
    Local,
    /// A Git repository kustomize would clone: fetched by Plumb if the project permits it.
    Remote(RemoteBase),
    /// A remote form that is never allowed, and why.
    Refused(&'static str),
}

/// A remote base as kustomize would read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RemoteBase {
    /// The repository Plumb fetches, and matches against `sourceRepos`.
    pub repo: String,
    /// `?ref=` (or `version=`, `sha=`), decoded; `None`: the default branch.
    pub reference: Option<String>,
    /// The directory inside the repository (`""`: its root).
    pub dir: String,
}

/// Hosts whose repositories are `owner/name` and that kustomize knows without a scheme.
const SHORTHAND_HOSTS: [&str; 3] = ["github.com", "gitlab.com", "bitbucket.org"];

/// Classifies a resource/base entry the way kustomize would read it: a URL with a scheme, an
/// scp-like `user@host:path` or `host:path`, a `github.com/…` shorthand (any case), or a local
/// path. Case never makes a remote entry local.
pub(crate) fn target(entry: &str) -> Target {
    let entry = entry.trim();
    let entry = strip_prefix_ci(entry, "git::").unwrap_or(entry);
    if strip_prefix_ci(entry, "file:").is_some() {
        return Target::Refused("file:// URLs read the controller's disk");
    }
    let (path, query) = entry.split_once('?').unwrap_or((entry, ""));
    let Some((repo, dir)) = repo_and_dir(path) else {
        return match path.split_once("://") {
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("http") => {
                Target::Refused("plain http:// is not allowed (use https://)")
            }
            Some(_) => Target::Refused("only https:// and ssh:// Git URLs are allowed"),
            None => Target::Local,
        };
    };
    match reference_of(query) {
        Ok(reference) => Target::Remote(RemoteBase {
            repo,
            reference,
            dir,
        }),
        Err(why) => Target::Refused(why),
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// The repository URL (host lower-cased) and the directory inside it, for the remote forms
/// Plumb fetches; `None` for anything else (a local path, or a refused scheme).
fn repo_and_dir(path: &str) -> Option<(String, String)> {
    if let Some((scheme, rest)) = path.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "https" && scheme != "ssh" {
            return None;
        }
        let (authority, rest) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, host) = match authority.rsplit_once('@') {
            Some((user, host)) => (format!("{user}@"), host),
            None => (String::new(), authority),
        };
        let host = host.to_ascii_lowercase();
        let (repo, dir) = split_repo(&host, rest);
        return Some((format!("{scheme}://{user}{host}/{repo}"), dir));
    }
    if let Some(rest) = strip_prefix_ci(path, "gh:") {
        let (repo, dir) = split_repo("github.com", rest);
        return Some((format!("https://github.com/{repo}"), dir));
    }
    // scp-like: `[user@]host:path`, the host part holding no `/`.
    if let Some((head, rest)) = path.split_once(':')
        && !head.contains('/')
    {
        let (user, host) = match head.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, head),
        };
        let host = host.to_ascii_lowercase();
        if !host.is_empty() && (user.is_some() || host.contains('.')) {
            let (repo, dir) = split_repo(&host, rest.trim_start_matches('/'));
            return Some(match user {
                Some(user) => (format!("{user}@{host}:{repo}"), dir),
                // `github.com:org/repo`: no user to log in as; kustomize reads it as https.
                None => (format!("https://{host}/{repo}"), dir),
            });
        }
    }
    let (host, rest) = path.split_once('/')?;
    let host = host.to_ascii_lowercase();
    SHORTHAND_HOSTS.contains(&host.as_str()).then(|| {
        let (repo, dir) = split_repo(&host, rest);
        (format!("https://{host}/{repo}"), dir)
    })
}

/// Splits the path after the host into the repository and the directory inside it: at `//`,
/// after `.git/`, or after `owner/name` on the shorthand hosts.
fn split_repo(host: &str, path: &str) -> (String, String) {
    if let Some((repo, dir)) = path.split_once("//") {
        return (repo.to_owned(), dir.to_owned());
    }
    if let Some(i) = path.find(".git/") {
        return (path[..i + 4].to_owned(), path[i + 5..].to_owned());
    }
    if SHORTHAND_HOSTS.contains(&host) {
        let mut parts = path.splitn(3, '/');
        let owner = parts.next().unwrap_or_default();
        let name = parts.next().unwrap_or_default();
        let dir = parts.next().unwrap_or_default();
        return (format!("{owner}/{name}"), dir.to_owned());
    }
    (path.to_owned(), String::new())
}

/// The ref a remote base asks for (`ref`, else `version`, else `sha`), each value present
/// decoded (as Go's `url.ParseQuery` decodes it for kustomize) and checked.
fn reference_of(query: &str) -> std::result::Result<Option<String>, &'static str> {
    let mut found: BTreeMap<&str, String> = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if matches!(key, "ref" | "version" | "sha") {
            let value = decode(value).ok_or("its ref is not valid percent-encoded UTF-8")?;
            check_ref(&value)?;
            found.entry(key).or_insert(value);
        }
    }
    Ok(["ref", "version", "sha"]
        .iter()
        .find_map(|k| found.remove(k)))
}

/// Refuses a ref that git could read as an option or that is no ref name at all (the class of
/// GHSA-9v9p-x54c-58gc: kustomize passed the ref to `git fetch` as a bare argument).
pub(crate) fn check_ref(reference: &str) -> std::result::Result<(), &'static str> {
    if reference.is_empty() {
        return Err("its ref is empty");
    }
    if reference.starts_with('-') {
        return Err("its ref starts with '-', which git would read as an option");
    }
    if reference
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("its ref holds whitespace or control characters");
    }
    if reference.contains("..") || reference.contains("@{") {
        return Err("its ref holds '..' or '@{'");
    }
    if reference.contains(['=', ':', '~', '^', '?', '*', '[', '\\']) {
        return Err("its ref holds option or refspec syntax (one of = : ~ ^ ? * [ \\)");
    }
    Ok(())
}

/// Percent-decoding with `+` as a space, as Go's query parsing does.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(repo: &str, reference: Option<&str>, dir: &str) -> Target {
        Target::Remote(RemoteBase {
            repo: repo.to_owned(),
            reference: reference.map(str::to_owned),
            dir: dir.to_owned(),
        })
    }

    #[test]
    fn remote_targets_are_classified_and_cut_to_their_repository() {
        assert_eq!(
            target("https://github.com/acme/base//deploy/prod?ref=v1"),
            remote("https://github.com/acme/base", Some("v1"), "deploy/prod")
        );
        assert_eq!(
            target("git::https://git.acme.io/team/base.git/overlays?ref=main"),
            remote(
                "https://git.acme.io/team/base.git",
                Some("main"),
                "overlays"
            )
        );
        assert_eq!(
            target("ssh://git@git.acme.io/team/base.git//x"),
            remote("ssh://git@git.acme.io/team/base.git", None, "x")
        );
        assert_eq!(
            target("git@github.com:acme/base.git/deploy"),
            remote("git@github.com:acme/base.git", None, "deploy")
        );
        assert_eq!(
            target("github.com/acme/base/deploy?ref=v2"),
            remote("https://github.com/acme/base", Some("v2"), "deploy")
        );
        assert!(matches!(target("file:///etc"), Target::Refused(_)));
        assert!(matches!(target("FILE:///etc"), Target::Refused(_)));
        assert!(matches!(target("file:../x"), Target::Refused(_)));
        assert!(matches!(
            target("git::file:///srv/repo"),
            Target::Refused(_)
        ));
        assert!(matches!(target("http://git.acme.io/x"), Target::Refused(_)));
        assert!(matches!(target("s3://bucket/x"), Target::Refused(_)));
        assert_eq!(target("../base"), Target::Local);
        assert_eq!(target("deployment.yaml"), Target::Local);
        assert_eq!(target("base/deploy"), Target::Local);
    }

    /// Issue #26: spellings kustomize 5.8 fetches were read as local paths.
    #[test]
    fn case_and_scp_like_spellings_are_remote() {
        assert_eq!(
            target("GITHUB.COM/acme/base/app"),
            remote("https://github.com/acme/base", None, "app")
        );
        assert_eq!(
            target("github.com:acme/base//app"),
            remote("https://github.com/acme/base", None, "app")
        );
        assert_eq!(
            target("Git@Git.Acme.io:team/base.git//app"),
            remote("Git@git.acme.io:team/base.git", None, "app")
        );
        assert_eq!(
            target("HTTPS://GIT.ACME.IO/team/base//app"),
            remote("https://git.acme.io/team/base", None, "app")
        );
        assert_eq!(
            target("GIT::FILE:///var/cache/plumb/git/repos/x.git//app"),
            Target::Refused("file:// URLs read the controller's disk")
        );
        assert!(matches!(target("HTTP://git.acme.io/x"), Target::Refused(_)));
    }

    /// Issue #35 item 5 (GHSA-9v9p-x54c-58gc): refs that git would read as options.
    #[test]
    fn refs_with_option_syntax_are_refused() {
        for bad in [
            "https://git.acme.io/team/base//app?ref=--upload-pack=touch%20/tmp/x",
            "https://git.acme.io/team/base//app?ref=-c",
            "https://git.acme.io/team/base//app?version=%2D%2Dupload-pack",
            "https://git.acme.io/team/base//app?sha=a+b",
            "https://git.acme.io/team/base//app?ref=main%0A--exec",
            "https://git.acme.io/team/base//app?ref=../../x",
            "https://git.acme.io/team/base//app?ref=a:refs/heads/x",
            "https://git.acme.io/team/base//app?ref=",
            "https://git.acme.io/team/base//app?ref=%zz",
        ] {
            assert!(matches!(target(bad), Target::Refused(_)), "{bad}");
        }
        assert_eq!(
            target("https://git.acme.io/team/base//app?version=v1.2.0&timeout=2m"),
            remote("https://git.acme.io/team/base", Some("v1.2.0"), "app")
        );
        assert_eq!(check_ref("refs/tags/v1"), Ok(()));
        assert_eq!(check_ref("9f2c1e0"), Ok(()));
    }
}
