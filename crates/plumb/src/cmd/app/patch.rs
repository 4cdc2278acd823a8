//! `plumb app patch NAME --patch P [--type json|merge]`: Argo CD's `argocd app patch`: a JSON
//! patch (default) or JSON merge patch on the whole Application, then what Argo's server keeps
//! of the result (spec, labels, annotations, finalizers), checked as `app set` checks it; prints
//! the Application as YAML.

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::application::Application;
use serde_json::{Value, json};

use super::client::AppClient;
use crate::exit::Outcome;

/// `plumb app patch`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Update an application's source path using json patch\n  plumb app patch myapplication --patch='[{\"op\": \"replace\", \"path\": \"/spec/source/path\", \"value\": \"newPath\"}]' --type json\n\n  # Update an application's repository target revision using merge patch\n  plumb app patch myapplication --patch '{\"spec\": { \"source\": { \"targetRevision\": \"master\" } }}' --type merge"
)]
pub struct PatchArgs {
    /// Application name.
    name: String,
    /// Patch body.
    #[arg(long, required = true)]
    patch: String,
    /// The type of patch being provided; one of [json merge].
    #[arg(long = "type", default_value = "json")]
    patch_type: String,
}

/// The Application after the patch.
pub fn patched(app: &Application, patch_type: &str, patch: &str) -> Result<Application> {
    let mut doc = serde_json::to_value(app)?;
    match patch_type {
        "json" | "" => {
            let p: json_patch::Patch = serde_json::from_str(patch)
                .with_context(|| format!("--patch is not a JSON patch: {patch}"))?;
            json_patch::patch(&mut doc, &p).context("applying the JSON patch")?;
        }
        "merge" => {
            let p: Value = serde_json::from_str(patch)
                .with_context(|| format!("--patch is not JSON: {patch}"))?;
            json_patch::merge(&mut doc, &p);
        }
        other => bail!("Patch type '{other}' is not supported"),
    }
    serde_json::from_value(doc).context("the patched Application is not valid")
}

/// What `app patch` prints: the Application as YAML, then an empty line (Argo's `fmt.Println`
/// of YAML that ends in a newline).
pub fn printed(app: &Application) -> Result<String> {
    Ok(format!("{}\n", crate::output::yaml::render(app)?))
}

/// Runs `plumb app patch`.
pub async fn run(client: &AppClient, args: PatchArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let new = patched(&app, &args.patch_type, &args.patch)?;
    super::create::validate(&new)?;
    super::set::check_project(client, &new).await?;
    let old_doc = json!({"metadata": {"labels": app.metadata.labels, "annotations": app.metadata.annotations,
        "finalizers": app.metadata.finalizers}, "spec": app.spec});
    let new_doc = json!({"metadata": {"labels": new.metadata.labels, "annotations": new.metadata.annotations,
        "finalizers": new.metadata.finalizers}, "spec": new.spec});
    let stored = match plumb_model::go::merge_patch::merge_patch(&old_doc, &new_doc) {
        None => app,
        Some(patch) => {
            let rv = app
                .metadata
                .other
                .get("resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            client
                .merge_patch_at(&args.name, &rv, patch)
                .await?
                .with_context(|| {
                    format!(
                        "application '{}' changed while patching it; try again",
                        args.name
                    )
                })?
        }
    };
    print!("{}", printed(&stored)?);
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> Application {
        serde_json::from_value(json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "guestbook", "namespace": "argocd"},
            "spec": {"project": "default", "source": {"repoURL": "https://g/r.git", "path": "guestbook", "targetRevision": "HEAD"},
                "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"}}}))
        .unwrap()
    }

    #[test]
    fn printed_as_argo_prints_it() {
        let a = patched(
            &app(),
            "merge",
            r#"{"spec": {"source": {"targetRevision": "v2"}}}"#,
        )
        .unwrap();
        crate::snapshot::check("patch-guestbook.yaml", &printed(&a).unwrap());
    }

    #[test]
    fn json_and_merge_patches() {
        let a = patched(
            &app(),
            "json",
            r#"[{"op": "replace", "path": "/spec/source/path", "value": "newPath"}]"#,
        )
        .unwrap();
        assert_eq!(a.spec.source.unwrap().path.as_deref(), Some("newPath"));
        let a = patched(
            &app(),
            "merge",
            r#"{"spec": {"source": {"targetRevision": "master"}}}"#,
        )
        .unwrap();
        assert_eq!(
            a.spec.source.unwrap().target_revision.as_deref(),
            Some("master")
        );
        assert_eq!(
            patched(&app(), "strategic", "{}").unwrap_err().to_string(),
            "Patch type 'strategic' is not supported"
        );
        assert!(
            patched(
                &app(),
                "json",
                r#"[{"op": "replace", "path": "/spec/nope/x", "value": 1}]"#
            )
            .is_err()
        );
    }
}
