//! One look at an Application: compare it with its cluster, apply its project's verdicts, and
//! know the status that says what was found. The controller observes on every reconcile and at
//! the end of every operation; both go through [`observe`].

use std::sync::Arc;

use plumb_model::application::{AppProject, Application};
use plumb_source::Renderer;

use crate::compare::{CompareOptions, Comparison, compare, compare_after_sync};
use crate::context::{Cluster, Engines};
use crate::error::Result;
use crate::guard::apply_project;
use crate::status::{self, StatusPatch};
use crate::written::Written;

/// What an Application is compared with, and under which rules.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// Its AppProject.
    pub project: &'a AppProject,
    /// Its destination cluster.
    pub cluster: &'a Cluster,
    /// The engines the settings configure.
    pub engines: &'a Engines,
    /// The renderer of its sources.
    pub renderer: &'a Arc<Renderer>,
}

/// What one look found.
pub struct Observation {
    /// The comparison, with the project's verdicts applied, or why it failed.
    pub comparison: Result<Comparison>,
    /// When the look began (the time the status records).
    pub now: String,
}

/// Compares `app` with its destination and applies its project's verdicts. `written`: right
/// after a sync, what it wrote (those objects are read from its answers, see
/// [`compare_after_sync`]).
pub async fn observe(
    app: &Application,
    target: Target<'_>,
    opts: &CompareOptions,
    written: Option<&Written>,
) -> Observation {
    let now = status::now();
    let Target {
        project,
        cluster,
        engines,
        renderer,
    } = target;
    let compared = match written {
        Some(w) => compare_after_sync(app, engines, cluster, renderer, opts, w).await,
        None => compare(app, engines, cluster, renderer, opts).await,
    };
    let comparison = compared.map(|mut cmp| {
        apply_project(&mut cmp, project, app, cluster, engines);
        cmp
    });
    Observation { comparison, now }
}

impl Observation {
    /// The sync and health codes found (`Unknown` for both when the comparison failed).
    pub fn codes(&self) -> (String, String) {
        match &self.comparison {
            Ok(c) => (
                c.sync.as_str().to_string(),
                c.health.code.as_str().to_string(),
            ),
            Err(_) => ("Unknown".to_string(), "Unknown".to_string()),
        }
    }

    /// The status that records what was found.
    pub fn status(&self, app: &Application) -> StatusPatch {
        match &self.comparison {
            Ok(c) => status::from_comparison(app, c, &self.now),
            Err(e) => status::from_comparison_error(app, e, &self.now),
        }
    }
}
