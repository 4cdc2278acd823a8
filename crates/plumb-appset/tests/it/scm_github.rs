//! The scmProvider and pullRequest generators against GitHub's REST API v3 as docs.github.com
//! documents it: a real HTTP server on loopback answers with JSON shaped as the documented
//! responses of "List organization repositories", "List branches", "Get a branch", "Get
//! repository content" and "List pull requests" (the fields Argo reads among the others),
//! paged with `Link` headers, at a GitHub Enterprise base URL (`{api}/api/v3/`). The requests
//! are checked: paths, query, `Authorization: Bearer`, `Accept` and `X-GitHub-Api-Version`.
//! Hostile answers: slow, 500, 50 MB (with and without Content-Length), garbage, an endless or
//! off-site `Link` chain: bounded errors, never a panic.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use plumb_appset::generators::{pull_request, scm_provider};
use plumb_appset::{GeneratorError, Limits};
use plumb_model::applicationset::{PullRequestGenerator, ScmProviderGenerator};
use serde_json::{Value, json};

use crate::scm_support::{appset, column, context, namespace_with_token, spec};

const TOKEN: &str = "ghp_plumbTestToken0123456789";
/// Items per page the server sends, whatever `per_page` asks (GitHub may send fewer).
const PAGE: usize = 2;

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(String, HeaderMap)>>>);

impl Recorder {
    fn push(&self, uri: &Uri, headers: &HeaderMap) {
        if let Ok(mut v) = self.0.lock() {
            v.push((uri.to_string(), headers.clone()));
        }
    }
    fn uris(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|v| v.iter().map(|(u, _)| u.clone()).collect())
            .unwrap_or_default()
    }
    fn headers(&self) -> Vec<HeaderMap> {
        self.0
            .lock()
            .map(|v| v.iter().map(|(_, h)| h.clone()).collect())
            .unwrap_or_default()
    }
}

/// Serves `router` on 127.0.0.1; returns the base URL.
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

fn owner() -> Value {
    json!({
        "login": "octo-org", "id": 4242, "node_id": "MDEyOk9yZ2FuaXphdGlvbjQyNDI=",
        "avatar_url": "https://github.com/images/error/octocat_happy.gif", "gravatar_id": "",
        "url": "https://api.github.com/users/octo-org", "html_url": "https://github.com/octo-org",
        "type": "Organization", "site_admin": false
    })
}

/// One item of "List organization repositories" (documented fields, abridged to the common
/// ones plus those Argo reads: id, name, owner.login, ssh_url, clone_url, default_branch,
/// topics, archived).
fn repo(id: i64, name: &str, topics: &[&str], archived: bool) -> Value {
    json!({
        "id": id, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": name,
        "full_name": format!("octo-org/{name}"), "owner": owner(), "private": false,
        "html_url": format!("https://github.com/octo-org/{name}"), "description": "This your first repo!",
        "fork": false, "url": format!("https://api.github.com/repos/octo-org/{name}"),
        "git_url": format!("git:github.com/octo-org/{name}.git"),
        "ssh_url": format!("git@github.com:octo-org/{name}.git"),
        "clone_url": format!("https://github.com/octo-org/{name}.git"),
        "svn_url": format!("https://svn.github.com/octo-org/{name}"),
        "homepage": "https://github.com", "forks_count": 9, "stargazers_count": 80,
        "watchers_count": 80, "size": 108, "default_branch": "main", "open_issues_count": 0,
        "is_template": false, "topics": topics, "has_issues": true, "has_projects": true,
        "has_wiki": true, "has_pages": false, "has_downloads": true, "archived": archived,
        "disabled": false, "visibility": "public", "pushed_at": "2011-01-26T19:06:43Z",
        "created_at": "2011-01-26T19:01:12Z", "updated_at": "2011-01-26T19:14:43Z",
        "permissions": {"admin": false, "push": false, "pull": true},
        "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT",
                    "url": "https://api.github.com/licenses/mit", "node_id": "MDc6TGljZW5zZW1pdA=="}
    })
}

