//! `GET /api/v1/applications/{name}/logs`: Argo CD's `PodLogs`. The Pods are those of the
//! Application's resource tree, all of them or those below the object the query names (`kind`,
//! `group`, `resourceName`, `namespace`; `podName` names one Pod), at most
//! `server.maxPodLogsToRender` (argocd-cm, default 10). Lines are read with their timestamps,
//! merged in time order (as they arrive with `follow`), filtered (`filter`, `!` for lines
//! without the text, `matchCase`) and cut at `untilTime`. The answer streams Argo's gateway
//! frames, one `{"result": LogEntry}` per line, the last one with `"last": true`.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::routes::resources::app_tree;
use crate::state::AppState;

const MAX_PODS_KEY: &str = "server.maxPodLogsToRender";
const MAX_PODS_DEFAULT: usize = 10;

/// Which tree nodes the query selects (Argo's `isTheSelectedOne`): every given field matches,
/// or a parent (through `parentRefs`) is selected.
fn selected_pods(nodes: &[Value], q: &Query) -> Vec<(String, String)> {
    let f = |n: &Value, k: &str| {
        n.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (kind, name, group) = match q.get("podName") {
        Some(pod) => (Some("Pod"), Some(pod), None),
        None => (q.get("kind"), q.get("resourceName"), q.get("group")),
    };
    let namespace = q.get("namespace");
    let matches = |n: &Value| {
        name.is_none_or(|v| f(n, "name") == v)
            && kind.is_none_or(|v| f(n, "kind") == v)
            && group.is_none_or(|v| f(n, "group") == v)
            && namespace.is_none_or(|v| f(n, "namespace") == v)
    };
    let find = |group: &str, kind: &str, ns: &str, name: &str| {
        nodes.iter().find(|n| {
            f(n, "group") == group
                && f(n, "kind") == kind
                && f(n, "namespace") == ns
                && f(n, "name") == name
        })
    };
    // Owners are at most a few levels up (Pod → ReplicaSet → Deployment; Pod → Job → CronJob).
    fn selected<'a>(
        n: &'a Value,
        depth: usize,
        matches: &dyn Fn(&Value) -> bool,
        find: &dyn Fn(&str, &str, &str, &str) -> Option<&'a Value>,
    ) -> bool {
        if matches(n) {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let s = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        n.get("parentRefs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                find(
                    &s(p, "group"),
                    &s(p, "kind"),
                    &s(p, "namespace"),
                    &s(p, "name"),
                )
            })
            .any(|parent| selected(parent, depth - 1, matches, find))
    }
    let mut pods: Vec<(String, String)> = nodes
        .iter()
        .filter(|n| f(n, "kind") == "Pod" && f(n, "group").is_empty() && !f(n, "uid").is_empty())
        .filter(|n| selected(n, 8, &matches, &find))
        .map(|n| (f(n, "namespace"), f(n, "name")))
        .collect();
    pods.sort();
    pods
}

/// What `filter`, `matchCase` and `untilTime` keep.
struct LineFilter {
    literal: Option<String>,
    inverse: bool,
    match_case: bool,
    until: Option<Timestamp>,
}

enum Verdict {
    Send,
    Skip,
    End,
}

impl LineFilter {
    fn new(q: &Query) -> Result<Self> {
        let until = q
            .get("untilTime")
            .map(|u| {
                u.parse::<Timestamp>().map_err(|e| {
                    Error::InvalidArgument(format!("invalid untilTime parameter value: {e}"))
                })
            })
            .transpose()?;
        let (literal, inverse) = match q.get("filter") {
            Some(f) => match f.strip_prefix('!') {
                Some(rest) => (Some(rest.to_string()), true),
                None => (Some(f.to_string()), false),
            },
            None => (None, false),
        };
        Ok(Self {
            literal,
            inverse,
            match_case: q.bool("matchCase", false).map_err(Error::InvalidArgument)?,
            until,
        })
    }

    fn judge(&self, time: Option<Timestamp>, text: &str) -> Verdict {
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
            _ => Verdict::Send,
        }
    }
}

