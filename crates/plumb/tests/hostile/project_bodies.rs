//! AppProject bodies sent to `plumb server` (`POST /api/v1/projects`, `PUT .../{name}`), issue
//! #27: a spec that is no object, a name that would leave the URL path, a role whose name or
//! policy smuggles a second rule (a comma, a newline, another project, a resource outside the
//! project), sync windows whose schedule, time zone, duration or description are hostile, a
//! service account that names a path, a `!*` source. Each is refused with 400 and Argo's
//! message naming the field, nothing is written, and the server keeps serving.
//!
//! The validation's unit tests are in `plumb-policy/src/project/validate.rs`; the API's own
//! tests in `plumb-server/tests/it/project_admin.rs`.

use serde_json::{Value, json};

use crate::server::{healthy, raw, start_in, status};

fn send(method: &str, path: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn project(name: &str, spec: Value) -> Value {
    json!({"project": {"metadata": {"name": name}, "spec": spec}})
}

/// A spec that is valid but for what `extra` adds.
fn spec(extra: Value) -> Value {
    let mut s = json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        s[k] = v.clone();
    }
    s
}

fn window(extra: Value) -> Value {
    let mut w = json!({"kind": "allow", "schedule": "0 22 * * *", "duration": "1h",
                       "applications": ["*"]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        w[k] = v.clone();
    }
    json!({"syncWindows": [w]})
}

fn role(name: &str, policies: &[&str], groups: &[&str]) -> Value {
    json!({"roles": [{"name": name, "policies": policies, "groups": groups}]})
}

fn cases() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!({"project": {"metadata": {"name": "hp"}, "spec": "sourceRepos"}}),
            "spec is not an object",
        ),
        (project("../default", spec(json!({}))), "../default"),
        (
            project("hp", spec(role("ci,admin", &[], &[]))),
            "invalid role name 'ci,admin'",
        ),
        (
            project(
                "hp",
                spec(role(
                    "ci",
                    &[
                        "p, proj:hp:ci, applications, get, hp/*, allow\np, role:admin, *, *, *, allow",
                    ],
                    &[],
                )),
            ),
            "invalid policy rule",
        ),
        (
            project(
                "hp",
                spec(role(
                    "ci",
                    &["p, proj:other:ci, applications, get, other/*, allow"],
                    &[],
                )),
            ),
            "policy subject must be: 'proj:hp:ci'",
        ),
        (
            project(
                "hp",
                spec(role(
                    "ci",
                    &["p, proj:hp:ci, accounts, update, hp/*, allow"],
                    &[],
                )),
            ),
            "invalid policy rule",
        ),
        (
            project("hp", spec(role("ci", &[], &["\"admins\", role:admin"]))),
            "group",
        ),
        (
            project("hp", spec(window(json!({"schedule": "* * * * * * * * *"})))),
            "sync window 0",
        ),
        (
            project(
                "hp",
                spec(window(json!({"timeZone": "../../../../etc/passwd"}))),
            ),
            "sync window 0",
        ),
        (
            project(
                "hp",
                spec(window(json!({"duration": "99999999999999999h"}))),
            ),
            "sync window 0",
        ),
        (
            project("hp", spec(window(json!({"description": "d".repeat(300)})))),
            "description must not exceed 255 characters",
        ),
        (
            project("hp", spec(json!({"sourceRepos": ["!*"]}))),
            "source repository has an invalid format, '!*'",
        ),
        (
            project(
                "hp",
                spec(
                    json!({"destinationServiceAccounts": [{"server": "*", "namespace": "*",
                    "defaultServiceAccount": "../../kube-system:admin"}]}),
                ),
            ),
            "defaultServiceAccount has an invalid format",
        ),
        (
            project(
                "hp",
                spec(
                    json!({"destinations": [{"server": "a", "namespace": "x"}, {"server": "a", "namespace": "x"}]}),
                ),
            ),
            "destination 'a/x' already added",
        ),
    ]
}

#[test]
fn hostile_project_bodies_are_refused_naming_the_field_and_write_nothing() {
    let ns = crate::running::env().namespace("hostile-project-bodies");
    let server = start_in(ns.name());
    let addr = server.addr;
    let mut problems = Vec::new();
    for (body, expected) in cases() {
        let answer = raw(addr, &send("POST", "/api/v1/projects", &body));
        if status(&answer) != 400 || !answer.contains(expected) {
            problems.push(format!("{expected}: {answer}"));
        }
        assert!(answer.len() < 8192, "bounded: {answer}");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // Nothing was written.
    let answer = raw(
        addr,
        b"GET /api/v1/projects/hp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status(&answer), 404, "{answer}");
    // The same refusals on an update of a project that exists; it keeps its spec.
    let answer = raw(
        addr,
        &send("POST", "/api/v1/projects", &project("hp", spec(json!({})))),
    );
    assert_eq!(status(&answer), 200, "{answer}");
    for (body, expected) in cases().into_iter().skip(2) {
        let answer = raw(addr, &send("PUT", "/api/v1/projects/hp", &body));
        assert_eq!(status(&answer), 400, "{expected}: {answer}");
        assert!(answer.contains(expected), "{expected}: {answer}");
    }
    let answer = raw(
        addr,
        b"GET /api/v1/projects/hp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert!(
        !body.contains("roles") && !body.contains("syncWindows"),
        "{answer}"
    );
    healthy(addr);
}
