//! Generators: an ApplicationSet's `spec.generators` to parameter sets (Argo's
//! `applicationset/generators` and its `Transform`).
//!
//! [`generate_params`] runs one generator entry: every kind set in it (Argo runs them all),
//! each kind's parameters filtered by the entry's `selector`, paired with the kind's template
//! override. Matrix and merge call back into the same function for their children, so a
//! selector applies at every level.

mod clusters;
mod duck_type;
mod git;
mod glob;
mod list;
mod matrix;
mod merge;
mod nested;
mod plugin;
pub mod pull_request;
pub mod scm_provider;
mod selector;
pub mod values;

use std::time::Duration;

use futures::future::BoxFuture;
use plumb_model::applicationset::{
    ApplicationSet, ApplicationSetGenerator, ApplicationSetTemplate,
};

pub use clusters::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use nested::Children;
use selector::Selector;
use values::Mode;

use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// One parameter set and the template override of the generator that produced it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamSet {
    /// The parameters.
    pub params: Params,
    /// The generator's `template` (merged over the ApplicationSet's by the template step).
    pub template: Option<ApplicationSetTemplate>,
}

/// Argo's default re-evaluation interval of git and clusterDecisionResource generators.
pub const DEFAULT_REQUEUE_AFTER: Duration = Duration::from_secs(3 * 60);
/// Argo's default re-evaluation interval of scmProvider, pullRequest and plugin generators.
pub const DEFAULT_SLOW_REQUEUE_AFTER: Duration = Duration::from_secs(30 * 60);

/// How deep matrix and merge nest (Argo's types allow a matrix or merge inside one, no deeper).
const MAX_NESTING: usize = 2;

/// The parameter sets of one generator entry of `set`.
pub async fn generate_params(
    generator: &ApplicationSetGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Vec<ParamSet>, GeneratorError> {
    transform(generator, set, ctx, None, 0).await
}

/// The kinds a generator entry sets, in Argo's field order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Clusters,
    Git,
    ScmProvider,
    ClusterDecisionResource,
    PullRequest,
    Matrix,
    Merge,
    Plugin,
    Oci,
}

fn kinds(generator: &ApplicationSetGenerator) -> Vec<Kind> {
    [
        (generator.list.is_some(), Kind::List),
        (generator.clusters.is_some(), Kind::Clusters),
        (generator.git.is_some(), Kind::Git),
        (generator.scm_provider.is_some(), Kind::ScmProvider),
        (
            generator.cluster_decision_resource.is_some(),
            Kind::ClusterDecisionResource,
        ),
        (generator.pull_request.is_some(), Kind::PullRequest),
        (generator.matrix.is_some(), Kind::Matrix),
        (generator.merge.is_some(), Kind::Merge),
        (generator.plugin.is_some(), Kind::Plugin),
        (generator.oci.is_some(), Kind::Oci),
    ]
    .into_iter()
    .filter_map(|(set, kind)| set.then_some(kind))
    .collect()
}

/// Argo's `Transform`: `parent` is the first matrix generator's parameter set the entry is
/// rendered with; `depth` counts the matrix/merge levels above.
pub(crate) fn transform<'a>(
    generator: &'a ApplicationSetGenerator,
    set: &'a ApplicationSet,
    ctx: &'a Context,
    parent: Option<&'a Params>,
    depth: usize,
) -> BoxFuture<'a, Result<Vec<ParamSet>, GeneratorError>> {
    Box::pin(async move {
        let mode = Mode::of(set);
        let rendered;
        let generator = match parent.filter(|p| !p.is_empty()) {
            Some(params) => {
                rendered = matrix::interpolate(generator, params, mode)?;
                &rendered
            }
            None => generator,
        };
        let selector = generator
            .selector
            .as_ref()
            .map(Selector::parse)
            .transpose()?;
        let found = kinds(generator);
        if found.is_empty() {
            return Err(GeneratorError::Invalid(
                "the generator sets no known kind (list, clusters, git, scmProvider, \
                 clusterDecisionResource, pullRequest, matrix, merge, plugin)"
                    .to_owned(),
            ));
        }
        let mut out = Vec::new();
        for kind in found {
            let params = run(kind, generator, set, ctx, depth).await?;
            let template =
                template_of(kind, generator).filter(|t| **t != ApplicationSetTemplate::default());
            out.extend(
                params
                    .into_iter()
                    .filter(|p| selector.as_ref().is_none_or(|s| s.matches(p)))
                    .map(|params| ParamSet {
                        params,
                        template: template.cloned(),
                    }),
            );
        }
        Ok(out)
    })
}

