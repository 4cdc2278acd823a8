//! The scmProvider and pullRequest generators end to end against a real Gitea on loopback
//! (`plumb_testenv::gitea`, pages of 3 items so that every listing pages): repositories,
//! branches, an archived repository, labels, path filters, pull requests and their filters, a
//! missing repository with and without `continueOnRepoNotFoundError`.

use plumb_appset::generators::{pull_request, scm_provider};
use plumb_appset::{GeneratorError, Limits};
use plumb_model::applicationset::{PullRequestGenerator, ScmProviderGenerator};
use plumb_testenv::gitea::Gitea;
use serde_json::json;

use crate::scm_support::{appset, column, context, namespace_with_token, spec};

/// An organisation with five repositories (more than a page), one archived, labels on two,
/// a second branch with a `deploy/` directory on one.
struct Fleet {
    org: String,
    shas: std::collections::BTreeMap<String, String>,
}

fn fleet(gitea: &Gitea) -> Fleet {
    let org = Gitea::unique("ascm-fleet");
    gitea.create_org(&org);
    let mut shas = std::collections::BTreeMap::new();
    for (repo, files) in [
        (
            "api",
            vec![
                ("kustomization.yaml", "resources: []\n"),
                ("deploy/app.yaml", "a: 1\n"),
            ],
        ),
        ("web", vec![("kustomization.yaml", "resources: []\n")]),
        ("docs", vec![("README.md", "docs\n")]),
        ("old", vec![("kustomization.yaml", "resources: []\n")]),
        ("worker", vec![("deploy/app.yaml", "w: 1\n")]),
    ] {
        gitea.create_repo(&org, repo, &files);
    }
    for repo in ["api", "web", "docs", "old", "worker"] {
        let sha = gitea.push_branch(&org, repo, "main", Some("main"), &[]);
        shas.insert(format!("{repo}@main"), sha);
    }
    let sha = gitea.push_branch(
        &org,
        "api",
        "feature/Login_Page",
        Some("main"),
        &[("extra.txt", "x")],
    );
    shas.insert("api@feature/Login_Page".to_owned(), sha);
    gitea.create_label(&org, "api", "team-a");
    gitea.create_label(&org, "api", "prod");
    gitea.create_label(&org, "worker", "team-b");
    gitea.archive_repo(&org, "old");
    Fleet { org, shas }
}

fn scm(gitea: &Gitea, org: &str, extra: serde_json::Value) -> ScmProviderGenerator {
    let mut v = json!({
        "gitea": {
            "owner": org,
            "api": gitea.url(),
            "tokenRef": {"secretName": "forge-token", "key": "token"},
        },
    });
    if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        for (k, val) in extra {
            if k == "gitea" {
                for (gk, gv) in val.as_object().expect("object") {
                    obj["gitea"][gk] = gv.clone();
                }
            } else {
                obj.insert(k.clone(), val.clone());
            }
        }
    }
    spec(v)
}

