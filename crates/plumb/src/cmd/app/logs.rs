//! `plumb app logs NAME`: Argo CD's `argocd app logs`: the logs of the Application's Pods through
//! the API server (`pods/log`), all of them or those of one managed resource (`--group`,
//! `--kind`, `--name`, `--namespace`) found by following owner references down from it
//! (Deployment → ReplicaSet → Pod, CronJob → Job → Pod, StatefulSet/DaemonSet/Job → Pod).
//! As Argo's API server does (`PodLogs`), lines are asked for with their timestamps, merged across
//! Pods in time order (with `--follow`, as they arrive), filtered (`--filter`, `!` for lines
//! without the text, `--match-case`) and cut at `--until-time`; the timestamps are not printed.
//! At most `server.maxPodLogsToRender` Pods (argocd-cm, default 10) are read at once.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};
use kube::core::ObjectMeta;

use super::client::AppClient;
use super::cluster::managed::{self, ResourceFilterArgs};
use crate::exit::Outcome;

/// `plumb app logs`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # The last 20 lines of every Pod of an application\n  plumb app logs guestbook --tail 20\n\n  # Follow the Pods of one Deployment, one container\n  plumb app logs guestbook --kind Deployment --name guestbook-ui --container ui -f"
)]
pub struct LogsArgs {
    /// Application name.
    pub(crate) name: String,
    /// Resource group.
    #[arg(long, value_name = "GROUP")]
    pub(crate) group: Option<String>,
    /// Resource kind.
    #[arg(long, value_name = "KIND")]
    pub(crate) kind: Option<String>,
    /// Resource name.
    #[arg(long = "name", value_name = "NAME")]
    pub(crate) resource_name: Option<String>,
    /// Resource namespace.
    #[arg(long, value_name = "NAMESPACE")]
    pub(crate) namespace: Option<String>,
    /// Optional container name.
    #[arg(short = 'c', long, value_name = "CONTAINER")]
    pub(crate) container: Option<String>,
    /// Specify if the logs should be streamed.
    #[arg(short = 'f', long)]
    pub(crate) follow: bool,
    /// The number of lines from the end of the logs to show.
    #[arg(long, value_name = "N")]
    pub(crate) tail: Option<i64>,
    /// A relative time in seconds before the current time from which to show logs.
    #[arg(long, value_name = "SECONDS")]
    pub(crate) since_seconds: Option<i64>,
    /// Show logs until this time (RFC 3339); with --follow the stream ends there.
    #[arg(long, value_name = "TIME")]
    pub(crate) until_time: Option<String>,
    /// Show logs contain this string (a leading '!': logs that do not contain it).
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
    /// Specify if the filter should be case-sensitive.
    #[arg(short = 'm', long)]
    pub(crate) match_case: bool,
    /// Specify if the previously terminated container logs should be returned.
    #[arg(short = 'p', long)]
    pub(crate) previous: bool,
}

/// argocd-cm's limit on the Pods one `logs` reads (Argo's `server.maxPodLogsToRender`).
const MAX_PODS_KEY: &str = "server.maxPodLogsToRender";
const MAX_PODS_DEFAULT: usize = 10;

/// What `--filter`, `--match-case` and `--until-time` keep (Argo's `PodLogs` rules).
#[derive(Debug, Default)]
pub struct LineFilter {
    literal: Option<String>,
    inverse: bool,
    match_case: bool,
    until: Option<Timestamp>,
}

/// What to do with one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Print it.
    Print,
    /// Leave it out.
    Skip,
    /// It is past `--until-time`: stop here (it is not printed).
    End,
}

impl LineFilter {
    /// From the flags; an `--until-time` that is not RFC 3339 is refused as Argo refuses it.
    pub fn new(filter: Option<&str>, match_case: bool, until: Option<&str>) -> Result<Self> {
        let until = until
            .filter(|u| !u.is_empty())
            .map(|u| {
                u.parse::<Timestamp>()
                    .map_err(|e| anyhow!("invalid untilTime parameter value: {e}"))
            })
            .transpose()?;
        let (literal, inverse) = match filter.filter(|f| !f.is_empty()) {
            Some(f) => match f.strip_prefix('!') {
                Some(rest) => (Some(rest.to_string()), true),
                None => (Some(f.to_string()), false),
            },
            None => (None, false),
        };
        Ok(Self {
            literal,
            inverse,
            match_case,
            until,
        })
    }

