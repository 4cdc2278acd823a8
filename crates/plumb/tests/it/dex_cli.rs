//! `plumb dex rundex` (Argo's `argocd-dex rundex`) against the real control plane with the real
//! Dex (`scripts/dex build`): Dex serves the configuration generated from argocd-cm and
//! argocd-secret, is restarted with the new one when argocd-cm changes, and a `dex.config`
//! that does not parse stops it with a message naming the ConfigMap (non-zero exit, so the Pod
//! is restarted and the error is in its log); `gendexcfg` prints the configuration.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::dex::{PASSWORD_HASH, dex_binary, free_port};
use serde_json::{Value, json};

use crate::app::{env, kubectl_apply};
use crate::server_cli::Killed;

const DEADLINE: Duration = Duration::from_secs(90);

fn dex_config() -> String {
    format!(
        "connectors:\n- type: mockCallback\n  id: mock\n  name: Example\nenablePasswordDB: true\nstaticPasswords:\n- email: a@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: a\n  userID: ssoui-a\n"
    )
}

fn argocd_cm(ns: &str, url: &str, dex: &str) {
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns},
        "data": {"url": url, "dex.config": dex}
    }));
}

/// The issuer Dex's discovery document names, once it answers (None: not answering).
fn issuer(port: u16) -> Option<String> {
    let url = format!("http://127.0.0.1:{port}/api/dex/.well-known/openid-configuration");
    let resp = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
        .get(url)
        .send()
        .ok()?;
    let doc: Value = serde_json::from_str(&resp.text().ok()?).ok()?;
    doc["issuer"].as_str().map(str::to_string)
}

fn wait_for_issuer(port: u16, want: &str) {
    let start = Instant::now();
    while issuer(port).as_deref() != Some(want) {
        assert!(start.elapsed() < DEADLINE, "Dex never served issuer {want}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn rundex_serves_restarts_and_stops_on_a_bad_config() {
    let namespace = env().namespace("ssoui-dex");
    let ns = namespace.name();
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "argocd-secret", "namespace": ns},
        "stringData": {"server.secretkey": "ssoui-test-key"}
    }));
    argocd_cm(ns, "https://plumb.example.com", &dex_config());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dex.yaml");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");

    let printed = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "dex",
            "gendexcfg",
            "-n",
            ns,
            "--listen",
            &listen,
            "--kubeconfig",
        ])
        .arg(env().kubeconfig())
        .output()
        .unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let printed = String::from_utf8_lossy(&printed.stdout);
    assert!(
        printed.contains("issuer: https://plumb.example.com/api/dex"),
        "{printed}"
    );
    assert!(printed.contains(&listen), "{printed}");

    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "dex",
            "rundex",
            "-n",
            ns,
            "--listen",
            &listen,
            "--poll-interval",
            "1",
        ])
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .arg("--dex")
        .arg(dex_binary())
        .arg("--config-file")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut child = Killed(child);
    wait_for_issuer(port, "https://plumb.example.com/api/dex");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "the configuration holds client secrets"
    );

    // argocd-cm changes: Dex is restarted with the new configuration.
    argocd_cm(ns, "https://plumb2.example.com", &dex_config());
    wait_for_issuer(port, "https://plumb2.example.com/api/dex");

    // A dex.config that does not parse: rundex stops Dex and exits non-zero, saying why.
    argocd_cm(ns, "https://plumb2.example.com", "connectors: [\n");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "rundex did not stop on a bad dex.config"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let mut log = String::new();
    stderr.read_to_string(&mut log).unwrap();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains(&format!(
            "namespace {ns}: ConfigMap argocd-cm, key dex.config: not valid YAML"
        )),
        "{log}"
    );
    assert!(
        !log.contains("ssoui-test-key"),
        "no secret in the log: {log}"
    );
    assert_eq!(issuer(port), None, "Dex is stopped with it");
}
