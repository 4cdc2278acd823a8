//! `scripts/testenv up` starts again on new ports when a port it picked is taken before the
//! component binds it (the race between picking a free port and using it).

use std::net::TcpListener;

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use plumb_testenv::{PrivateOptions, TestEnv};

#[tokio::test]
async fn up_retries_with_new_ports_when_the_api_port_is_taken() {
    // This process holds the port; `up` is told to try it first, unchecked, so kube-apiserver's
    // bind fails exactly as when another process takes a picked port first.
    let held = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = held.local_addr().expect("local addr").port();

    let env = TestEnv::private_with(&PrivateOptions {
        try_api_port: Some(port),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("up did not recover from the clash on port {port}: {e}"));
    let state = env
        .state_dir()
        .expect("a private control plane has a state dir");

    // The first attempt that started kube-apiserver clashed on the held port; its log is kept
    // as `kube-apiserver.attempt-<n>.log` (an attempt may also clash on a port another starting
    // control plane took), and a later attempt used another port.
    let attempts: Vec<String> = (1..5)
        .filter_map(|n| {
            std::fs::read_to_string(state.join(format!("logs/kube-apiserver.attempt-{n}.log"))).ok()
        })
        .collect();
    assert!(
        attempts
            .iter()
            .any(|log| log.contains("address already in use") && log.contains(&port.to_string())),
        "no attempt's kube-apiserver failed on the held port {port}; their last lines: {:?}",
        attempts
            .iter()
            .map(|log| log.lines().rev().take(3).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    let server = std::fs::read_to_string(state.join("server")).expect("server file");
    assert!(
        !server.trim().ends_with(&format!(":{port}")),
        "the control plane runs on another port than the held {port}: {server}"
    );

    // And it is a working control plane: the fake node is there and Ready.
    let nodes: Api<Node> = Api::all(env.client().await);
    let node = nodes.get("kwok-node-0").await.expect("the fake node");
    let ready = node
        .status
        .and_then(|s| s.conditions)
        .and_then(|cs| cs.into_iter().find(|c| c.type_ == "Ready"))
        .map(|c| c.status);
    assert_eq!(ready.as_deref(), Some("True"));
    drop(held);
}