async fn run(
    kind: Kind,
    generator: &ApplicationSetGenerator,
    set: &ApplicationSet,
    ctx: &Context,
    depth: usize,
) -> Result<Vec<Params>, GeneratorError> {
    let mode = Mode::of(set);
    let g = generator;
    match kind {
        Kind::List => list::generate(need(g.list.as_ref())?, mode, ctx.limits.max_params),
        Kind::Clusters => clusters::generate(need(g.clusters.as_ref())?, mode, ctx).await,
        Kind::Git => git::generate(need(g.git.as_ref())?, mode, ctx).await,
        Kind::ClusterDecisionResource => {
            duck_type::generate(need(g.cluster_decision_resource.as_ref())?, mode, ctx).await
        }
        Kind::Plugin => plugin::generate(need(g.plugin.as_ref())?, set, ctx).await,
        Kind::Matrix | Kind::Merge => {
            if depth >= MAX_NESTING {
                return Err(GeneratorError::Invalid(
                    "matrix and merge generators nest at most two levels deep (as in Argo CD)"
                        .to_owned(),
                ));
            }
            let children = Nested {
                set,
                ctx,
                depth: depth + 1,
            };
            match kind {
                Kind::Matrix => {
                    matrix::generate(need(g.matrix.as_deref())?, set, ctx, &children).await
                }
                _ => merge::generate(need(g.merge.as_deref())?, set, &children).await,
            }
        }
        Kind::ScmProvider => scm_provider::generate(need(g.scm_provider.as_ref())?, set, ctx).await,
        Kind::PullRequest => pull_request::generate(need(g.pull_request.as_ref())?, set, ctx).await,
        Kind::Oci => Err(GeneratorError::Invalid(
            "the oci generator is not supported by Plumb".to_owned(),
        )),
    }
}

/// The configuration of a kind [`kinds`] found set.
fn need<T>(spec: Option<&T>) -> Result<&T, GeneratorError> {
    spec.ok_or_else(|| GeneratorError::Invalid("ApplicationSet is empty".to_owned()))
}

/// The children of a matrix or merge at `depth`.
struct Nested<'a> {
    set: &'a ApplicationSet,
    ctx: &'a Context,
    depth: usize,
}

impl Children for Nested<'_> {
    fn params<'a>(
        &'a self,
        generator: &'a ApplicationSetGenerator,
        parent: Option<&'a Params>,
    ) -> BoxFuture<'a, Result<Vec<Params>, GeneratorError>> {
        Box::pin(async move {
            let sets = transform(generator, self.set, self.ctx, parent, self.depth).await?;
            Ok(sets
                .into_iter()
                .map(|ParamSet { params, .. }| params)
                .collect())
        })
    }
}

fn template_of(kind: Kind, generator: &ApplicationSetGenerator) -> Option<&ApplicationSetTemplate> {
    match kind {
        Kind::List => generator.list.as_ref()?.template.as_ref(),
        Kind::Clusters => generator.clusters.as_ref()?.template.as_ref(),
        Kind::Git => generator.git.as_ref()?.template.as_ref(),
        Kind::ScmProvider => generator.scm_provider.as_ref()?.template.as_ref(),
        Kind::ClusterDecisionResource => generator
            .cluster_decision_resource
            .as_ref()?
            .template
            .as_ref(),
        Kind::PullRequest => generator.pull_request.as_ref()?.template.as_ref(),
        Kind::Matrix => generator.matrix.as_ref()?.template.as_ref(),
        Kind::Merge => generator.merge.as_ref()?.template.as_ref(),
        Kind::Plugin => generator.plugin.as_ref()?.template.as_ref(),
        Kind::Oci => None,
    }
}