fn repos() -> Vec<Value> {
    vec![
        repo(1296269, "hello-world", &["argo", "prod"], false),
        repo(1296270, "old-thing", &[], true),
        repo(1296271, "payments", &["team-b"], false),
    ]
}

fn sha(repo: &str, branch: &str) -> String {
    let seed = format!("{repo}@{branch}");
    let mut h: u64 = 0xcbf29ce484222325;
    for b in seed.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}{h:016x}{:08x}", h as u32)
}

fn branches(repo: &str) -> Vec<&'static str> {
    match repo {
        "hello-world" => vec!["main", "feature/x", "release-1"],
        _ => vec!["main"],
    }
}

/// One item of "List branches".
fn branch(repo: &str, name: &str) -> Value {
    let sha = sha(repo, name);
    json!({
        "name": name,
        "commit": {"sha": sha, "url": format!("https://api.github.com/repos/octo-org/{repo}/commits/{sha}")},
        "protected": name == "main"
    })
}

/// "Get a branch": the branch with its commit in full.
fn branch_full(repo: &str, name: &str) -> Value {
    let sha = sha(repo, name);
    json!({
        "name": name,
        "commit": {
            "sha": sha, "node_id": "MDY6Q29tbWl0N2ZkMWE2MGIwMWY5MWIzMTRmNTk5NTVhNGU0ZDRlODBkOGVkZjExZA==",
            "commit": {"author": {"name": "The Octocat", "date": "2012-03-06T15:06:50-08:00",
                                  "email": "octocat@nowhere.com"},
                       "url": format!("https://api.github.com/repos/octo-org/{repo}/git/commits/{sha}"),
                       "message": "Merge pull request #6", "tree": {"sha": "b4eecafa9be2f2006ce1b709d6857b07069b4608",
                       "url": "https://api.github.com/repos/octo-org/Hello-World/trees/b4eecafa9be2f2006ce1b709d6857b07069b4608"},
                       "committer": {"name": "The Octocat", "date": "2012-03-06T15:06:50-08:00", "email": "octocat@nowhere.com"},
                       "comment_count": 0},
            "author": owner(), "parents": [], "url": format!("https://api.github.com/repos/octo-org/{repo}/commits/{sha}"),
            "committer": owner()
        },
        "_links": {"html": format!("https://github.com/octo-org/{repo}/tree/{name}"),
                   "self": format!("https://api.github.com/repos/octo-org/{repo}/branches/{name}")},
        "protected": true,
        "protection_url": format!("https://api.github.com/repos/octo-org/{repo}/branches/{name}/protection")
    })
}

/// Which paths exist on which branch.
fn content(repo: &str, branch: &str, path: &str) -> Option<Value> {
    let file = |name: &str| {
        json!({
            "type": "file", "encoding": "base64", "size": 5362, "name": name, "path": path,
            "content": "ZXhhbXBsZQo=", "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
            "url": format!("https://api.github.com/repos/octo-org/{repo}/contents/{path}"),
            "git_url": "https://api.github.com/repos/octo-org/x/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
            "html_url": format!("https://github.com/octo-org/{repo}/blob/{branch}/{path}"),
            "download_url": format!("https://raw.githubusercontent.com/octo-org/{repo}/{branch}/{path}"),
            "_links": {"git": "https://api.github.com/repos/octo-org/x/git/blobs/3d21", "self": "https://api.github.com/x", "html": "https://github.com/x"}
        })
    };
    match (repo, branch, path) {
        ("hello-world", _, "kustomization.yaml") => Some(file("kustomization.yaml")),
        ("hello-world", "main", "deploy") | ("payments", "main", "deploy") => Some(json!([{
            "type": "file", "size": 625, "name": "app.yaml", "path": "deploy/app.yaml",
            "sha": "fff6fe3a23bf1c8ea0692b4a883af99bee26fd3b", "url": "https://api.github.com/x",
            "git_url": "https://api.github.com/x", "html_url": "https://github.com/x",
            "download_url": "https://raw.githubusercontent.com/x", "_links": {"self": "https://api.github.com/x", "git": "https://api.github.com/x", "html": "https://github.com/x"}
        }])),
        _ => None,
    }
}

