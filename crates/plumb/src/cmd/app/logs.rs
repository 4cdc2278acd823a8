//! `plumb app logs NAME`: Argo CD's `argocd app logs`: the logs of the Application's Pods through
//! the API server (`pods/log`), all of them or those of one managed resource (`--group`,
//! `--kind`, `--name`, `--namespace`) found by following owner references down from it
//! (Deployment → ReplicaSet → Pod, CronJob → Job → Pod, StatefulSet/DaemonSet/Job → Pod).
//! Lines are printed as the API server returns them; with `--follow` the Pods' streams are
//! merged as lines arrive.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result};
use clap::Args;
use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};
use kube::core::ObjectMeta;

use super::client::AppClient;
use super::managed::{self, ResourceFilterArgs};
use crate::exit::Outcome;

/// `plumb app logs`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # The last 20 lines of every Pod of an application\n  plumb app logs guestbook --tail 20\n\n  # Follow the Pods of one Deployment, one container\n  plumb app logs guestbook --kind Deployment --name guestbook-ui --container ui -f"
)]
pub struct LogsArgs {
    /// Application name.
    name: String,
    /// Resource group.
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,
    /// Resource kind.
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Resource name.
    #[arg(long = "name", value_name = "NAME")]
    resource_name: Option<String>,
    /// Resource namespace.
    #[arg(long, value_name = "NAMESPACE")]
    namespace: Option<String>,
    /// Optional container name.
    #[arg(short = 'c', long, value_name = "CONTAINER")]
    container: Option<String>,
    /// Specify if the logs should be streamed.
    #[arg(short = 'f', long)]
    follow: bool,
    /// The number of lines from the end of the logs to show.
    #[arg(long, value_name = "N")]
    tail: Option<i64>,
    /// A relative time in seconds before the current time from which to show logs.
    #[arg(long, value_name = "SECONDS")]
    since_seconds: Option<i64>,
    /// Specify if the previously terminated container logs should be returned.
    #[arg(short = 'p', long)]
    previous: bool,
}

/// The owners of each object by uid (ReplicaSets, Jobs and Pods of the namespaces).
type Owners = BTreeMap<String, Vec<String>>;

fn record(owners: &mut Owners, meta: &ObjectMeta) {
    if let Some(uid) = &meta.uid {
        owners.insert(
            uid.clone(),
            meta.owner_references
                .iter()
                .flatten()
                .map(|o| o.uid.clone())
                .collect(),
        );
    }
}

/// Whether `uid` is one of `targets` or owned (through at most a few levels) by one.
pub fn owned_by(uid: &str, owners: &Owners, targets: &BTreeSet<String>) -> bool {
    let mut frontier = vec![uid.to_string()];
    for _ in 0..6 {
        if frontier.iter().any(|u| targets.contains(u)) {
            return true;
        }
        frontier = frontier
            .iter()
            .flat_map(|u| owners.get(u).into_iter().flatten().cloned())
            .collect();
        if frontier.is_empty() {
            return false;
        }
    }
    false
}

/// Runs `plumb app logs`.
pub async fn run(client: &AppClient, args: LogsArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let dest = managed::destination(client, &app).await?;
    let filter = ResourceFilterArgs {
        resource_name: args.resource_name.clone(),
        kind: args.kind.clone(),
        group: args.group.clone().filter(|g| !g.is_empty()),
        namespace: args.namespace.clone(),
    };
    let resources = managed::filter(managed::live_resources(&dest, &app).await?, &filter, true)?;
    let targets: BTreeSet<String> = resources
        .iter()
        .filter_map(|r| r.live.pointer("/metadata/uid").and_then(|u| u.as_str()))
        .map(str::to_string)
        .collect();
    let namespaces: BTreeSet<&str> = resources
        .iter()
        .map(|r| r.key.namespace.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let kube = dest.discovery.client().clone();
    let mut owners = Owners::new();
    let mut pods: Vec<(String, String)> = Vec::new();
    for ns in namespaces {
        let list = ListParams::default();
        for rs in Api::<ReplicaSet>::namespaced(kube.clone(), ns)
            .list(&list)
            .await?
        {
            record(&mut owners, &rs.metadata);
        }
        for job in Api::<Job>::namespaced(kube.clone(), ns).list(&list).await? {
            record(&mut owners, &job.metadata);
        }
        let ns_pods = Api::<Pod>::namespaced(kube.clone(), ns)
            .list(&list)
            .await
            .with_context(|| format!("listing Pods in namespace {ns}"))?;
        for pod in &ns_pods {
            record(&mut owners, &pod.metadata);
        }
        for pod in ns_pods {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            if owned_by(&uid, &owners, &targets) {
                pods.push((
                    ns.to_string(),
                    pod.metadata.name.clone().unwrap_or_default(),
                ));
            }
        }
    }
    pods.sort();
    if pods.is_empty() {
        eprintln!("no Pods found for application '{}'", args.name);
        return Ok(Outcome::Success);
    }
    let params = LogParams {
        container: args.container.clone(),
        follow: args.follow,
        tail_lines: args.tail,
        since_seconds: args.since_seconds,
        previous: args.previous,
        ..Default::default()
    };
    if !args.follow {
        for (ns, name) in &pods {
            let text = Api::<Pod>::namespaced(kube.clone(), ns)
                .logs(name, &params)
                .await
                .with_context(|| format!("reading the logs of Pod {ns}/{name}"))?;
            print!("{text}");
        }
        return Ok(Outcome::Success);
    }
    let mut streams = Vec::new();
    for (ns, name) in &pods {
        let reader = Api::<Pod>::namespaced(kube.clone(), ns)
            .log_stream(name, &params)
            .await
            .with_context(|| format!("following the logs of Pod {ns}/{name}"))?;
        streams.push(reader.lines().map_err(anyhow::Error::from).boxed());
    }
    let mut merged = futures::stream::select_all(streams);
    while let Some(line) = merged.next().await {
        println!("{}", line?);
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_are_found_through_their_owners() {
        let owners: Owners = [
            ("pod-a", vec!["rs-1"]),
            ("rs-1", vec!["deploy"]),
            ("pod-b", vec!["job-1"]),
            ("job-1", vec!["cron"]),
            ("pod-c", vec![]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
        .collect();
        let deploy = BTreeSet::from(["deploy".to_string()]);
        assert!(owned_by("pod-a", &owners, &deploy));
        assert!(!owned_by("pod-b", &owners, &deploy));
        assert!(owned_by(
            "pod-b",
            &owners,
            &BTreeSet::from(["cron".to_string()])
        ));
        assert!(owned_by(
            "pod-c",
            &owners,
            &BTreeSet::from(["pod-c".to_string()])
        ));
        assert!(!owned_by("pod-c", &owners, &deploy));
    }
}