/// A line asked for with `timestamps=true`: its time and text.
fn split_timestamp(line: &str) -> (Option<Timestamp>, &str) {
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

/// One frame: Argo's `LogEntry` in the gateway's `{"result": ...}`.
fn frame(pod: &str, time: Option<Timestamp>, text: &str, last: bool) -> String {
    let t = time.unwrap_or_else(Timestamp::now);
    let seconds = Timestamp::from_second(t.as_second()).unwrap_or(t);
    let mut entry = serde_json::Map::new();
    entry.insert("content".into(), json!(text));
    if !pod.is_empty() {
        entry.insert("podName".into(), json!(pod));
    }
    entry.insert("timeStamp".into(), json!(seconds.to_string()));
    entry.insert("timeStampStr".into(), json!(t.to_string()));
    entry.insert("last".into(), json!(last));
    let mut line = json!({"result": entry}).to_string();
    line.push('\n');
    line
}

/// `GET /api/v1/applications/{name}/logs`.
pub(crate) async fn logs(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let q = Query::parse(raw.as_deref());
    let key = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &key, "get").await?;
    let (_, app) = s.app(&key).await?;
    if let Some(p) = q.get("project") {
        let own = if app.spec.project.is_empty() {
            "default"
        } else {
            app.spec.project.as_str()
        };
        if p != own {
            return Err(Error::PermissionDenied(
                crate::rbac::PERMISSION_DENIED.into(),
            ));
        }
    }
    crate::routes::live::authorize_logs(&s, &caller, &app).await?;
    let filter = LineFilter::new(&q)?;
    let number = |k: &str| -> Result<Option<i64>> {
        q.get(k)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    Error::InvalidArgument(format!("{k}: expected a whole number, got {v:?}"))
                })
            })
            .transpose()
    };
    let params = LogParams {
        container: q.get("container").map(str::to_string),
        follow: q.bool("follow", false).map_err(Error::InvalidArgument)?,
        tail_lines: number("tailLines")?.filter(|t| *t > 0),
        since_seconds: number("sinceSeconds")?.filter(|s| *s > 0),
        previous: q.bool("previous", false).map_err(Error::InvalidArgument)?,
        timestamps: true,
        ..Default::default()
    };
    let tree = app_tree(&s, &key).await?;
    let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
    let pods = selected_pods(&nodes, &q);
    let settings = s.settings().await?;
    let max_pods = match settings.get(MAX_PODS_KEY) {
        Some(v) if !v.trim().is_empty() => v.trim().parse::<usize>().map_err(|_| {
            Error::Internal(format!(
                "argocd-cm {MAX_PODS_KEY}: '{v}' is not a number of Pods"
            ))
        })?,
        _ => MAX_PODS_DEFAULT,
    };
    if pods.len() > max_pods {
        return Err(Error::InvalidArgument(
            "max pods to view logs are reached. Please provide more granular query".into(),
        ));
    }
    let client = s
        .cluster_of(&app.spec.destination)
        .await?
        .discovery
        .client()
        .clone();
    let body = if params.follow {
        follow(client, pods, params, filter, s.shutdown.clone()).await
    } else {
        Body::from(read_all(client, &pods, &params, &filter).await)
    };
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// Every Pod's lines, merged in time order (stable: Pods in name order for equal times).
async fn read_all(
    client: kube::Client,
    pods: &[(String, String)],
    params: &LogParams,
    filter: &LineFilter,
) -> String {
    let mut lines: Vec<(Option<Timestamp>, String, String)> = Vec::new();
    for (ns, name) in pods {
        match Api::<Pod>::namespaced(client.clone(), ns)
            .logs(name, params)
            .await
        {
            Ok(text) => {
                for line in text.lines() {
                    let (t, text) = split_timestamp(line);
                    lines.push((t, name.clone(), text.to_string()));
                }
            }
            // As Argo: a Pod whose logs cannot be read does not hide the others.
            Err(e) => tracing::info!("reading the logs of Pod {ns}/{name}: {e}"),
        }
    }
    lines.sort_by_key(|(t, _, _)| *t);
    let mut out = String::new();
    for (t, pod, text) in &lines {
        match filter.judge(*t, text) {
            Verdict::Send => out.push_str(&frame(pod, *t, text, false)),
            Verdict::Skip => {}
            Verdict::End => break,
        }
    }
    out.push_str(&frame("", None, "", true));
    out
}