/// One item of "List pull requests".
fn pull(number: i64, title: &str, head: &str, labels: &[&str], user: &str) -> Value {
    let labels: Vec<Value> = labels.iter().enumerate().map(|(i, l)| json!({
        "id": 208045946 + i as i64, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=",
        "url": format!("https://api.github.com/repos/octo-org/hello-world/labels/{l}"),
        "name": l, "description": "Something isn't working", "color": "f29513", "default": false
    })).collect();
    let person =
        |login: &str| json!({"login": login, "id": 1, "type": "User", "site_admin": false});
    json!({
        "url": format!("https://api.github.com/repos/octo-org/hello-world/pulls/{number}"),
        "id": 1000 + number, "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
        "html_url": format!("https://github.com/octo-org/hello-world/pull/{number}"),
        "number": number, "state": "open", "locked": false, "title": title, "user": person(user),
        "body": "Please pull these awesome changes in!", "labels": labels, "milestone": null,
        "active_lock_reason": "too heated", "created_at": "2011-01-26T19:01:12Z",
        "updated_at": "2011-01-26T19:01:12Z", "closed_at": null, "merged_at": null,
        "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "assignee": null,
        "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "head": {"label": format!("octo-org:{head}"), "ref": head, "sha": sha("hello-world", head),
                 "user": person("octo-org"), "repo": repo(1296269, "hello-world", &[], false)},
        "base": {"label": "octo-org:main", "ref": "main", "sha": sha("hello-world", "main"),
                 "user": person("octo-org"), "repo": repo(1296269, "hello-world", &[], false)},
        "author_association": "OWNER", "auto_merge": null, "draft": false
    })
}

fn pulls() -> Vec<Value> {
    vec![
        pull(
            1347,
            "Amazing new feature",
            "feature/Amazing_Thing",
            &["preview", "bug"],
            "octocat",
        ),
        pull(1348, "Fix the crash", "fix-crash", &["preview"], "hubot"),
        pull(1349, "Bump deps", "deps", &[], "dependabot[bot]"),
    ]
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}).to_string(),
    )
        .into_response()
}

/// Page `page` of `items`, with GitHub's `Link` header (`next`, `last`) at `link_base`.
fn paged(items: Vec<Value>, page: usize, link_base: &str) -> Response {
    let pages = items.len().div_ceil(PAGE).max(1);
    let body: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * PAGE)
        .take(PAGE)
        .collect();
    let mut links = Vec::new();
    if page < pages {
        links.push(format!(
            "<{link_base}per_page=100&page={}>; rel=\"next\"",
            page + 1
        ));
        links.push(format!(
            "<{link_base}per_page=100&page={pages}>; rel=\"last\""
        ));
    }
    if page > 1 {
        links.push(format!("<{link_base}per_page=100&page=1>; rel=\"first\""));
    }
    let mut resp = (StatusCode::OK, Value::Array(body).to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        "application/json; charset=utf-8".parse().expect("header"),
    );
    if !links.is_empty() {
        resp.headers_mut()
            .insert(header::LINK, links.join(", ").parse().expect("header"));
    }
    resp
}

#[derive(Clone)]
struct Documented {
    rec: Recorder,
    base: Arc<Mutex<String>>,
}

type Q = Query<std::collections::HashMap<String, String>>;

