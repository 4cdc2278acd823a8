//! Finding a GitHub App's installation when the Secret names none (`githubAppInstallationID`
//! missing or 0), as Argo CD 3.6 does (`DiscoverGitHubAppInstallationID`): the organization is
//! the first path segment of the repository URL, the App's installations are listed with its
//! JWT (`GET {base}/app/installations?per_page=100`, GitHub's "List installations for the
//! authenticated app", pages followed through `Link: rel="next"`), and the one whose
//! `account.login` is the organization (case-insensitively) is used. What is found is kept an
//! hour for every account listed, as Argo keeps it.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::github_app::{ClientFor, GithubApp, error_chain};

/// A page of the list larger than this is refused (100 installations are well under it).
const MAX_PAGE: u64 = 4 << 20;
/// Pages followed before giving up (10,000 installations).
const MAX_PAGES: usize = 100;
/// How long a found installation is used before the list is asked again.
const KEEP: Duration = Duration::from_secs(3600);

/// Installation IDs by `org:domain:app`, with when they were listed.
#[derive(Default)]
pub(crate) struct Installations {
    found: Mutex<HashMap<String, (u64, Instant)>>,
}

impl Installations {
    /// The installation of `app` for the organization of `repo_url`. The error is Argo's.
    pub(crate) fn find(
        &self,
        app: &GithubApp,
        repo_url: &str,
        client: ClientFor<'_>,
    ) -> Result<u64, String> {
        let org = org_of(repo_url)?;
        let domain = reqwest::Url::parse(app.api_base())
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        let key = |login: &str| format!("{}:{domain}:{}", login.to_lowercase(), app.app_id);
        if let Some(id) = self.kept(&key(&org)) {
            return Ok(id);
        }
        let listed = list(app, client).map_err(|e| {
            format!(
                "failed to discover GitHub App installation ID for organization {org}: ensure \
                 the GitHub App (ID: {}) is installed for this organization: {e}",
                app.app_id
            )
        })?;
        let now = Instant::now();
        let mut map = self.found.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 4096 {
            map.clear();
        }
        for (login, id) in listed {
            map.insert(key(&login), (id, now));
        }
        map.get(&key(&org)).map(|(id, _)| *id).ok_or_else(|| {
            format!(
                "failed to discover GitHub App installation ID for organization {org}: ensure \
                 the GitHub App (ID: {}) is installed for this organization: installation not \
                 found for org: {org}",
                app.app_id
            )
        })
    }

    fn kept(&self, key: &str) -> Option<u64> {
        let map = self.found.lock().unwrap_or_else(|p| p.into_inner());
        map.get(key)
            .filter(|(_, at)| at.elapsed() < KEEP)
            .map(|(id, _)| *id)
    }
}

