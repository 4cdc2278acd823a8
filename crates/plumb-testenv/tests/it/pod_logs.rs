//! Pod logs through the apiserver's `pods/log` (docs/testing.md, "Pod logs"): kwok serves the log
//! files a `Logs` object names, per container, with the kubelet's options (tail, timestamps,
//! follow).

use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::pod_logs::{LogFile, LogLine, Stream};
use serde_json::json;

fn line<'a>(time: &'a str, stream: Stream, text: &'a str) -> LogLine<'a> {
    LogLine { time, stream, text }
}

#[tokio::test]
async fn pod_logs_are_served_per_container_with_tail_timestamps_and_follow() {
    let env = TestEnv::shared();
    let ns = env.namespace("podlogs");
    let client = env.client().await;
    let pods: Api<Pod> = Api::namespaced(client, ns.name());
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [
            {"name": "app", "image": "registry.example/app:v1"},
            {"name": "proxy", "image": "registry.example/proxy:v1"}
        ]}
    }))
    .expect("valid pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create pod");

    let dir = tempfile::tempdir().expect("tempdir");
    let app = LogFile::create(
        dir.path(),
        "app.log",
        &[
            line(
                "2026-12-01T10:00:00.000000000Z",
                Stream::Stdout,
                "listening on :8080",
            ),
            line(
                "2026-12-01T10:00:01.500000000Z",
                Stream::Stderr,
                "GET /healthz 200",
            ),
            line(
                "2026-12-01T10:00:02.000000000Z",
                Stream::Stdout,
                "GET / 200",
            ),
        ],
    );
    let proxy = LogFile::create(
        dir.path(),
        "proxy.log",
        &[line(
            "2026-12-01T10:00:00.250000000Z",
            Stream::Stdout,
            "proxy up",
        )],
    );
    env.set_pod_logs(ns.name(), "web", &[(&["app"], &app), (&["proxy"], &proxy)]);

    let params = |container: &str| LogParams {
        container: Some(container.to_string()),
        ..Default::default()
    };
    // Both streams, in order; the CRI prefix is the kubelet's business, not the reader's.
    assert_eq!(
        pods.logs("web", &params("app")).await.expect("app logs"),
        "listening on :8080\nGET /healthz 200\nGET / 200\n"
    );
    assert_eq!(
        pods.logs("web", &params("proxy"))
            .await
            .expect("proxy logs"),
        "proxy up\n"
    );
    let tail = LogParams {
        tail_lines: Some(1),
        timestamps: true,
        ..params("app")
    };
    assert_eq!(
        pods.logs("web", &tail).await.expect("tail"),
        "2026-12-01T10:00:02.000000000Z GET / 200\n"
    );

    // Follow: lines appended while the stream is open arrive on it.
    let follow = LogParams {
        follow: true,
        ..params("app")
    };
    let mut lines = pods
        .log_stream("web", &follow)
        .await
        .expect("follow")
        .lines()
        .map_err(|e| e.to_string())
        .boxed();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let next = tokio::time::timeout(Duration::from_secs(60), lines.next())
            .await
            .expect("the existing lines within 60 s");
        seen.push(next.expect("a line").expect("read"));
    }
    app.append(&[line(
        "2026-12-01T10:00:03.000000000Z",
        Stream::Stdout,
        "GET /cart 200",
    )]);
    let appended = tokio::time::timeout(Duration::from_secs(60), lines.next())
        .await
        .expect("the appended line within 60 s");
    seen.push(appended.expect("a line").expect("read"));
    assert_eq!(
        seen,
        [
            "listening on :8080",
            "GET /healthz 200",
            "GET / 200",
            "GET /cart 200"
        ]
    );

    // A Pod without a Logs object: kwok (the kubelet API) says so, and the apiserver passes it on.
    let mut bare = pod.clone();
    bare.metadata.name = Some("bare".into());
    pods.create(&PostParams::default(), &bare)
        .await
        .expect("create pod");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let err = loop {
        // Until the Pod is scheduled the apiserver has no node to ask, and answers an empty log.
        let answer = pods.logs("bare", &params("app")).await;
        assert!(
            std::time::Instant::now() < deadline,
            "Pod bare: no answer from kwok within 60 s: {answer:?}"
        );
        match answer {
            Err(err) if err.to_string().contains("no logs found") => break err,
            Ok(text) => assert_eq!(text, "", "Pod bare has no log file"),
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        err.to_string().contains(&format!(
            "no logs found for container \"app\" in pod \"{}/bare\"",
            ns.name()
        )),
        "{err}"
    );
}
