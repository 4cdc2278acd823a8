//! Attacks on `POST /api/webhook` (docs/security.md, "Git webhooks"), the one route that takes
//! requests from outside without an API token: forged and replayed-onto-another-body signatures,
//! a SHA-1 downgrade with a wrong key, an event header of one provider with another's proof,
//! oversized payloads (declared and streamed), JSON nested to blow the stack, signature headers
//! far too long, and repository URLs written as regular expressions to match every
//! Application. Each is refused or matches nothing, no Application is refreshed that the push
//! does not name, and the server keeps serving.

use std::net::SocketAddr;

use serde_json::json;

use crate::running::{get_json, kubectl_apply};
use crate::server::{healthy, raw, start_in, status};

const REFRESH: &str = "argocd.argoproj.io/refresh";

fn webhook(headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST /api/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut req = req.into_bytes();
    req.extend_from_slice(body);
    req
}

fn github_push(html_url: &str) -> Vec<u8> {
    json!({"ref": "refs/heads/main", "before": "0".repeat(40), "after": "1".repeat(40),
           "repository": {"html_url": html_url, "default_branch": "main"}, "commits": []})
    .to_string()
    .into_bytes()
}

fn refreshed(ns: &str, name: &str) -> Option<String> {
    get_json(ns, "applications.argoproj.io", name).and_then(|a| {
        a["metadata"]["annotations"][REFRESH]
            .as_str()
            .map(String::from)
    })
}

fn send(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> String {
    raw(addr, &webhook(headers, body))
}

#[test]
fn webhook_attacks_are_refused_and_refresh_nothing() {
    let namespace = crate::running::env().namespace("hostile-webhooks");
    let ns = namespace.name().to_string();
    let server = start_in(&ns);
    let addr = server.addr;
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "argocd-secret", "namespace": ns},
        "stringData": {"webhook.github.secret": "gh-s3cret"}}));
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns},
        "data": {"webhook.maxPayloadSizeMB": "1"}}));
    for (name, repo) in [
        ("payments", "https://github.com/acme/payments-config"),
        ("ledger", "https://git.acme.internal/finance/ledger"),
    ] {
        kubectl_apply(
            &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"project": "default",
                     "source": {"repoURL": repo, "path": ".", "targetRevision": "main"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}}),
        );
    }
    healthy(addr);
    let body = github_push("https://github.com/acme/payments-config");

    // Forged: signed with a guessed key; a valid signature of another body; a SHA-1 signature
    // with a wrong key; Gogs' proof under GitHub's event header; a 100 kB signature header.
    let guessed = format!("sha256={}", plumb_server::sign_sha256_hex(b"guess", &body));
    let other_body = format!(
        "sha256={}",
        plumb_server::sign_sha256_hex(b"gh-s3cret", b"{\"ref\":\"refs/heads/main\"}")
    );
    let sha1 = format!("sha1={}", "ab".repeat(20));
    let gogs_style = plumb_server::sign_sha256_hex(b"gh-s3cret", &body);
    let long = format!("sha256={}", "a".repeat(100_000));
    for headers in [
        vec![
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", guessed.as_str()),
        ],
        vec![
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", other_body.as_str()),
        ],
        vec![
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature", sha1.as_str()),
        ],
        vec![
            ("X-GitHub-Event", "push"),
            ("X-Gogs-Signature", gogs_style.as_str()),
        ],
        vec![
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", long.as_str()),
        ],
        vec![("X-GitHub-Event", "push")],
    ] {
        let r = send(addr, &headers, &body);
        assert!(matches!(status(&r), 400 | 431), "{headers:?}: {r}");
        assert!(!r.contains("gh-s3cret"), "{r}");
        assert_eq!(refreshed(&ns, "payments"), None, "{headers:?} refreshed");
    }
    healthy(addr);

    // Providers without a secret are accepted unverified (as in Argo CD), so their payloads are
    // attacker-controlled: URLs written as patterns must match nothing but themselves.
    for url in [
        "https://github.com/.*",
        "https://.*/.*",
        "https://github.com/acme/payments-config|.*",
        "https://github.com/acme/(payments-config|ledger)",
        "https://git.acme.internal/finance/ledger/../../acme/payments-config",
        "not a url",
        "",
    ] {
        let gogs = json!({"ref": "refs/heads/main", "repository": {"html_url": url, "default_branch": "main"}})
            .to_string();
        let r = send(addr, &[("X-Gogs-Event", "push")], gogs.as_bytes());
        // An empty URL is no URL: refused as a missing field, like any malformed payload.
        let expected = if url.is_empty() { 400 } else { 200 };
        assert_eq!(status(&r), expected, "{url}: {r}");
        assert_eq!(refreshed(&ns, "payments"), None, "{url} refreshed payments");
        assert_eq!(refreshed(&ns, "ledger"), None, "{url} refreshed ledger");
    }

    // Declared above webhook.maxPayloadSizeMB: refused before the body is read.
    let r = raw(
        addr,
        b"POST /api/webhook HTTP/1.1\r\nHost: x\r\nX-Gogs-Event: push\r\nContent-Length: 60000000\r\nConnection: close\r\n\r\n{",
    );
    assert_eq!(status(&r), 400, "{r}");
    assert!(r.contains("must be under 1 MB"), "{r}");
    // Streamed (chunked, no length) above it: cut at the limit.
    let mut chunked = b"POST /api/webhook HTTP/1.1\r\nHost: x\r\nX-Gogs-Event: push\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    let chunk = vec![b' '; 65536];
    for _ in 0..20 {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = raw(addr, &chunked);
    assert_eq!(status(&r), 400, "{r}");
    healthy(addr);

    // JSON nested far deeper than any payload: refused, no stack overflow.
    let deep = "[".repeat(200_000);
    let r = send(addr, &[("X-Gogs-Event", "push")], deep.as_bytes());
    assert_eq!(status(&r), 400, "{r}");
    let r = send(addr, &[("X-Gogs-Event", "push")], b"\"just a string\"");
    assert_eq!(status(&r), 400, "{r}");
    healthy(addr);

    // The genuine push still works after all that, and refreshes only its Application.
    let good = format!(
        "sha256={}",
        plumb_server::sign_sha256_hex(b"gh-s3cret", &body)
    );
    let r = send(
        addr,
        &[
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", good.as_str()),
        ],
        &body,
    );
    assert_eq!(status(&r), 200, "{r}");
    assert_eq!(refreshed(&ns, "payments").as_deref(), Some("normal"));
    assert_eq!(refreshed(&ns, "ledger"), None);
}
