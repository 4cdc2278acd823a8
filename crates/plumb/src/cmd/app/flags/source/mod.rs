//! The source-type flags `app create` and `app set` share (Argo's `cmd/util/app.go`:
//! `ConstructSource`, `setHelmOpt`, `setKustomizeOpt`, `setJsonnetOpt`, `SetParameterOverrides`),
//! one module per source type, with the flags `app unset` takes for the same types.
//! Flags are applied in pflag's visiting order (by name), as Argo does, so the same command line
//! gives the same source (and the same first error).

mod directory;
mod helm;
mod jsonnet;
mod kustomize;
mod plugin;
mod zero;

use anyhow::Result;
use plumb_model::application::ApplicationSource;

pub use directory::DirectoryArgs;
pub use helm::{HelmArgs, HelmUnsetArgs, set_parameters};
pub use jsonnet::JsonnetArgs;
pub use kustomize::{KustomizeArgs, KustomizeUnsetArgs};
pub use plugin::{PluginArgs, PluginUnsetArgs};

/// Source-type flags of `app create` and `app set`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SourceTypeArgs {
    #[command(flatten)]
    pub helm: HelmArgs,
    #[command(flatten)]
    pub kustomize: KustomizeArgs,
    #[command(flatten)]
    pub directory: DirectoryArgs,
    #[command(flatten)]
    pub jsonnet: JsonnetArgs,
    #[command(flatten)]
    pub plugin: PluginArgs,
}

impl SourceTypeArgs {
    /// Whether any source-type flag other than `-p` was given.
    pub fn any(&self) -> bool {
        self.helm.any()
            || self.kustomize.any()
            || self.directory.any()
            || self.jsonnet.any()
            || self.plugin.any()
    }

    /// Applies the flags to a source, in pflag's order (flag names sorted), which interleaves
    /// the source types: `config-management-plugin`, `directory-*`, `helm-*` and
    /// `ignore-missing-value-files`, `jsonnet-*`, `kustomize-*` and the name affixes,
    /// `plugin-env`, then `release-name` and `values*`.
    pub fn apply(&self, source: &mut ApplicationSource) -> Result<()> {
        self.plugin.apply_name(source);
        self.directory.apply(source);
        self.helm.apply_template_flags(source)?;
        self.jsonnet.apply(source)?;
        self.kustomize.apply(source)?;
        self.plugin.apply_env(source)?;
        self.helm.apply_release_and_values(source)
    }
}

/// `--repo`, `--path` and `--revision` of `app create` and `app set`.
#[derive(Debug, Clone, Copy)]
pub struct SourceLocation<'a> {
    pub repo: Option<&'a String>,
    pub path: Option<&'a String>,
    pub revision: Option<&'a String>,
}

