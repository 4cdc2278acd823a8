//! The `Examples:` sections of `plumb app <verb> --help`, after Argo CD's command reference.

pub const GET: &str = "Examples:
  # The header, conditions and resources of an application
  plumb app get guestbook

  # Ask the controller to compare again first (hard: render again too)
  plumb app get guestbook --refresh
  plumb app get guestbook --hard-refresh

  # The Application object, or the resources as a tree
  plumb app get guestbook -o yaml
  plumb app get guestbook -o tree";

pub const LIST: &str = "Examples:
  # Every application of the control namespace
  plumb app list

  # By project, label selector or repository; names only
  plumb app list -p payments -l team=web -r https://github.com/argoproj/argocd-example-apps.git -o name";

pub const SYNC: &str = "Examples:
  # Sync and follow it to the end
  plumb app sync guestbook

  # Also delete what Git no longer declares; show the differences and ask first
  plumb app sync guestbook --prune --preview-changes

  # Only one resource, to a given revision, without waiting
  plumb app sync guestbook --resource apps:Deployment:guestbook-ui --revision v2 --async";

pub const WAIT: &str = "Examples:
  # Until synced, healthy and idle
  plumb app wait guestbook --timeout 300

  # Only until healthy
  plumb app wait guestbook --health";

pub const CREATE: &str = "Examples:
  # A directory application
  plumb app create guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path guestbook --dest-namespace default --dest-server https://kubernetes.default.svc --directory-recurse

  # A Helm application with values and parameters
  plumb app create helm-guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path helm-guestbook --dest-namespace default --dest-server https://kubernetes.default.svc --values values-production.yaml --helm-set replicaCount=2

  # A Kustomize application with an image override, synced automatically
  plumb app create kustomize-guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path kustomize-guestbook --dest-namespace default --dest-server https://kubernetes.default.svc --kustomize-image gcr.io/heptio-images/ks-guestbook-demo:0.1 --sync-policy automated --self-heal

  # From a file
  plumb app create -f guestbook.yaml --upsert";

pub const SET: &str = "Examples:
  # Set a Helm parameter (the blue-green example's README step)
  plumb app set bluegreen -p image.tag=0.2

  # Change the path and the target revision
  plumb app set guestbook --path guestbook-v2 --revision v2

  # Turn on automated sync with self-heal and retries
  plumb app set guestbook --sync-policy automated --self-heal --sync-retry-limit 3";

pub const DELETE: &str = "Examples:
  # Delete an application and its resources (asks first)
  plumb app delete guestbook

  # Keep the resources, do not ask
  plumb app delete guestbook --cascade=false -y";

pub const DIFF: &str = "Examples:
  # What differs between Git and the cluster (exit 1 when something does)
  plumb app diff guestbook

  # Against another revision, as a unified diff
  plumb app diff guestbook --revision v2 --diff-format unified";

pub const HISTORY: &str = "Examples:
  # The deployments of an application
  plumb app history guestbook";

pub const ROLLBACK: &str = "Examples:
  # Back to the previous deployment
  plumb app rollback guestbook

  # To deployment 3 of the history
  plumb app rollback guestbook 3";

pub const MANIFESTS: &str = "Examples:
  # The manifests Git declares, or the live ones
  plumb app manifests guestbook
  plumb app manifests guestbook --source live";

pub const RESOURCES: &str = "Examples:
  # The resources an application manages
  plumb app resources guestbook";

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    #[test]
    fn main_verbs_show_examples_that_parse() {
        let mut cli = crate::Cli::command();
        let app = cli.find_subcommand_mut("app").unwrap();
        for verb in [
            "get",
            "list",
            "sync",
            "wait",
            "create",
            "delete",
            "diff",
            "set",
            "history",
            "rollback",
            "manifests",
            "resources",
            "unset",
            "edit",
            "patch",
            "logs",
            "patch-resource",
            "delete-resource",
        ] {
            let help = app
                .find_subcommand_mut(verb)
                .unwrap_or_else(|| panic!("{verb}"))
                .render_long_help()
                .to_string();
            assert!(help.contains("Examples:\n  # "), "{verb}");
            for line in help
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("plumb app "))
            {
                // Examples with shell quoting are checked by eye; the others must parse.
                if line.contains(['\'', '"', '$']) {
                    continue;
                }
                let words: Vec<&str> = line.split_whitespace().collect();
                if let Err(e) = crate::Cli::try_parse_from(&words) {
                    panic!("{verb}: `{line}` does not parse: {e}");
                }
            }
        }
    }
}