#[tokio::test]
async fn scm_provider_gitea_end_to_end() {
    let gitea = Gitea::shared();
    let fleet = fleet(gitea);
    let org = fleet.org.as_str();
    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-scm-gitea", gitea.token()).await;
    let set = appset(ns.name(), false);

    // Default branches of every repository, archived included; https clone URLs.
    let params = scm_provider::generate(
        &scm(gitea, org, json!({"cloneProtocol": "https"})),
        &set,
        &ctx,
    )
    .await
    .expect("generate");
    let mut repos = column(&params, "repository");
    repos.sort();
    assert_eq!(repos, ["api", "docs", "old", "web", "worker"]);
    let api = params
        .iter()
        .find(|p| p["repository"] == "api")
        .expect("api");
    let sha = &fleet.shas["api@main"];
    assert_eq!(api["organization"], org);
    assert_eq!(api["branch"], "main");
    assert_eq!(api["sha"], sha.as_str());
    assert_eq!(api["short_sha"], &sha[..8]);
    assert_eq!(api["short_sha_7"], &sha[..7]);
    assert_eq!(api["url"], format!("{}/{org}/api", gitea.url()));
    let mut labels: Vec<&str> = api["labels"]
        .as_str()
        .unwrap_or_default()
        .split(',')
        .collect();
    labels.sort_unstable();
    assert_eq!(labels, ["prod", "team-a"]);
    assert_eq!(api["branchNormalized"], "main");
    assert!(api["repository_id"].as_i64().is_some_and(|id| id > 0));
    let keys: Vec<&str> = api.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 10, "Argo's ten parameters, no more: {keys:?}");

    // excludeArchivedRepos, allBranches, branchNormalized, values.
    let params = scm_provider::generate(
        &scm(
            gitea,
            org,
            json!({
                "gitea": {"excludeArchivedRepos": true, "allBranches": true},
                "values": {"name": "{{repository}}-{{branchNormalized}}"},
            }),
        ),
        &set,
        &ctx,
    )
    .await
    .expect("generate");
    let mut names = column(&params, "values.name");
    names.sort();
    assert_eq!(
        names,
        [
            "api-feature-login-page",
            "api-main",
            "docs-main",
            "web-main",
            "worker-main"
        ]
    );
    let feature = params
        .iter()
        .find(|p| p["branch"] == "feature/Login_Page")
        .expect("branch");
    assert_eq!(
        feature["sha"],
        fleet.shas["api@feature/Login_Page"].as_str()
    );
}