    /// The verdict on one line written at `time`.
    pub fn judge(&self, time: Option<Timestamp>, text: &str) -> Verdict {
        if let Some(literal) = &self.literal {
            let contains = if self.match_case {
                text.contains(literal.as_str())
            } else {
                text.to_lowercase().contains(&literal.to_lowercase())
            };
            if contains == self.inverse {
                return Verdict::Skip;
            }
        }
        match (self.until, time) {
            (Some(until), Some(t)) if t > until => Verdict::End,
            _ => Verdict::Print,
        }
    }
}

/// The Pods' logs (each as the API server returned it, with timestamps) merged in time order
/// (one stable sort: Pods in the order given for equal times), filtered, without timestamps.
pub fn merge(per_pod: &[String], filter: &LineFilter) -> String {
    let mut lines: Vec<(Option<Timestamp>, &str)> = per_pod
        .iter()
        .flat_map(|text| text.lines().map(split_timestamp))
        .collect();
    lines.sort_by_key(|(t, _)| *t);
    let mut out = String::new();
    for (t, text) in lines {
        match filter.judge(t, text) {
            Verdict::Print => {
                out.push_str(text);
                out.push('\n');
            }
            Verdict::Skip => {}
            Verdict::End => break,
        }
    }
    out
}

/// Splits a line asked for with `timestamps=true` into its time and text.
pub fn split_timestamp(line: &str) -> (Option<Timestamp>, &str) {
    match line.split_once(' ') {
        Some((t, text)) => match t.parse::<Timestamp>() {
            Ok(ts) => (Some(ts), text),
            Err(_) => (None, line),
        },
        None => match line.parse::<Timestamp>() {
            Ok(ts) => (Some(ts), ""),
            Err(_) => (None, line),
        },
    }
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
    let mut pods = owned_pods(&kube, namespaces, &targets).await?;
    pods.sort();
    if pods.is_empty() {
        eprintln!("no Pods found for application '{}'", args.name);
        return Ok(Outcome::Success);
    }
    if pods.len() > max_pods(client).await? {
        bail!("max pods to view logs are reached. Please provide more granular query");
    }
    let filter = LineFilter::new(
        args.filter.as_deref(),
        args.match_case,
        args.until_time.as_deref(),
    )?;
    let params = LogParams {
        container: args.container.clone(),
        follow: args.follow,
        tail_lines: args.tail.filter(|t| *t > 0),
        since_seconds: args.since_seconds.filter(|s| *s > 0),
        previous: args.previous,
        timestamps: true,
        ..Default::default()
    };
    if args.follow {
        follow_logs(&kube, &pods, &params, &filter).await?;
    } else {
        print_logs(&kube, &pods, &params, &filter).await;
    }
    Ok(Outcome::Success)
}

/// The Pods (namespace, name) of `namespaces` that are `targets` or owned by one.
async fn owned_pods(
    kube: &kube::Client,
    namespaces: BTreeSet<&str>,
    targets: &BTreeSet<String>,
) -> Result<Vec<(String, String)>> {
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
            if owned_by(&uid, &owners, targets) {
                pods.push((
                    ns.to_string(),
                    pod.metadata.name.clone().unwrap_or_default(),
                ));
            }
        }
    }
    Ok(pods)
}

