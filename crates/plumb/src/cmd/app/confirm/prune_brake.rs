//! The brake on mass deletion for a manual `plumb app sync --prune` (and `app rollback
//! --prune`): when the last comparison says the sync would delete more objects than the brake
//! lets an automated sync delete (`plumb_policy::brake`), ask before requesting it, as Argo's
//! `AskToProceed`; `--assumeYes` answers yes; with no terminal on stdin and no `--assumeYes` the
//! sync is refused, so a script never deletes most of an Application by accident.

use std::io::IsTerminal;

use anyhow::{Result, bail};
use plumb_model::application::{Application, SyncOperationResource};
use plumb_policy::brake::{Brake, Stopped};

use crate::cmd::app::client::AppClient;
use crate::cmd::app::confirm::prompt::ask_to_proceed;

/// What the brake says of pruning `app` (only the `selected` resources when some are).
pub fn judge(
    app: &Application,
    selected: Option<&[SyncOperationResource]>,
    brake: &Brake,
) -> Result<(), Stopped> {
    let resources = app
        .status
        .as_ref()
        .and_then(|s| s.resources.as_deref())
        .unwrap_or_default();
    let managed = resources.iter().filter(|r| r.hook != Some(true));
    let live = managed
        .clone()
        .filter(|r| {
            r.requires_pruning == Some(true)
                || r.health.as_ref().and_then(|h| h.status.as_deref()) != Some("Missing")
        })
        .count();
    let deletions = managed
        .filter(|r| r.requires_pruning == Some(true))
        .filter(|r| {
            selected.is_none_or(|sel| {
                sel.iter().any(|s| {
                    s.group.as_deref().unwrap_or_default() == r.group.as_deref().unwrap_or_default()
                        && s.kind == r.kind.as_deref().unwrap_or_default()
                        && s.name == r.name.as_deref().unwrap_or_default()
                        && s.namespace.as_deref().unwrap_or_default()
                            == r.namespace.as_deref().unwrap_or_default()
                })
            })
        })
        .count();
    brake.check(deletions, live)
}

/// Whether to go on with a sync that prunes `app`: yes when the brake would not stop it, else
/// the answer to the question (`--assumeYes`: yes; no terminal: an error).
pub async fn confirm(
    client: &AppClient,
    app: &Application,
    selected: Option<&[SyncOperationResource]>,
    assume_yes: bool,
) -> Result<bool> {
    let settings = client.settings().await?;
    let options: Vec<&str> = app
        .spec
        .sync_policy
        .as_ref()
        .and_then(|p| p.sync_options.as_ref())
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let resolved = Brake::resolve(|k| settings.get(k), &options);
    for problem in &resolved.invalid {
        eprintln!("plumb: warning: {problem}");
    }
    let Err(stopped) = judge(app, selected, &resolved.brake) else {
        return Ok(true);
    };
    let name = app.name();
    if assume_yes {
        eprintln!("plumb: application '{name}': {stopped}; going on (--assumeYes)");
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "refusing to sync application '{name}' with --prune: {stopped} (the mass-deletion brake). \
             Check what would be deleted with `plumb app diff {name}`, then confirm on a terminal or pass --assumeYes"
        );
    }
    ask_to_proceed(
        &format!(
            "Application '{name}': {stopped} (the mass-deletion brake). Check `plumb app diff {name}`. \
             Do you want to delete them? (y/n): "
        ),
        &mut std::io::stdin().lock(),
        &mut std::io::stdout(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn app(kept: usize, gone: usize, missing: usize) -> Application {
        let mut resources = Vec::new();
        for i in 0..kept {
            resources.push(json!({"version": "v1", "kind": "ConfigMap", "namespace": "payments", "name": format!("kept-{i}"), "status": "Synced"}));
        }
        for i in 0..gone {
            resources.push(json!({"version": "v1", "kind": "ConfigMap", "namespace": "payments", "name": format!("gone-{i}"), "status": "OutOfSync", "requiresPruning": true}));
        }
        for i in 0..missing {
            resources.push(json!({"version": "v1", "kind": "ConfigMap", "namespace": "payments", "name": format!("new-{i}"), "status": "OutOfSync", "health": {"status": "Missing"}}));
        }
        resources.push(json!({"group": "batch", "version": "v1", "kind": "Job", "namespace": "payments", "name": "migrate", "hook": true, "requiresPruning": true}));
        serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"namespace": "payments"}},
            "status": {"resources": resources}
        }))
        .unwrap()
    }

    #[test]
    fn counts_what_the_last_comparison_would_prune_of_the_live_objects() {
        let brake = Brake::default();
        assert!(judge(&app(10, 5, 0), None, &brake).is_ok());
        // Objects not yet created do not count as live; hooks are not counted at all.
        let stop = judge(&app(2, 11, 20), None, &brake).unwrap_err();
        assert_eq!((stop.deletions, stop.total), (11, 13));
        // A selective sync prunes only what it selects.
        let one = [SyncOperationResource {
            group: None,
            kind: "ConfigMap".into(),
            name: "gone-3".into(),
            namespace: Some("payments".into()),
        }];
        assert!(judge(&app(2, 11, 0), Some(&one), &brake).is_ok());
    }
}