#[tokio::test]
async fn scm_provider_gitea_filters() {
    let gitea = Gitea::shared();
    let fleet = fleet(gitea);
    let org = fleet.org.as_str();
    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-scm-filter", gitea.token()).await;
    let set = appset(ns.name(), true);
    let run = |filters: serde_json::Value, extra: serde_json::Value| {
        let mut e = extra;
        e["filters"] = filters;
        let s = scm(gitea, org, e);
        let (ctx, set) = (&ctx, &set);
        async move {
            let p = scm_provider::generate(&s, set, ctx)
                .await
                .expect("generate");
            let mut out: Vec<String> = p
                .iter()
                .map(|p| {
                    format!(
                        "{}@{}",
                        p["repository"].as_str().unwrap_or_default(),
                        p["branch"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            out.sort();
            out
        }
    };
    // Any filter passes; within one, all conditions.
    assert_eq!(
        run(
            json!([{"repositoryMatch": "^w"}, {"labelMatch": "^prod$"}]),
            json!({})
        )
        .await,
        ["api@main", "web@main", "worker@main"]
    );
    assert_eq!(
        run(
            json!([{"repositoryMatch": "^w", "labelMatch": "team"}]),
            json!({})
        )
        .await,
        ["worker@main"]
    );
    // Path filters, on the branch's content; a directory counts, a trailing slash is ignored.
    assert_eq!(
        run(json!([{"pathsExist": ["deploy/"]}]), json!({})).await,
        ["api@main", "worker@main"]
    );
    assert_eq!(
        run(
            json!([{"pathsExist": ["kustomization.yaml"], "pathsDoNotExist": ["deploy"]}]),
            json!({})
        )
        .await,
        ["old@main", "web@main"]
    );
    assert_eq!(
        run(
            json!([{"branchMatch": "^feature/", "pathsExist": ["extra.txt"]}]),
            json!({"gitea": {"allBranches": true}})
        )
        .await,
        ["api@feature/Login_Page"]
    );
    // A repository filter and a branch filter must both pass.
    assert_eq!(
        run(
            json!([{"repositoryMatch": "^(api|web)$"}, {"pathsExist": ["deploy"]}]),
            json!({})
        )
        .await,
        ["api@main"]
    );
    // A bad regular expression is the generator's error, naming it.
    let bad = scm(gitea, org, json!({"filters": [{"repositoryMatch": "("}]}));
    let err = scm_provider::generate(&bad, &set, &ctx)
        .await
        .expect_err("bad regexp");
    assert!(err.to_string().contains("RepositoryMatch"), "{err}");
}

#[tokio::test]
async fn scm_provider_gitea_errors_and_settings() {
    let gitea = Gitea::shared();
    let (mut ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-scm-err", gitea.token()).await;
    let set = appset(ns.name(), false);
    // An organisation that does not exist: an error naming the forge URL and status.
    let err = scm_provider::generate(&scm(gitea, "ascm-no-such-org", json!({})), &set, &ctx)
        .await
        .expect_err("missing org");
    let text = err.to_string();
    assert!(
        text.contains("/api/v1/orgs/ascm-no-such-org/repos") && text.contains("404"),
        "{text}"
    );
    assert!(!text.contains(gitea.token()));
    // A wrong token: 401 from Gitea, the token never in the message.
    let bad = namespace_with_token(&ctx, "ascm-scm-badtoken", "not-a-token").await;
    let err = scm_provider::generate(
        &scm(gitea, "ascm-no-such-org", json!({})),
        &appset(bad.name(), false),
        &ctx,
    )
    .await
    .expect_err("bad token");
    assert!(err.to_string().contains("401"), "{err}");
    assert!(!err.to_string().contains("not-a-token"), "{err}");
    // A missing Secret names it.
    let none = plumb_testenv::TestEnv::shared().namespace("ascm-scm-nosecret");
    let err = scm_provider::generate(
        &scm(gitea, "x", json!({})),
        &appset(none.name(), false),
        &ctx,
    )
    .await
    .expect_err("no secret");
    assert!(
        matches!(err, GeneratorError::Reference { .. }) && err.to_string().contains("forge-token"),
        "{err}"
    );
    // argocd-cmd-params-cm: providers off, or an allow list without this URL.
    ctx.scm.allowed_providers = vec!["https://gitea.example.com".to_owned()];
    let err = scm_provider::generate(&scm(gitea, "x", json!({})), &set, &ctx)
        .await
        .expect_err("not allowed");
    assert!(err.to_string().contains("not allowed"), "{err}");
    ctx.scm.enabled = false;
    let err = scm_provider::generate(&scm(gitea, "x", json!({})), &set, &ctx)
        .await
        .expect_err("disabled");
    assert_eq!(err.to_string(), "scm providers are disabled");
    // Providers Plumb does not implement yet.
    ctx.scm.enabled = true;
    ctx.scm.allowed_providers.clear();
    let gitlab: ScmProviderGenerator = spec(json!({"gitlab": {"group": "g"}}));
    let err = scm_provider::generate(&gitlab, &set, &ctx)
        .await
        .expect_err("gitlab");
    assert!(
        err.to_string()
            .contains("scmProvider gitlab is not supported by Plumb yet"),
        "{err}"
    );
}

fn pulls_spec(
    gitea: &Gitea,
    org: &str,
    repo: &str,
    extra: serde_json::Value,
) -> PullRequestGenerator {
    let mut v = json!({
        "gitea": {
            "owner": org,
            "repo": repo,
            "api": gitea.url(),
            "tokenRef": {"secretName": "forge-token", "key": "token"},
        },
    });
    if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        for (k, val) in extra {
            if k == "gitea" {
                for (gk, gv) in val.as_object().expect("object") {
                    obj["gitea"][gk] = gv.clone();
                }
            } else {
                obj.insert(k.clone(), val.clone());
            }
        }
    }
    spec(v)
}

#[tokio::test]
async fn pull_request_gitea_end_to_end() {
    let gitea = Gitea::shared();
    let org = Gitea::unique("ascm-pulls");
    gitea.create_org(&org);
    gitea.create_repo(&org, "app", &[("README.md", "app\n")]);
    let preview = gitea.create_label(&org, "app", "preview");
    let urgent = gitea.create_label(&org, "app", "urgent");
    let branches = [
        "feature/Add_Login",
        "fix/crash",
        "feat-3",
        "feat-4",
        "chore/deps",
    ];
    let mut heads = std::collections::BTreeMap::new();
    let mut numbers = std::collections::BTreeMap::new();
    for (i, branch) in branches.into_iter().enumerate() {
        let file = format!("f{i}.txt");
        let head = gitea.push_branch(&org, "app", branch, Some("main"), &[(file.as_str(), "x")]);
        heads.insert(branch, head);
        let labels = match branch {
            "feature/Add_Login" => vec![preview, urgent],
            "fix/crash" => vec![preview],
            _ => vec![],
        };
        let n = gitea.create_pull(
            &org,
            "app",
            branch,
            "main",
            &format!("PR {branch}"),
            &labels,
        );
        numbers.insert(branch, n);
    }
    gitea.close_pull(&org, "app", numbers["chore/deps"]);

    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-pr-gitea", gitea.token()).await;
    let go = appset(ns.name(), true);
    // Every open pull request (four: more than a page), closed ones left out.
    let params = pull_request::generate(&pulls_spec(gitea, &org, "app", json!({})), &go, &ctx)
        .await
        .expect("generate");
    let mut branches = column(&params, "branch");
    branches.sort();
    assert_eq!(
        branches,
        ["feat-3", "feat-4", "feature/Add_Login", "fix/crash"]
    );
    let login = params
        .iter()
        .find(|p| p["branch"] == "feature/Add_Login")
        .expect("login PR");
    let head = &heads["feature/Add_Login"];
    assert_eq!(login["number"], numbers["feature/Add_Login"].to_string());
    assert_eq!(login["title"], "PR feature/Add_Login");
    assert_eq!(login["branch_slug"], "feature-add-login");
    assert_eq!(login["target_branch"], "main");
    assert_eq!(login["target_branch_slug"], "main");
    assert_eq!(login["head_sha"], head.as_str());
    assert_eq!(login["head_short_sha"], &head[..8]);
    assert_eq!(login["head_short_sha_7"], &head[..7]);
    assert_eq!(login["author"], gitea.user());
    assert_eq!(login["labels"], json!(["preview", "urgent"]));

    // labels: all must be on the pull request; filters: any passes; values.
    let flat = appset(ns.name(), false);
    let params = pull_request::generate(
        &pulls_spec(
            gitea,
            &org,
            "app",
            json!({
                "gitea": {"labels": ["preview"]},
                "values": {"app": "app-{{branch_slug}}-{{number}}"},
            }),
        ),
        &flat,
        &ctx,
    )
    .await
    .expect("generate");
    let mut apps = column(&params, "values.app");
    apps.sort();
    assert_eq!(
        apps,
        [
            format!("app-feature-add-login-{}", numbers["feature/Add_Login"]),
            format!("app-fix-crash-{}", numbers["fix/crash"]),
        ]
    );
    assert!(
        params.iter().all(|p| !p.contains_key("labels")),
        "labels only with goTemplate"
    );
    let params = pull_request::generate(
        &pulls_spec(
            gitea,
            &org,
            "app",
            json!({
                "gitea": {"labels": ["preview", "urgent"]},
            }),
        ),
        &flat,
        &ctx,
    )
    .await
    .expect("generate");
    assert_eq!(column(&params, "branch"), ["feature/Add_Login"]);
    let params = pull_request::generate(
        &pulls_spec(gitea, &org, "app", json!({
            "filters": [{"branchMatch": "^feat-"}, {"titleMatch": "crash$", "targetBranchMatch": "^main$"}],
        })),
        &flat,
        &ctx,
    )
    .await
    .expect("generate");
    let mut branches = column(&params, "branch");
    branches.sort();
    assert_eq!(branches, ["feat-3", "feat-4", "fix/crash"]);
}

#[tokio::test]
async fn pull_request_gitea_repo_not_found() {
    let gitea = Gitea::shared();
    let (ctx, _dir) = context(Limits::default()).await;
    let ns = namespace_with_token(&ctx, "ascm-pr-404", gitea.token()).await;
    let set = appset(ns.name(), false);
    let missing = pulls_spec(gitea, "ascm-nobody", "nothing", json!({}));
    let err = pull_request::generate(&missing, &set, &ctx)
        .await
        .expect_err("404");
    assert!(
        err.to_string().contains("404")
            && err.to_string().contains("/repos/ascm-nobody/nothing/pulls"),
        "{err}"
    );
    let forgiving = pulls_spec(
        gitea,
        "ascm-nobody",
        "nothing",
        json!({"continueOnRepoNotFoundError": true}),
    );
    let params = pull_request::generate(&forgiving, &set, &ctx)
        .await
        .expect("forgiven");
    assert!(params.is_empty());
}