/// argocd-cm's `server.maxPodLogsToRender`, else the default.
async fn max_pods(client: &AppClient) -> Result<usize> {
    let settings = client.settings().await?;
    Ok(match settings.get(MAX_PODS_KEY) {
        Some(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<usize>()
            .with_context(|| format!("argocd-cm {MAX_PODS_KEY}: '{v}' is not a number of Pods"))?,
        _ => MAX_PODS_DEFAULT,
    })
}

/// Prints the Pods' logs read once, merged in time order.
async fn print_logs(
    kube: &kube::Client,
    pods: &[(String, String)],
    params: &LogParams,
    filter: &LineFilter,
) {
    let mut per_pod = Vec::new();
    for (ns, name) in pods {
        match Api::<Pod>::namespaced(kube.clone(), ns)
            .logs(name, params)
            .await
        {
            Ok(text) => per_pod.push(text),
            // As Argo does, a Pod whose logs cannot be read does not hide the others.
            Err(e) => eprintln!("plumb: reading the logs of Pod {ns}/{name}: {e}"),
        }
    }
    print!("{}", merge(&per_pod, filter));
}

/// Prints the Pods' log lines as they arrive, until the streams end or `--until-time`.
async fn follow_logs(
    kube: &kube::Client,
    pods: &[(String, String)],
    params: &LogParams,
    filter: &LineFilter,
) -> Result<()> {
    let mut streams = Vec::new();
    for (ns, name) in pods {
        match Api::<Pod>::namespaced(kube.clone(), ns)
            .log_stream(name, params)
            .await
        {
            Ok(reader) => streams.push(reader.lines().map_err(anyhow::Error::from).boxed()),
            Err(e) => eprintln!("plumb: following the logs of Pod {ns}/{name}: {e}"),
        }
    }
    let mut merged = futures::stream::select_all(streams);
    // The stream of a running container never ends: --until-time ends it when a later line
    // arrives (as in Argo) or when the clock passes it, whichever comes first.
    let deadline = async {
        match filter.until {
            Some(until) => {
                let wait = until.duration_since(Timestamp::now());
                let wait = std::time::Duration::try_from(wait).unwrap_or_default();
                tokio::time::sleep(wait).await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::pin!(deadline);
    loop {
        let line = tokio::select! {
            line = merged.next() => line,
            () = &mut deadline => None,
        };
        let Some(line) = line else { break };
        let line = line?;
        let (t, text) = split_timestamp(&line);
        match filter.judge(t, text) {
            Verdict::Print => println!("{text}"),
            Verdict::Skip => {}
            Verdict::End => break,
        }
    }
    Ok(())
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

    #[test]
    fn lines_are_filtered_and_cut_as_argo_does() {
        let t = |s: &str| s.parse::<Timestamp>().ok();
        let any = LineFilter::new(None, false, None).unwrap();
        assert_eq!(any.judge(t("2026-12-01T10:00:00Z"), "x"), Verdict::Print);
        let f = LineFilter::new(Some("ERROR"), false, None).unwrap();
        assert_eq!(f.judge(None, "an error here"), Verdict::Print);
        assert_eq!(f.judge(None, "all fine"), Verdict::Skip);
        let f = LineFilter::new(Some("ERROR"), true, None).unwrap();
        assert_eq!(f.judge(None, "an error here"), Verdict::Skip);
        assert_eq!(f.judge(None, "an ERROR here"), Verdict::Print);
        let f = LineFilter::new(Some("!healthz"), false, None).unwrap();
        assert_eq!(f.judge(None, "GET /healthz 200"), Verdict::Skip);
        assert_eq!(f.judge(None, "GET / 200"), Verdict::Print);
        let f = LineFilter::new(None, false, Some("2026-12-01T10:00:01Z")).unwrap();
        assert_eq!(
            f.judge(t("2026-12-01T10:00:01Z"), "on time"),
            Verdict::Print
        );
        assert_eq!(f.judge(t("2026-12-01T10:00:01.5Z"), "late"), Verdict::End);
        assert!(
            LineFilter::new(None, false, Some("yesterday"))
                .unwrap_err()
                .to_string()
                .starts_with("invalid untilTime parameter value")
        );
    }

    #[test]
    fn timestamps_are_split_from_the_text() {
        let (t, text) = split_timestamp("2026-12-01T10:00:00.250000000Z GET / 200");
        assert_eq!(
            t.map(|t| t.to_string()).as_deref(),
            Some("2026-12-01T10:00:00.25Z")
        );
        assert_eq!(text, "GET / 200");
        assert_eq!(split_timestamp("no time here"), (None, "no time here"));
        let (t, text) = split_timestamp("2026-12-01T10:00:00Z");
        assert!(t.is_some());
        assert_eq!(text, "");
    }

    /// Two Pods of guestbook-ui as the API server returns them with timestamps.
    fn guestbook_pods() -> Vec<String> {
        vec![
            "2026-12-01T10:00:00.000000000Z listening on :80\n\
             2026-12-01T10:00:02.100000000Z 10.0.0.7 - - \"GET / HTTP/1.1\" 200 612\n\
             2026-12-01T10:00:04.000000000Z 10.0.0.9 - - \"GET /healthz HTTP/1.1\" 200 2\n"
                .to_string(),
            "2026-12-01T10:00:01.000000000Z listening on :80\n\
             2026-12-01T10:00:02.100000000Z 2026/12/01 10:00:02 [error] upstream timed out\n\
             2026-12-01T10:00:03.000000000Z 10.0.0.8 - - \"GET /cart HTTP/1.1\" 200 88\n"
                .to_string(),
        ]
    }

    #[test]
    fn merged_logs_layout() {
        let pods = guestbook_pods();
        let all = LineFilter::new(None, false, None).unwrap();
        let errors = LineFilter::new(Some("ERROR"), false, None).unwrap();
        let until = LineFilter::new(None, false, Some("2026-12-01T10:00:02.5Z")).unwrap();
        let text = format!(
            "# all\n{}# --filter ERROR\n{}# --until-time 2026-12-01T10:00:02.5Z\n{}",
            merge(&pods, &all),
            merge(&pods, &errors),
            merge(&pods, &until)
        );
        crate::snapshot::check("logs-guestbook.txt", &text);
    }
}
