//! The project's `sourceRepos`, applied to the repositories a render reaches on its own (value
//! file URLs, chart dependencies, kustomize remote bases).

/// Whether the project's `sourceRepos` `patterns` permit the repository `url` (Argo's rules:
/// the same matching as an Application's own source).
pub(crate) fn repo_permitted(patterns: &[String], url: &str) -> bool {
    let project = plumb_model::application::AppProject {
        api_version: None,
        kind: None,
        metadata: Default::default(),
        spec: plumb_model::application::AppProjectSpec {
            source_repos: Some(patterns.to_vec()),
            ..Default::default()
        },
        status: None,
    };
    plumb_policy::project::source_permitted(&project, url)
}