fn page_of(q: &Q) -> usize {
    q.get("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1)
}

impl Documented {
    fn base(&self) -> String {
        self.base.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

async fn org_repos(State(s): State<Documented>, uri: Uri, h: HeaderMap, q: Q) -> Response {
    s.rec.push(&uri, &h);
    // GitHub's next links name the organisation by id.
    paged(
        repos(),
        page_of(&q),
        &format!("{}/api/v3/organizations/4242/repos?", s.base()),
    )
}

async fn list_branches(
    State(s): State<Documented>,
    Path((_, r)): Path<(String, String)>,
    uri: Uri,
    h: HeaderMap,
    q: Q,
) -> Response {
    s.rec.push(&uri, &h);
    let items = branches(&r).iter().map(|b| branch(&r, b)).collect();
    paged(
        items,
        page_of(&q),
        &format!("{}/api/v3/repositories/1296269/branches?", s.base()),
    )
}

async fn get_branch(
    State(s): State<Documented>,
    Path((_, r, b)): Path<(String, String, String)>,
    uri: Uri,
    h: HeaderMap,
) -> Response {
    s.rec.push(&uri, &h);
    if branches(&r).contains(&b.as_str()) {
        (StatusCode::OK, branch_full(&r, &b).to_string()).into_response()
    } else {
        not_found()
    }
}

async fn get_content(
    State(s): State<Documented>,
    Path((_, r, p)): Path<(String, String, String)>,
    uri: Uri,
    h: HeaderMap,
    q: Q,
) -> Response {
    s.rec.push(&uri, &h);
    let branch = q.get("ref").cloned().unwrap_or_default();
    match content(&r, &branch, &p) {
        Some(v) => (StatusCode::OK, v.to_string()).into_response(),
        None => not_found(),
    }
}

async fn list_pulls(
    State(s): State<Documented>,
    Path((_, r)): Path<(String, String)>,
    uri: Uri,
    h: HeaderMap,
    q: Q,
) -> Response {
    s.rec.push(&uri, &h);
    if r != "hello-world" {
        return not_found();
    }
    paged(
        pulls(),
        page_of(&q),
        &format!("{}/api/v3/repositories/1296269/pulls?", s.base()),
    )
}

async fn documented() -> (String, Recorder) {
    let state = Documented {
        rec: Recorder::default(),
        base: Arc::default(),
    };
    let router = Router::new()
        .route("/api/v3/orgs/{org}/repos", get(org_repos))
        .route("/api/v3/organizations/{id}/repos", get(org_repos))
        .route("/api/v3/repos/{o}/{r}/branches", get(list_branches))
        .route(
            "/api/v3/repositories/{id}/branches",
            get(
                |State(s): State<Documented>, uri: Uri, h: HeaderMap, q: Q| async move {
                    s.rec.push(&uri, &h);
                    let items = branches("hello-world")
                        .iter()
                        .map(|b| branch("hello-world", b))
                        .collect();
                    paged(
                        items,
                        page_of(&q),
                        &format!("{}/api/v3/repositories/1296269/branches?", s.base()),
                    )
                },
            ),
        )
        .route("/api/v3/repos/{o}/{r}/branches/{b}", get(get_branch))
        .route("/api/v3/repos/{o}/{r}/contents/{*p}", get(get_content))
        .route("/api/v3/repos/{o}/{r}/pulls", get(list_pulls))
        .route(
            "/api/v3/repositories/{id}/pulls",
            get(
                |State(s): State<Documented>, uri: Uri, h: HeaderMap, q: Q| async move {
                    s.rec.push(&uri, &h);
                    paged(
                        pulls(),
                        page_of(&q),
                        &format!("{}/api/v3/repositories/1296269/pulls?", s.base()),
                    )
                },
            ),
        )
        .with_state(state.clone());
    let url = serve(router).await;
    if let Ok(mut b) = state.base.lock() {
        *b = url.clone();
    }
    (url, state.rec)
}

fn scm_spec(api: &str, extra: Value) -> ScmProviderGenerator {
    let mut v = json!({"github": {"organization": "octo-org", "api": api,
        "tokenRef": {"secretName": "forge-token", "key": "token"}}});
    merge(&mut v, extra);
    spec(v)
}

fn pr_spec(api: &str, repo: &str, extra: Value) -> PullRequestGenerator {
    let mut v = json!({"github": {"owner": "octo-org", "repo": repo, "api": api,
        "tokenRef": {"secretName": "forge-token", "key": "token"}}});
    merge(&mut v, extra);
    spec(v)
}

fn merge(into: &mut Value, extra: Value) {
    if let (Some(obj), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, val) in extra {
            match (obj.get_mut(&k), val) {
                (Some(Value::Object(inner)), Value::Object(more)) => inner.extend(more),
                (_, val) => {
                    obj.insert(k, val);
                }
            }
        }
    }
}

fn assert_github_headers(rec: &Recorder) {
    let all = rec.headers();
    assert!(!all.is_empty());
    for h in all {
        assert_eq!(
            h.get("authorization").and_then(|v| v.to_str().ok()),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert_eq!(
            h.get("accept").and_then(|v| v.to_str().ok()),
            Some("application/vnd.github.v3+json")
        );
        assert_eq!(
            h.get("x-github-api-version").and_then(|v| v.to_str().ok()),
            Some("2022-11-28")
        );
        assert!(
            h.get("user-agent").is_some(),
            "GitHub refuses requests without a User-Agent"
        );
    }
}

#[tokio::test]
async fn scm_provider_github_documented_api() {
    let (api, rec) = documented().await;
    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-scm-github", TOKEN).await;
    let set = appset(ns.name(), false);

    let params = scm_provider::generate(&scm_spec(&api, json!({})), &set, &ctx)
        .await
        .expect("generate");
    assert_eq!(
        column(&params, "repository"),
        ["hello-world", "old-thing", "payments"]
    );
    let hw = &params[0];
    assert_eq!(hw["organization"], "octo-org");
    assert_eq!(hw["url"], "git@github.com:octo-org/hello-world.git");
    assert_eq!(hw["branch"], "main");
    let main_sha = sha("hello-world", "main");
    assert_eq!(hw["sha"], main_sha.as_str());
    assert_eq!(hw["short_sha"], &main_sha[..8]);
    assert_eq!(hw["short_sha_7"], &main_sha[..7]);
    assert_eq!(hw["labels"], "argo,prod");
    assert_eq!(hw["repository_id"], 1296269);
    assert_eq!(hw["branchNormalized"], "main");
    assert_github_headers(&rec);
    assert_eq!(
        rec.uris(),
        [
            "/api/v3/orgs/octo-org/repos?per_page=100",
            "/api/v3/organizations/4242/repos?per_page=100&page=2",
            "/api/v3/repos/octo-org/hello-world/branches/main",
            "/api/v3/repos/octo-org/old-thing/branches/main",
            "/api/v3/repos/octo-org/payments/branches/main",
        ]
    );

    // https, allBranches (paged), excludeArchivedRepos, a label filter and a path filter.
    let s = scm_spec(
        &api,
        json!({
            "cloneProtocol": "https",
            "github": {"allBranches": true, "excludeArchivedRepos": true},
            "filters": [{"labelMatch": "^(prod|team-b)$"}, {"branchMatch": "^(main|feature/.*)$", "pathsExist": ["deploy/"]},
                        {"branchMatch": "^feature/", "pathsExist": ["kustomization.yaml"], "pathsDoNotExist": ["deploy"]}],
        }),
    );
    let params = scm_provider::generate(&s, &set, &ctx)
        .await
        .expect("generate");
    let got: Vec<String> = params
        .iter()
        .map(|p| {
            format!(
                "{}@{}",
                p["repository"].as_str().unwrap_or_default(),
                p["branch"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        got,
        ["hello-world@main", "hello-world@feature/x", "payments@main"]
    );
    assert_eq!(
        params[1]["url"],
        "https://github.com/octo-org/hello-world.git"
    );
    assert_eq!(params[1]["branchNormalized"], "feature-x");
    assert!(
        rec.uris()
            .iter()
            .any(|u| u == "/api/v3/repos/octo-org/hello-world/contents/deploy?ref=feature%2Fx"),
        "{:?}",
        rec.uris()
    );
    assert!(
        rec.uris()
            .iter()
            .any(|u| u == "/api/v3/repositories/1296269/branches?per_page=100&page=2"),
        "{:?}",
        rec.uris()
    );

    // The default branch of an empty repository is a 404: no parameters for it, no error.
    let s = scm_spec(
        &api,
        json!({"filters": [{"repositoryMatch": "^payments$"}]}),
    );
    assert_eq!(
        scm_provider::generate(&s, &set, &ctx)
            .await
            .expect("generate")
            .len(),
        1
    );

    // GitHub App authentication is refused as not yet supported.
    let app = scm_spec(&api, json!({"github": {"appSecretName": "gh-app"}}));
    let err = scm_provider::generate(&app, &set, &ctx)
        .await
        .expect_err("app");
    assert!(
        err.to_string().contains("not supported by Plumb yet"),
        "{err}"
    );
}

#[tokio::test]
async fn pull_request_github_documented_api() {
    let (api, rec) = documented().await;
    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-pr-github", TOKEN).await;
    let go = appset(ns.name(), true);

    let params = pull_request::generate(&pr_spec(&api, "hello-world", json!({})), &go, &ctx)
        .await
        .expect("generate");
    assert_eq!(column(&params, "number"), ["1347", "1348", "1349"]);
    let p = &params[0];
    let head = sha("hello-world", "feature/Amazing_Thing");
    assert_eq!(p["title"], "Amazing new feature");
    assert_eq!(p["branch"], "feature/Amazing_Thing");
    assert_eq!(p["branch_slug"], "feature-amazing-thing");
    assert_eq!(p["target_branch"], "main");
    assert_eq!(p["target_branch_slug"], "main");
    assert_eq!(p["head_sha"], head.as_str());
    assert_eq!(p["head_short_sha"], &head[..8]);
    assert_eq!(p["head_short_sha_7"], &head[..7]);
    assert_eq!(p["author"], "octocat");
    assert_eq!(p["labels"], json!(["preview", "bug"]));
    assert_eq!(params[2]["author"], "dependabot[bot]");
    assert_eq!(
        rec.uris(),
        [
            "/api/v3/repos/octo-org/hello-world/pulls?per_page=100",
            "/api/v3/repositories/1296269/pulls?per_page=100&page=2"
        ]
    );
    assert_github_headers(&rec);

    let s = pr_spec(
        &api,
        "hello-world",
        json!({"github": {"labels": ["preview"]}, "filters": [{"titleMatch": "(?i)crash"}, {"branchMatch": "^feature/"}]}),
    );
    let params = pull_request::generate(&s, &go, &ctx)
        .await
        .expect("generate");
    assert_eq!(column(&params, "number"), ["1347", "1348"]);

    // A missing repository: an error, or nothing with continueOnRepoNotFoundError.
    let err = pull_request::generate(&pr_spec(&api, "gone", json!({})), &go, &ctx)
        .await
        .expect_err("404");
    assert!(
        err.to_string()
            .contains("/api/v3/repos/octo-org/gone/pulls")
            && err.to_string().contains("404"),
        "{err}"
    );
    let ok = pull_request::generate(
        &pr_spec(&api, "gone", json!({"continueOnRepoNotFoundError": true})),
        &go,
        &ctx,
    )
    .await;
    assert!(ok.expect("forgiven").is_empty());
    let err = pull_request::generate(
        &spec(json!({"bitbucketServer": {"project": "p", "repo": "r", "api": "https://b"}})),
        &go,
        &ctx,
    )
    .await
    .expect_err("unsupported");
    assert!(
        err.to_string()
            .contains("pullRequest bitbucketServer is not supported by Plumb yet"),
        "{err}"
    );
}

/// How the hostile server misbehaves.
#[derive(Clone, Copy)]
enum Hostile {
    Slow,
    Error500,
    Huge { length: bool },
    Garbage,
    EndlessLinks,
    OffsiteLink,
}

async fn hostile(mode: Hostile) -> String {
    let base: Arc<Mutex<String>> = Arc::default();
    let b = base.clone();
    let handler = move |uri: Uri| {
        let base = b.lock().map(|s| s.clone()).unwrap_or_default();
        async move {
            match mode {
                Hostile::Slow => {
                    tokio::time::sleep(Duration::from_secs(600)).await;
                    StatusCode::OK.into_response()
                }
                Hostile::Error500 => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    json!({"message": format!("Server Error; echo {TOKEN}")}).to_string(),
                )
                    .into_response(),
                Hostile::Huge { length } => {
                    const MB: usize = 1024 * 1024;
                    if length {
                        (StatusCode::OK, Body::from(vec![b' '; 50 * MB])).into_response()
                    } else {
                        let chunks = futures::stream::iter(
                            (0..50).map(|_| Ok::<_, std::io::Error>(vec![b' '; MB])),
                        );
                        (StatusCode::OK, Body::from_stream(chunks)).into_response()
                    }
                }
                Hostile::Garbage => (StatusCode::OK, "<html>not json</html>").into_response(),
                Hostile::EndlessLinks | Hostile::OffsiteLink => {
                    let page: usize = uri
                        .query()
                        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("page=")))
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(1);
                    let next = if matches!(mode, Hostile::OffsiteLink) {
                        "http://forge.invalid/api/v3/orgs/octo-org/repos?page=2".to_owned()
                    } else {
                        format!(
                            "{base}/api/v3/orgs/octo-org/repos?per_page=100&page={}",
                            page + 1
                        )
                    };
                    let body =
                        Value::Array(vec![repo(page as i64, &format!("r{page}"), &[], false)])
                            .to_string();
                    ([(header::LINK, format!("<{next}>; rel=\"next\""))], body).into_response()
                }
            }
        }
    };
    let url = serve(Router::new().fallback(handler)).await;
    if let Ok(mut b) = base.lock() {
        *b = url.clone();
    }
    url
}

#[tokio::test]
async fn github_hostile_answers_are_bounded_errors() {
    let limits = Limits {
        http_timeout: Duration::from_secs(2),
        max_pages: 5,
        ..Limits::default()
    };
    let (ctx, _dir) = context(limits).await;
    let ns = namespace_with_token(&ctx, "ascm-hostile", TOKEN).await;
    let set = appset(ns.name(), false);
    let cases: [(Hostile, &str); 7] = [
        (Hostile::Slow, "no complete answer within 2s"),
        (
            Hostile::Error500,
            "HTTP 500 Internal Server Error: Server Error; echo <token>",
        ),
        (Hostile::Huge { length: true }, "larger than 4194304 bytes"),
        (Hostile::Huge { length: false }, "larger than 4194304 bytes"),
        (Hostile::Garbage, "not the JSON expected"),
        (Hostile::EndlessLinks, "more than 5 pages"),
        (Hostile::OffsiteLink, "leaves the forge's API"),
    ];
    for (mode, expected) in cases {
        let api = hostile(mode).await;
        let err = scm_provider::generate(&scm_spec(&api, json!({})), &set, &ctx)
            .await
            .expect_err("hostile");
        let text = err.to_string();
        assert!(text.contains(expected), "{expected:?} not in {text:?}");
        assert!(
            text.contains(&format!("GitHub {api}/api/v3/orgs/octo-org/repos")),
            "{text}"
        );
        assert!(!text.contains(TOKEN), "the token leaked: {text}");
        assert!(matches!(
            err,
            GeneratorError::Source(_) | GeneratorError::Limit(_)
        ));
        let err =
            pull_request::generate(&pr_spec(&api, "hello-world", json!({})), &set, &ctx).await;
        let text = err
            .map(|p| format!("{p:?}"))
            .unwrap_or_else(|e| e.to_string());
        assert!(!text.contains(TOKEN), "the token leaked: {text}");
    }
}
