//! What generators may read, and the bounds they read it under.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::error::GeneratorError;

/// Bounds on everything a generator reads or produces.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Parameter sets one generator (or one matrix/merge) may produce.
    pub max_params: usize,
    /// Bytes of one file read by the git files generator, or of one HTTP answer.
    pub max_file_bytes: u64,
    /// Time one HTTP call (forge, plugin) may take, connection included.
    pub http_timeout: Duration,
    /// Pages one forge listing may follow.
    pub max_pages: usize,
    /// Files and directories the git generators look at in one checkout.
    pub max_tree_entries: usize,
    /// Bytes of all files one git files generator reads together.
    pub max_total_bytes: u64,
    /// Argo's `applicationsetcontroller.enable.new.git.file.globbing`: file patterns as
    /// `doublestar` globs instead of `git ls-files` pathspecs (where `*` crosses `/`).
    pub new_git_file_globbing: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_params: 10_000,
            max_file_bytes: 4 * 1024 * 1024,
            http_timeout: Duration::from_secs(30),
            max_pages: 100,
            max_tree_entries: 200_000,
            max_total_bytes: 64 * 1024 * 1024,
            new_git_file_globbing: false,
        }
    }
}

/// Where the git generators read repositories: in `plumb controller`, the Application
/// controller's renderer (one cache per repository and its repository credentials, so private
/// repositories work and Git work is shared); previews and tests, a cache of their own.
pub trait GitSource: Send + Sync {
    /// The Git cache.
    fn git(&self) -> &plumb_source::GitCache;
}

impl GitSource for plumb_source::GitCache {
    fn git(&self) -> &plumb_source::GitCache {
        self
    }
}

impl GitSource for plumb_source::Renderer {
    fn git(&self) -> &plumb_source::GitCache {
        plumb_source::Renderer::git(self)
    }
}

/// The clients and settings generators read through.
#[derive(Clone)]
pub struct Context {
    /// The Kubernetes client (cluster Secrets, ConfigMaps, duck-typed resources).
    pub client: kube::Client,
    /// The namespace of Argo CD's settings and cluster Secrets (the controller's namespace).
    pub control_namespace: String,
    /// Git repositories, fetched and checked out read-only.
    pub git: Arc<dyn GitSource>,
    /// HTTP client for forges and plugin services.
    pub http: reqwest::Client,
    /// Bounds.
    pub limits: Limits,
    /// Which forges the scmProvider and pullRequest generators may call.
    pub scm: ScmSettings,
}

/// argocd-cmd-params-cm's `applicationsetcontroller.enable.scm.providers` (default true) and
/// `applicationsetcontroller.allowed.scm.providers` (comma-separated API URLs; empty allows all).
#[derive(Debug, Clone)]
pub struct ScmSettings {
    /// Whether the scmProvider and pullRequest generators may run at all.
    pub enabled: bool,
    /// The only `api` URLs a generator may name (github.com, with no `api`, is always allowed,
    /// as in Argo).
    pub allowed_providers: Vec<String>,
}

impl Default for ScmSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            allowed_providers: Vec::new(),
        }
    }
}

impl Context {
    /// The value of `key` in Secret `name` of `namespace`, as text. Errors name the Secret and
    /// key, never the value.
    pub async fn secret_value(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
    ) -> Result<String, GeneratorError> {
        let what = || format!("secret {name:?} key {key:?} in namespace {namespace:?}");
        let secret = Api::<Secret>::namespaced(self.client.clone(), namespace)
            .get(name)
            .await
            .map_err(|e| GeneratorError::Reference {
                what: what(),
                message: e.to_string(),
            })?;
        let bytes = secret
            .data
            .and_then(|mut data| data.remove(key))
            .ok_or_else(|| GeneratorError::Reference {
                what: what(),
                message: "no such key".to_string(),
            })?;
        String::from_utf8(bytes.0).map_err(|_| GeneratorError::Reference {
            what: what(),
            message: "not UTF-8 text".to_string(),
        })
    }
}
