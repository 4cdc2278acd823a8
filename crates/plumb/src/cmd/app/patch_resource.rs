//! `plumb app patch-resource NAME --kind K [--resource-name N] --patch P [--patch-type T]`:
//! Argo CD's `argocd app patch-resource`: patches managed resources of the Application (found
//! with Argo's resource filter) with a JSON merge patch (default), a JSON patch or a strategic
//! merge patch, and reports `Resource 'N' patched` for each.

use anyhow::{Context, Result, bail};
use clap::Args;
use kube::api::{Patch, PatchParams};
use serde_json::Value;

use super::client::AppClient;
use super::cluster::managed::{self, ResourceFilterArgs};
use crate::exit::Outcome;

const MERGE: &str = "application/merge-patch+json";
const JSON: &str = "application/json-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";

/// `plumb app patch-resource`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Scale a Deployment of an application\n  plumb app patch-resource guestbook --kind Deployment --resource-name guestbook-ui --patch '{\"spec\": {\"replicas\": 2}}'\n\n  # The same with a JSON patch\n  plumb app patch-resource guestbook --kind Deployment --resource-name guestbook-ui --patch-type application/json-patch+json --patch '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 2}]'"
)]
pub struct PatchResourceArgs {
    /// Application name.
    pub(crate) name: String,
    /// Patch.
    #[arg(long, required = true)]
    pub(crate) patch: String,
    /// Which Patching strategy to use: 'application/json-patch+json', 'application/merge-patch+json', or 'application/strategic-merge-patch+json'.
    #[arg(long = "patch-type", default_value = MERGE)]
    pub(crate) patch_type: String,
    #[command(flatten)]
    pub(crate) filter: ResourceFilterArgs,
    /// Indicates whether to patch multiple matching of resources.
    #[arg(long)]
    pub(crate) all: bool,
}

/// The patch a `--patch-type` and `--patch` describe.
pub fn parse_patch(patch_type: &str, text: &str) -> Result<Patch<Value>> {
    let value: Value =
        serde_json::from_str(text).with_context(|| format!("--patch is not JSON: {text}"))?;
    Ok(match patch_type {
        MERGE => Patch::Merge(value),
        STRATEGIC => Patch::Strategic(value),
        JSON => Patch::Json(
            serde_json::from_value::<json_patch::Patch>(value)
                .context("--patch is not a JSON patch (a list of {op, path, value})")?,
        ),
        other => {
            bail!("unsupported --patch-type '{other}': use '{JSON}', '{MERGE}' or '{STRATEGIC}'")
        }
    })
}

/// Runs `plumb app patch-resource`.
pub async fn run(client: &AppClient, args: PatchResourceArgs) -> Result<Outcome> {
    if args.filter.kind.as_deref().is_none_or(str::is_empty) {
        bail!("required flag(s) \"kind\" not set");
    }
    let patch = parse_patch(&args.patch_type, &args.patch)?;
    let app = client.get(&args.name).await?;
    let dest = managed::destination(client, &app).await?;
    let found = managed::filter(
        managed::live_resources(&dest, &app).await?,
        &args.filter,
        args.all,
    )?;
    for r in &found {
        let (_, api) = dest.api(&r.key, None).await?;
        api.patch(&r.key.name, &PatchParams::default(), &patch)
            .await
            .with_context(|| format!("patching {}", r.key))?;
        eprintln!("Resource '{}' patched", r.key.name);
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_types() {
        assert!(matches!(
            parse_patch(MERGE, r#"{"spec":{"replicas":2}}"#).unwrap(),
            Patch::Merge(_)
        ));
        assert!(matches!(
            parse_patch(
                JSON,
                r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#
            )
            .unwrap(),
            Patch::Json(_)
        ));
        assert!(matches!(
            parse_patch(STRATEGIC, r#"{"spec":{}}"#).unwrap(),
            Patch::Strategic(_)
        ));
        assert!(parse_patch(JSON, r#"{"spec":{}}"#).is_err());
        assert!(parse_patch(MERGE, "spec: 2").is_err());
        assert_eq!(
            parse_patch("merge", "{}").unwrap_err().to_string(),
            "unsupported --patch-type 'merge': use 'application/json-patch+json', 'application/merge-patch+json' or 'application/strategic-merge-patch+json'"
        );
    }
}