/// Argo's `ExtractOrgFromRepoURL`: the first path segment, lower-cased, of a URL whose path is
/// at least `org/repo`.
pub(crate) fn org_of(repo_url: &str) -> Result<String, String> {
    let shown = crate::strip_url_credentials(repo_url);
    let path = match reqwest::Url::parse(repo_url) {
        Ok(u) if u.host_str().is_some() => u.path().to_owned(),
        // scp-like `git@host:org/repo`.
        _ => match repo_url.split_once(':') {
            Some((host, path)) if !host.contains('/') && !path.starts_with("//") => path.into(),
            _ => return Err(format!("failed to parse repository URL {shown:?}")),
        },
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if path.is_empty() {
        return Err(format!("repository URL {shown:?} does not contain a path"));
    }
    match path.split_once('/') {
        Some((org, _)) if !org.is_empty() => Ok(org.to_lowercase()),
        _ => Err(format!(
            "could not extract organization from repository URL {shown:?}: path {path:?} does \
             not contain org/repo format"
        )),
    }
}

/// Every installation of the App: `(account login, id)`.
fn list(app: &GithubApp, client: ClientFor<'_>) -> Result<Vec<(String, u64)>, String> {
    let first = format!("{}/app/installations?per_page=100", app.api_base());
    let mut url = reqwest::Url::parse(&first).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for _ in 0..MAX_PAGES {
        let (body, next) = page(app, &url, client)?;
        out.extend(parse_page(&body)?);
        match next {
            Some(n) => url = n,
            None => return Ok(out),
        }
    }
    Err(format!(
        "failed to list installations: more than {MAX_PAGES} pages"
    ))
}

/// One page: its body and the next page's URL (on the same origin only).
fn page(
    app: &GithubApp,
    url: &reqwest::Url,
    client: ClientFor<'_>,
) -> Result<(Vec<u8>, Option<reqwest::Url>), String> {
    let fail = |d: String| format!("failed to list installations: {d}");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| fail(e.to_string()))?
        .as_secs();
    let resp = client(url)
        .map_err(fail)?
        .get(url.clone())
        .header("Accept", "application/vnd.github+json")
        .header("X-GitHub-Api-Version", "2022-11-28")
        .header("User-Agent", "plumb")
        .bearer_auth(app.jwt(now).map_err(fail)?)
        .send()
        .map_err(|e| fail(error_chain(&e)))?;
    let status = resp.status();
    let next = resp
        .headers()
        .get(reqwest::header::LINK)
        .and_then(|v| v.to_str().ok())
        .and_then(|link| next_link(link, url));
    let mut body = Vec::new();
    resp.take(MAX_PAGE + 1)
        .read_to_end(&mut body)
        .map_err(|e| fail(format!("reading the answer: {e}")))?;
    if body.len() as u64 > MAX_PAGE {
        return Err(fail(format!("the answer exceeds {MAX_PAGE} bytes")));
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    Ok((body, next))
}

/// GitHub's page: an array of installations, each with `id` and `account.login`.
fn parse_page(body: &[u8]) -> Result<Vec<(String, u64)>, String> {
    #[derive(serde::Deserialize)]
    struct Account {
        login: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Installation {
        id: Option<u64>,
        account: Option<Account>,
    }
    let items: Vec<Installation> = serde_json::from_slice(body).map_err(|_| {
        "failed to list installations: the answer is not GitHub's JSON (an array of installations)"
            .to_owned()
    })?;
    Ok(items
        .into_iter()
        .filter_map(|i| Some((i.account?.login?, i.id?)))
        .collect())
}

/// The `rel="next"` target of a `Link` header, kept on `current`'s origin.
fn next_link(link: &str, current: &reqwest::Url) -> Option<reqwest::Url> {
    link.split(',')
        .map(str::trim)
        .find(|part| part.contains("rel=\"next\""))
        .and_then(|part| part.strip_prefix('<')?.split_once('>'))
        .and_then(|(target, _)| current.join(target).ok())
        .filter(|next| next.origin() == current.origin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn organizations_are_read_as_argo_reads_them() {
        for (url, org) in [
            ("https://github.com/Argoproj/argo-cd.git", "argoproj"),
            ("https://ghe.corp/api-team/app/sub", "api-team"),
            ("git@github.com:Team/app.git", "team"),
            ("ssh://git@github.com/team/app", "team"),
        ] {
            assert_eq!(org_of(url).as_deref(), Ok(org), "{url}");
        }
        for bad in [
            "https://github.com/",
            "https://github.com/app.git",
            "nonsense",
        ] {
            assert!(org_of(bad).is_err(), "{bad}");
        }
        let err = org_of("https://user:hunter2@github.com/x").unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn pages_are_read_as_github_documents_them() {
        let page = br#"[{"id":1,"account":{"login":"octocat","id":1},"app_id":1,"target_type":"Organization"},
                        {"id":2,"account":null}]"#;
        assert_eq!(parse_page(page), Ok(vec![("octocat".into(), 1)]));
        assert!(parse_page(b"{\"message\":\"Bad credentials\"}").is_err());
        let current = reqwest::Url::parse("https://api.github.com/app/installations").unwrap();
        let next = next_link(
            r#"<https://api.github.com/app/installations?page=2>; rel="next", <https://api.github.com/app/installations?page=5>; rel="last""#,
            &current,
        );
        assert_eq!(
            next.map(|u| u.to_string()).as_deref(),
            Some("https://api.github.com/app/installations?page=2")
        );
        assert!(next_link(r#"<https://evil.test/x>; rel="next""#, &current).is_none());
    }
}