/// When the controller should reconcile `set` again without a change: Argo's
/// `getMinRequeueAfter` (the smallest interval of its generators; list and clusters have none,
/// an explicit `requeueAfterSeconds: 0` counts as none). `default` is the interval of git, OCI
/// and clusterDecisionResource generators that set none (`applicationsetcontroller.requeue.after`).
pub fn requeue_after(set: &ApplicationSet, default: Duration) -> Option<Duration> {
    let mut res = Duration::ZERO;
    for generator in &set.spec.generators {
        for kind in kinds(generator) {
            let t = kind_requeue(kind, generator, default);
            if res.is_zero() || (!t.is_zero() && t < res) {
                res = t;
            }
        }
    }
    (!res.is_zero()).then_some(res)
}

fn seconds(s: Option<i64>, default: Duration) -> Duration {
    s.map_or(default, |s| Duration::from_secs(s.max(0).unsigned_abs()))
}

fn kind_requeue(kind: Kind, generator: &ApplicationSetGenerator, default: Duration) -> Duration {
    let children = |gens: Option<&Vec<ApplicationSetGenerator>>| {
        gens.into_iter()
            .flatten()
            .flat_map(|g| {
                kinds(g)
                    .into_iter()
                    .map(move |k| kind_requeue(k, g, default))
            })
            .filter(|t| !t.is_zero())
            .min()
            .unwrap_or(Duration::ZERO)
    };
    match kind {
        Kind::List | Kind::Clusters => Duration::ZERO,
        Kind::Git => seconds(
            generator.git.as_ref().and_then(|g| g.requeue_after_seconds),
            default,
        ),
        Kind::ClusterDecisionResource => seconds(
            generator
                .cluster_decision_resource
                .as_ref()
                .and_then(|g| g.requeue_after_seconds),
            default,
        ),
        Kind::ScmProvider => seconds(
            generator
                .scm_provider
                .as_ref()
                .and_then(|g| g.requeue_after_seconds),
            DEFAULT_SLOW_REQUEUE_AFTER,
        ),
        Kind::PullRequest => seconds(
            generator
                .pull_request
                .as_ref()
                .and_then(|g| g.requeue_after_seconds),
            DEFAULT_SLOW_REQUEUE_AFTER,
        ),
        Kind::Plugin => seconds(
            generator
                .plugin
                .as_ref()
                .and_then(|g| g.requeue_after_seconds),
            DEFAULT_SLOW_REQUEUE_AFTER,
        ),
        // Argo's OCI generator re-reads like git.
        Kind::Oci => default,
        Kind::Matrix => children(
            generator
                .matrix
                .as_ref()
                .and_then(|m| m.generators.as_ref()),
        ),
        Kind::Merge => children(generator.merge.as_ref().and_then(|m| m.generators.as_ref())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(generators: serde_json::Value) -> ApplicationSet {
        serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "argocd"},
            "spec": {"generators": generators, "template": {"metadata": {}, "spec": {}}}
        }))
        .unwrap()
    }

    const D: Duration = DEFAULT_REQUEUE_AFTER;

    #[test]
    fn requeue_after_as_argo() {
        assert_eq!(
            requeue_after(&set(json!([{"list": {"elements": []}}])), D),
            None
        );
        let s = set(
            json!([{"list": {"elements": []}}, {"git": {"repoURL": "x", "directories": [{"path": "*"}]}}]),
        );
        assert_eq!(requeue_after(&s, D), Some(DEFAULT_REQUEUE_AFTER));
        let s = set(json!([
            {"plugin": {"configMapRef": {"name": "p"}}},
            {"matrix": {"generators": [
                {"clusters": {}},
                {"git": {"repoURL": "x", "requeueAfterSeconds": 30, "directories": [{"path": "*"}]}}
            ]}}
        ]));
        assert_eq!(requeue_after(&s, D), Some(Duration::from_secs(30)));
        let s = set(json!([{"pullRequest": {}}]));
        assert_eq!(requeue_after(&s, D), Some(DEFAULT_SLOW_REQUEUE_AFTER));
        // The controller-wide default replaces 3m for git, not the slow generators' 30m.
        let s = set(json!([
            {"git": {"repoURL": "x", "directories": [{"path": "*"}]}},
            {"pullRequest": {}}
        ]));
        assert_eq!(
            requeue_after(&s, Duration::from_secs(10)),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            requeue_after(&s, Duration::from_secs(7200)),
            Some(DEFAULT_SLOW_REQUEUE_AFTER)
        );
    }
}
