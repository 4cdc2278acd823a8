//! `app diff` in core mode: the comparison computed here with the controller's code.

use std::io::Write;

use anyhow::{Context, Result};
use plumb_model::application::Application;

use super::compare::compare_app;
use crate::cmd::app::client::AppClient;
use crate::cmd::app::diff_view::DiffView;
use crate::cmd::diff::render_options;

/// Compares `app` with the cluster and writes the `app diff` text of every differing object
/// (hooks left out, Secrets masked, live objects Git no longer declares shown as removed) to
/// `out`; returns how many objects differ.
pub(crate) async fn print_diff(
    client: &AppClient,
    app: &Application,
    view: &DiffView,
    out: &mut (dyn Write + Send),
) -> Result<usize> {
    let cmp = compare_app(
        client,
        app,
        view.revision.clone(),
        view.hard_refresh,
        view.attribution,
        view.local.as_ref(),
    )
    .await?;
    // As `argocd app diff`: a modified object, and a tracked live object Git no longer
    // declares (shown as removed, so a gate on the exit code sees deletions).
    let shown: Vec<plumb_diff::MaskedDiff> = cmp
        .resources
        .iter()
        .filter(|r| !r.hook)
        .filter_map(|r| r.diff.as_ref())
        .filter(|d| d.modified || d.action == plumb_diff::Action::Extra)
        .map(plumb_diff::mask)
        .collect();
    let opts = render_options(view.format.format(), view.attribution);
    plumb_diff::render(&shown, &opts, out).context("writing the diff")?;
    out.flush().context("writing the diff")?;
    Ok(shown.len())
}