impl SourceLocation<'_> {
    /// Whether these flags, the source-type flags or `-p` change the source.
    pub fn touches_source(&self, args: &SourceTypeArgs) -> bool {
        self.repo.is_some()
            || self.path.is_some()
            || self.revision.is_some()
            || args.any()
            || !args.helm.parameters.is_empty()
    }

    /// Sets the repository, path and revision, then the source-type flags, then `-p` (Helm
    /// parameters, checked against `detected_type` when the source has no explicit type).
    pub fn edit(
        &self,
        source: &mut ApplicationSource,
        args: &SourceTypeArgs,
        detected_type: Option<&str>,
    ) -> Result<()> {
        if let Some(repo) = self.repo {
            source.repo_url.clone_from(repo);
        }
        if let Some(path) = self.path {
            source.path = Some(path.clone());
        }
        if let Some(rev) = self.revision {
            source.target_revision = Some(rev.clone());
        }
        args.apply(source)?;
        set_parameters(source, detected_type, &args.helm.parameters)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SourceTypeArgs,
    }

    fn source_after(start: Value, args: &[&str]) -> Result<Value> {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))?;
        let mut source: ApplicationSource = serde_json::from_value(start)?;
        cli.args.apply(&mut source)?;
        set_parameters(&mut source, None, &cli.args.helm.parameters)?;
        Ok(serde_json::to_value(source)?)
    }

    const REPO: &str = "https://github.com/argoproj/argocd-example-apps.git";

    #[test]
    fn helm_flags() {
        let dir = tempfile::tempdir().unwrap();
        let literal = dir.path().join("values.yaml");
        std::fs::write(&literal, "replicaCount: 2\nimage:\n  tag: \"0.2\"\n").unwrap();
        let got = source_after(
            json!({"repoURL": REPO, "path": "helm-guestbook"}),
            &[
                "--values",
                "values-production.yaml",
                "--helm-set",
                "replicaCount=3",
                "--helm-set",
                "service.type=LoadBalancer",
                "--helm-set",
                "replicaCount=4",
                "--helm-set-string",
                "image.tag=1.0",
                "--helm-set-file",
                "config=files/config.json",
                "--release-name",
                "guestbook-prod",
                "--values-literal-file",
                literal.to_str().unwrap(),
                "--helm-skip-crds",
            ],
        )
        .unwrap();
        assert_eq!(
            got,
            json!({"repoURL": REPO, "path": "helm-guestbook", "helm": {
                "valueFiles": ["values-production.yaml"],
                "parameters": [
                    {"name": "replicaCount", "value": "4"},
                    {"name": "service.type", "value": "LoadBalancer"},
                    {"name": "image.tag", "value": "1.0", "forceString": true}],
                "fileParameters": [{"name": "config", "path": "files/config.json"}],
                "releaseName": "guestbook-prod",
                "valuesObject": {"replicaCount": 2, "image": {"tag": "0.2"}},
                "skipCrds": true}})
        );
        let err =
            source_after(json!({"repoURL": REPO}), &["--helm-set", "replicaCount"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Expected helm parameter of the form: param=value. Received: replicaCount"
        );
    }

    #[test]
    fn kustomize_flags_merge_images_by_name() {
        let got = source_after(
            json!({"repoURL": REPO, "path": "kustomize-guestbook", "kustomize": {"images": ["gcr.io/heptio-images/ks-guestbook-demo:0.1"]}}),
            &[
                "--kustomize-image", "gcr.io/heptio-images/ks-guestbook-demo:0.2",
                "--kustomize-image", "nginx=nginx:1.27", "--kustomize-common-label", "team=web",
                "--nameprefix", "prod-", "--namesuffix", "-v2", "--kustomize-replica", "guestbook-ui=3",
            ],
        )
        .unwrap();
        assert_eq!(
            got["kustomize"],
            json!({"namePrefix": "prod-", "nameSuffix": "-v2",
                "images": ["gcr.io/heptio-images/ks-guestbook-demo:0.2", "nginx=nginx:1.27"],
                "commonLabels": {"team": "web"}, "replicas": [{"name": "guestbook-ui", "count": 3}]})
        );
        assert_eq!(
            source_after(
                json!({"repoURL": REPO}),
                &["--kustomize-common-label", "team"]
            )
            .unwrap_err()
            .to_string(),
            "Label should have key=value: team"
        );
    }

    #[test]
    fn directory_and_jsonnet_flags() {
        let got = source_after(
            json!({"repoURL": REPO, "path": "jsonnet-guestbook"}),
            &[
                "--directory-recurse",
                "--directory-include",
                "*.jsonnet",
                "--directory-exclude",
                "vendor/*",
                "--jsonnet-tla-str",
                "env=prod",
                "--jsonnet-tla-code",
                "replicas=3",
                "--jsonnet-ext-var-str",
                "cluster=eu",
            ],
        )
        .unwrap();
        assert_eq!(
            got["directory"],
            json!({"recurse": true, "include": "*.jsonnet", "exclude": "vendor/*", "jsonnet": {
                "extVars": [{"name": "cluster", "value": "eu", "code": false}],
                "tlas": [{"name": "replicas", "value": "3", "code": true}, {"name": "env", "value": "prod", "code": false}]}})
        );
        let got = source_after(
            json!({"repoURL": REPO, "directory": {"recurse": true}}),
            &["--directory-recurse=false"],
        )
        .unwrap();
        assert_eq!(got["directory"], json!({"recurse": false}));
    }

    #[test]
    fn parameters_follow_the_source_type() {
        // The blue-green example's README: `app set -p image.tag=0.2` on a Helm source.
        let mut helm: ApplicationSource = serde_json::from_value(
            json!({"repoURL": REPO, "path": "blue-green", "helm": {"parameters": [{"name": "image.tag", "value": "0.1"}]}}),
        )
        .unwrap();
        set_parameters(&mut helm, None, &["image.tag=0.2".into()]).unwrap();
        assert_eq!(
            serde_json::to_value(&helm.helm).unwrap(),
            json!({"parameters": [{"name": "image.tag", "value": "0.2"}]})
        );
        // No explicit type: the controller's detected type decides, else `=` means Helm.
        let mut plain: ApplicationSource =
            serde_json::from_value(json!({"repoURL": REPO, "path": "guestbook"})).unwrap();
        let err =
            set_parameters(&mut plain.clone(), Some("Directory"), &["a=b".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Parameters can only be set against Helm applications"
        );
        set_parameters(&mut plain, None, &["a=b".into()]).unwrap();
        assert!(plain.helm.is_some());
        let mut kustomize: ApplicationSource =
            serde_json::from_value(json!({"repoURL": REPO, "kustomize": {"namePrefix": "x-"}}))
                .unwrap();
        assert!(set_parameters(&mut kustomize, Some("Helm"), &["a=b".into()]).is_err());
    }
}