/// The Pods' streams merged as lines arrive; ends when every stream ended, at `untilTime`, or
/// when the server shuts down.
async fn follow(
    client: kube::Client,
    pods: Vec<(String, String)>,
    params: LogParams,
    filter: LineFilter,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> Body {
    let mut streams = Vec::new();
    for (ns, name) in &pods {
        match Api::<Pod>::namespaced(client.clone(), ns)
            .log_stream(name, &params)
            .await
        {
            Ok(reader) => {
                let pod = name.clone();
                streams.push(reader.lines().map_ok(move |l| (pod.clone(), l)).boxed());
            }
            Err(e) => tracing::info!("following the logs of Pod {ns}/{name}: {e}"),
        }
    }
    let merged = futures::stream::select_all(streams);
    let until = filter.until;
    let deadline = async move {
        match until {
            Some(until) => {
                let wait = until.duration_since(Timestamp::now());
                let wait = std::time::Duration::try_from(wait).unwrap_or_default();
                tokio::time::sleep(wait).await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    let stopped = async move {
        let _ = shutdown.wait_for(|v| *v).await;
    };
    let lines = merged
        .take_until(deadline)
        .take_until(stopped)
        .filter_map(|l| async move { l.ok() })
        .map(move |(pod, line)| {
            let (t, text) = split_timestamp(&line);
            match filter.judge(t, text) {
                Verdict::Send => Some(Some(frame(&pod, t, text, false))),
                Verdict::Skip => Some(None),
                Verdict::End => None,
            }
        })
        .take_while(|v| futures::future::ready(v.is_some()))
        .filter_map(|v| async move { v.flatten() })
        .chain(futures::stream::once(async { frame("", None, "", true) }))
        .map(Ok::<_, Infallible>);
    Body::from_stream(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, group: &str, name: &str, parent: Option<(&str, &str, &str)>) -> Value {
        let mut n =
            json!({"kind": kind, "name": name, "namespace": "shop", "uid": format!("u-{name}")});
        if !group.is_empty() {
            n["group"] = json!(group);
        }
        if let Some((g, k, p)) = parent {
            n["parentRefs"] = json!([{"group": g, "kind": k, "namespace": "shop", "name": p}]);
        }
        n
    }

    #[test]
    fn pods_below_the_named_object_as_argo_selects_them() {
        let nodes = vec![
            node("Deployment", "apps", "web", None),
            node(
                "ReplicaSet",
                "apps",
                "web-5d",
                Some(("apps", "Deployment", "web")),
            ),
            node(
                "Pod",
                "",
                "web-5d-a",
                Some(("apps", "ReplicaSet", "web-5d")),
            ),
            node(
                "Pod",
                "",
                "web-5d-b",
                Some(("apps", "ReplicaSet", "web-5d")),
            ),
            node("Deployment", "apps", "api", None),
            node(
                "ReplicaSet",
                "apps",
                "api-7c",
                Some(("apps", "Deployment", "api")),
            ),
            node(
                "Pod",
                "",
                "api-7c-x",
                Some(("apps", "ReplicaSet", "api-7c")),
            ),
        ];
        let names = |q: &str| -> Vec<String> {
            selected_pods(&nodes, &Query::parse(Some(q)))
                .into_iter()
                .map(|(_, n)| n)
                .collect()
        };
        assert_eq!(names(""), ["api-7c-x", "web-5d-a", "web-5d-b"]);
        assert_eq!(
            names("kind=Deployment&resourceName=web&group=apps"),
            ["web-5d-a", "web-5d-b"]
        );
        assert_eq!(names("podName=api-7c-x"), ["api-7c-x"]);
        assert_eq!(
            names("kind=Deployment&resourceName=nothing"),
            Vec::<String>::new()
        );
        assert_eq!(names("resourceName=api-7c"), ["api-7c-x"]);
    }

    #[test]
    fn frames_and_filters() {
        let (t, text) = split_timestamp("2026-12-01T10:00:00.250000000Z GET / 200");
        let f = frame("web-1", t, text, false);
        let v: Value = serde_json::from_str(f.trim()).unwrap();
        assert_eq!(v["result"]["content"], "GET / 200");
        assert_eq!(v["result"]["podName"], "web-1");
        assert_eq!(v["result"]["timeStamp"], "2026-12-01T10:00:00Z");
        assert_eq!(v["result"]["timeStampStr"], "2026-12-01T10:00:00.25Z");
        assert_eq!(v["result"]["last"], false);
        let filter = LineFilter::new(&Query::parse(Some("filter=!healthz"))).unwrap();
        assert!(matches!(filter.judge(None, "GET /healthz"), Verdict::Skip));
        assert!(matches!(filter.judge(None, "GET /"), Verdict::Send));
        let filter = LineFilter::new(&Query::parse(Some("filter=ERROR&matchCase=true"))).unwrap();
        assert!(matches!(filter.judge(None, "an error"), Verdict::Skip));
        let filter =
            LineFilter::new(&Query::parse(Some("untilTime=2026-12-01T10:00:01Z"))).unwrap();
        assert!(matches!(filter.judge(t, "x"), Verdict::Send));
        assert!(matches!(
            filter.judge("2026-12-01T10:00:02Z".parse().ok(), "x"),
            Verdict::End
        ));
        assert!(LineFilter::new(&Query::parse(Some("untilTime=10am"))).is_err());
    }
}
