//! Hostile input to the ApplicationSet routes of `plumb server` (the events route and the watch
//! stream included): names that would leave the API server's URL path or a field selector,
//! selectors the API server refuses, namespaces the server does not serve, bodies nested to blow the stack or
//! above the limit, unknown generators, confirmations that try to smuggle separators or `all`.
//! Each is refused with a 4xx naming the problem, nothing is written, and the server keeps
//! answering. Raw HTTP/1.1 over TCP, as an attacker sends it.

use super::server::{healthy, raw, start_in, status};

fn send(method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

fn set(name: &str) -> String {
    serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {"generators": [{"list": {"elements": [{"c": "a"}]}}],
                 "template": {"metadata": {"name": "{{c}}"},
                              "spec": {"project": "default",
                                       "source": {"repoURL": "https://example.com/a.git", "path": "x"},
                                       "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}}}
    })
    .to_string()
}

#[test]
fn applicationset_routes_refuse_hostile_input() {
    crate::running::env().ensure_applicationset_crd();
    let ns = crate::running::env().namespace("hostile-appsets");
    let server = start_in(ns.name());
    let addr = server.addr;
    // Names and namespaces that would leave the URL path or reach other namespaces.
    for path in [
        "/api/v1/applicationsets/..%2F..%2Fsecrets",
        "/api/v1/applicationsets/a%2Fb",
        "/api/v1/applicationsets/UPPER",
        "/api/v1/applicationsets/x?appsetNamespace=..%2Fkube-system",
    ] {
        let r = raw(addr, &send("GET", path, b""));
        assert!(matches!(status(&r), 400 | 404), "{path}: {r}");
    }
    // The events route and the watch stream: the same names and namespaces, and selectors the
    // API server refuses; each refused before any listing or streaming (a stream that were
    // opened would never end, and `raw` reads to the end).
    let long = "a".repeat(70_000);
    for path in [
        "/api/v1/applicationsets/..%2F..%2Fsecrets/events".to_string(),
        "/api/v1/applicationsets/UPPER/events".to_string(),
        "/api/v1/applicationsets/x/events?appsetNamespace=..%2Fkube-system".to_string(),
        "/api/v1/applicationsets/x/events?appsetNamespace=kube-system".to_string(),
        "/api/v1/stream/applicationsets?name=..%2F..%2Fsecrets".to_string(),
        "/api/v1/stream/applicationsets?name=a,metadata.namespace%3Dkube-system".to_string(),
        "/api/v1/stream/applicationsets?appSetNamespace=kube-system".to_string(),
        "/api/v1/stream/applicationsets?appSetNamespace=..%2Fx".to_string(),
        "/api/v1/stream/applicationsets?selector=a%20in%20(".to_string(),
        "/api/v1/stream/applicationsets?selector=%3D%3Dx".to_string(),
        format!("/api/v1/stream/applicationsets?name={long}"),
    ] {
        let r = raw(addr, &send("GET", &path, b""));
        let code = status(&r);
        assert!(
            (400..500).contains(&code),
            "{}: {r}",
            &path[..path.len().min(120)]
        );
        assert!(!r.contains("\"result\""), "{path}: nothing streamed: {r}");
    }
    let r = raw(
        addr,
        &send(
            "GET",
            "/api/v1/applicationsets?appsetNamespace=kube-system",
            b"",
        ),
    );
    assert_eq!(
        status(&r),
        403,
        "a namespace the server does not serve: {r}"
    );
    assert!(r.contains("is not permitted"), "{r}");
    // Bodies: a bad name, nesting, garbage, unknown generators, a templated project.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut bogus: serde_json::Value = serde_json::from_str(&set("bogus")).unwrap();
    bogus["spec"]["generators"] = serde_json::json!([{"exec": {"command": "rm -rf /"}}]);
    for (what, body, want) in [
        ("a name leaving the path", set("../../x"), "not a valid"),
        ("nesting", nested, ""),
        ("garbage", "{\"metadata\": 7}".to_string(), ""),
        (
            "an unknown generator",
            bogus.to_string(),
            "unrecognized generators: exec",
        ),
    ] {
        let r = raw(
            addr,
            &send("POST", "/api/v1/applicationsets", body.as_bytes()),
        );
        let code = status(&r);
        assert!((400..500).contains(&code), "{what}: {r}");
        assert!(r.contains(want), "{what}: {r}");
    }
    let r = raw(
        addr,
        &send(
            "POST",
            "/api/v1/applicationsets/generate",
            b"{\"applicationSet\": 5}",
        ),
    );
    assert!((400..500).contains(&status(&r)), "{r}");
    // Confirmations: separators and `all` smuggled in a name, too many fields.
    let r = raw(
        addr,
        &send("POST", "/api/v1/applicationsets", set("fleet").as_bytes()),
    );
    assert_eq!(status(&r), 200, "{r}");
    for body in [
        r#"{"applications": ["a,all"]}"#,
        r#"{"applications": ["all|x"]}"#,
        r#"{"applications": [""]}"#,
        r#"{"applications": ["a"], "extra": 1}"#,
        r#"{"applications": "a"}"#,
    ] {
        let r = raw(
            addr,
            &send(
                "POST",
                "/api/v1/applicationsets/fleet/confirm-deletion",
                body.as_bytes(),
            ),
        );
        assert!((400..500).contains(&status(&r)), "{body}: {r}");
    }
    let r = raw(addr, &send("GET", "/api/v1/applicationsets/fleet", b""));
    assert!(
        !r.contains("plumb.dev/confirm-deletion"),
        "no refused confirmation was written: {r}"
    );
    // Above the body limit.
    let big = format!("{{\"applicationSet\": \"{}\"}}", "x".repeat(70_000));
    let r = raw(
        addr,
        &send("POST", "/api/v1/applicationsets/generate", big.as_bytes()),
    );
    assert_eq!(status(&r), 413, "{}", &r[..r.len().min(300)]);
    // The events of an existing set, with garbage query parameters ignored as the gateway does.
    let r = raw(
        addr,
        &send(
            "GET",
            "/api/v1/applicationsets/fleet/events?resourceName=..%2F..&x=%00",
            b"",
        ),
    );
    assert_eq!(status(&r), 200, "{r}");
    assert!(r.contains("\"items\""), "{r}");
    healthy(addr);
}
