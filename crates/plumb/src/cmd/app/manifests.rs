//! `plumb app manifests NAME`: the objects an Application declares (`--source git`, rendered
//! from Git) or holds (`--source live`), as a YAML stream. Secret values are always masked.

use anyhow::Result;
use clap::{Args, ValueEnum};
use plumb_model::annotations::TRACKING_ID;
use serde_json::Value;

use super::backend::core::compare::compare_app;
use super::client::AppClient;
use crate::exit::Outcome;

/// Where the manifests come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// Rendered from the Application's source in Git.
    Git,
    /// The live objects in the cluster.
    Live,
}

/// Print an Application's manifests.
#[derive(Debug, Args)]
pub struct ManifestsArgs {
    /// Application name.
    pub(crate) name: String,
    /// Git (what the Application declares) or live (what the cluster holds).
    #[arg(long, value_enum, default_value = "git")]
    pub(crate) source: SourceArg,
    /// Render this revision instead of the Application's target (git only).
    #[arg(long)]
    pub(crate) revision: Option<String>,
    /// Render this local directory with the Application's source settings instead of its
    /// repository (git only).
    #[arg(long, value_name = "DIR", conflicts_with = "revision")]
    pub(crate) local: Option<std::path::PathBuf>,
    /// The repository root --local belongs to [default: --local itself].
    #[arg(long, value_name = "DIR", requires = "local")]
    pub(crate) local_repo_root: Option<std::path::PathBuf>,
}

/// Runs `app manifests`.
pub async fn run(client: &AppClient, args: ManifestsArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    if args.local.is_some() && args.source == SourceArg::Live {
        anyhow::bail!(
            "--local renders the desired objects: it cannot be combined with --source live"
        );
    }
    let local = args.local.clone().map(|dir| plumb_source::LocalSource {
        dir,
        repo_root: args.local_repo_root.clone(),
    });
    let cmp = compare_app(
        client,
        &app,
        args.revision.clone(),
        false,
        false,
        local.as_ref(),
    )
    .await?;
    let mut out = String::new();
    for r in cmp.resources.iter() {
        let obj = match args.source {
            SourceArg::Git => r.desired.clone().map(strip_tracking),
            SourceArg::Live => r.live.clone(),
        };
        let Some(mut obj) = obj else { continue };
        mask_secret(&mut obj);
        out.push_str("---\n");
        out.push_str(&plumb_yaml::to_yaml_string(&obj));
    }
    print!("{out}");
    Ok(Outcome::Success)
}

/// The tracking annotation is Plumb's bookkeeping, not part of what Git declares.
pub(crate) fn strip_tracking(mut obj: Value) -> Value {
    if let Some(ann) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        ann.remove(TRACKING_ID);
        if ann.is_empty()
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("annotations");
        }
    }
    obj
}

/// Replaces every Secret value (and the last-applied copy that contains them) with a mask.
fn mask_secret(obj: &mut Value) {
    if obj.get("kind").and_then(Value::as_str) != Some("Secret") {
        return;
    }
    for field in ["data", "stringData"] {
        if let Some(map) = obj.get_mut(field).and_then(Value::as_object_mut) {
            for v in map.values_mut() {
                *v = Value::String("++++++++".into());
            }
        }
    }
    if let Some(ann) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
        && ann.contains_key(plumb_model::annotations::LAST_APPLIED)
    {
        ann.insert(
            plumb_model::annotations::LAST_APPLIED.into(),
            Value::String("++++++++".into()),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_masked_and_tracking_is_stripped() {
        let mut s = json!({"kind": "Secret", "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"p\":\"cGFzcw==\"}}"}}, "data": {"p": "cGFzcw=="}, "stringData": {"q": "x"}});
        mask_secret(&mut s);
        assert_eq!(s["data"]["p"], "++++++++");
        assert_eq!(s["stringData"]["q"], "++++++++");
        assert!(!s.to_string().contains("cGFzcw"));
        let o = strip_tracking(
            json!({"kind": "ConfigMap", "metadata": {"annotations": {"argocd.argoproj.io/tracking-id": "a:/ConfigMap:n/c"}}}),
        );
        assert!(o["metadata"].get("annotations").is_none());
    }
}
