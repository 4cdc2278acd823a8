//! The `argoproj.io/v1alpha1` ApplicationSet API types, with the field names and optionality of
//! Argo CD's `pkg/apis/application/v1alpha1/applicationset_types.go`.
//!
//! As for Applications, optional fields are `Option` so a manifest read and written back keeps
//! exactly the fields it had. The Application template's `spec` is kept as JSON: it is rendered
//! string by string (`{{param}}` or Go templates) before it is read as an [`ApplicationSpec`].
//!
//! ```
//! use plumb_model::applicationset::ApplicationSet;
//! let set: ApplicationSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
//!     "metadata": {"name": "guestbook", "namespace": "argocd"},
//!     "spec": {
//!         "generators": [{"list": {"elements": [{"cluster": "engineering-dev", "url": "https://1.2.3.4"}]}}],
//!         "template": {
//!             "metadata": {"name": "{{cluster}}-guestbook"},
//!             "spec": {"project": "default",
//!                      "source": {"repoURL": "https://example.com/apps.git", "path": "guestbook/{{cluster}}"},
//!                      "destination": {"server": "{{url}}", "namespace": "guestbook"}}}}
//! })).unwrap();
//! assert!(set.spec.generators[0].list.is_some());
//! ```
//!
//! [`ApplicationSpec`]: crate::application::ApplicationSpec

mod generators;
mod set;
mod status;
mod template;

pub use generators::{
    ApplicationSetGenerator, BasicAuthBitbucketServer, BearerTokenBitbucket, ClusterGenerator,
    ConfigMapKeyRef, DuckTypeGenerator, GitDirectoryGeneratorItem, GitFileGeneratorItem,
    GitGenerator, LabelSelector, LabelSelectorRequirement, ListGenerator, MatrixGenerator,
    MergeGenerator, PluginConfigMapRef, PluginGenerator, PluginInput, PullRequestGenerator,
    PullRequestGeneratorAzureDevOps, PullRequestGeneratorBitbucket,
    PullRequestGeneratorBitbucketServer, PullRequestGeneratorFilter, PullRequestGeneratorGitLab,
    PullRequestGeneratorGitea, PullRequestGeneratorGithub, ScmProviderGenerator,
    ScmProviderGeneratorAzureDevOps, ScmProviderGeneratorBitbucket,
    ScmProviderGeneratorBitbucketServer, ScmProviderGeneratorFilter, ScmProviderGeneratorGitea,
    ScmProviderGeneratorGithub, ScmProviderGeneratorGitlab, SecretRef,
};
pub use set::{
    ApplicationMatchExpression, ApplicationPreservedFields, ApplicationSet,
    ApplicationSetResourceIgnoreDifferences, ApplicationSetRolloutStep,
    ApplicationSetRolloutStrategy, ApplicationSetSpec, ApplicationSetStrategy,
    ApplicationSetSyncPolicy, ApplicationsSyncPolicy, KIND,
};
pub use status::{
    ApplicationSetApplicationStatus, ApplicationSetCondition, ApplicationSetStatus, condition,
};
pub use template::{ApplicationSetTemplate, ApplicationSetTemplateMeta};
