//! Untrusted evaluation: jq ignore rules and Lua health scripts stay within their limits,
//! stop for real (no thread left running), and a failure is an error for that rule or
//! script, never a process abort.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use plumb_health::{HealthCode, LuaLimits, LuaScript};
use serde_json::json;

fn plumb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .output()
        .expect("run plumb")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: payments
  labels:
    app.kubernetes.io/name: payments-api
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: payments-api
  template:
    metadata:
      labels:
        app.kubernetes.io/name: payments-api
    spec:
      containers:
      - name: api
        image: registry.example.com/payments/api:1.4.2
        ports:
        - containerPort: 8080
          name: http
          protocol: TCP
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
"#;

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().into_owned()
}

fn app_with_jq(expr: &str) -> String {
    format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: payments
  namespace: argocd
spec:
  project: default
  destination:
    server: https://kubernetes.default.svc
    namespace: payments
  source:
    repoURL: https://git.example.com/payments.git
    path: deploy
  ignoreDifferences:
  - group: apps
    kind: Deployment
    jqPathExpressions:
    - {}
"#,
        serde_json::to_string(expr).unwrap()
    )
}

/// `plumb diff` with one jq rule; the process must end by itself with an answer.
fn diff_with_rule(expr: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let desired = write(dir.path(), "desired.yaml", DEPLOYMENT);
    let live = write(
        dir.path(),
        "live.yaml",
        &DEPLOYMENT.replace("replicas: 3", "replicas: 5"),
    );
    let app = write(dir.path(), "app.yaml", &app_with_jq(expr));
    plumb(&[
        "diff",
        "--desired",
        &desired,
        "--live",
        &live,
        "--ignore-differences",
        &app,
    ])
}

#[test]
fn jq_recursion_is_an_error_not_a_stack_overflow() {
    // Before: the jq thread's stack overflowed and the process aborted (SIGABRT).
    for expr in [".spec | select(def f: 1 + f; f)", "def f: f | .a; f"] {
        let out = diff_with_rule(expr);
        assert_eq!(out.status.code(), Some(2), "{expr}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("spec.ignoreDifferences[0]") && err.contains("recursed too deeply"),
            "{expr}: {err}"
        );
    }
}

#[test]
fn jq_endless_loop_is_cancelled_and_leaves_no_thread() {
    fn threads() -> usize {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
    // In-process through the library, as the controller runs it: the thread count before and
    // after shows no evaluation left behind (before, each timeout left a thread spinning).
    let rule: plumb_diff::IgnoreRule = serde_json::from_value(json!({
        "group": "apps", "kind": "Deployment",
        "jqPathExpressions": [".spec.replicas | select(last(range(1e15)) < 0)"]}))
    .unwrap();
    let opts = plumb_diff::IgnoreOptions {
        jq_timeout: Duration::from_millis(100),
        jq_fuel: u64::MAX,
        ..Default::default()
    };
    let before = threads();
    let err = plumb_diff::IgnoreRules::compile(vec![rule.clone(); 5], opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ran longer than 100ms"), "{err}");
    assert_eq!(threads(), before, "no thread left running");
    // With the default step budget it stops on fuel. The deadline is set far out: on a loaded
    // machine (a debug build, other tests on the same cores) the default 1 s deadline could
    // otherwise come first and hide which bound fired.
    let fuel_only = plumb_diff::IgnoreOptions {
        jq_timeout: Duration::from_secs(600),
        ..Default::default()
    };
    let err = plumb_diff::IgnoreRules::compile(vec![rule], fuel_only)
        .unwrap_err()
        .to_string();
    assert!(err.contains("evaluation steps"), "{err}");
    // And through the CLI the same rule is a clear error.
    let out = diff_with_rule(".spec.replicas | select(last(range(1e15)) < 0)");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("was stopped"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn jq_memory_bombs_are_refused() {
    for expr in [
        r#".spec | select(("x" * 1e12) | length > 0)"#,
        ".spec | select((.[1e12] = 1) | length > 0)",
        ".spec | select(setpath([1e12]; 1) | length > 0)",
        ".spec | select([range(1e12)] | length > 0)",
    ] {
        let out = diff_with_rule(expr);
        assert_eq!(out.status.code(), Some(2), "{expr}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.contains("refused") || err.contains("stopped"),
            "{expr}: {err}"
        );
    }
}

#[test]
fn jq_values_doubled_in_few_steps_are_stopped() {
    // Before: a step can copy a whole value, so these took a few dozen steps each and either
    // ran on past the deadline (the clock was read every 256 steps) or allocated until the
    // process aborted. The memory check stops them; the time limit backs it up.
    for expr in [
        ".spec | select((reduce range(40) as $i ([1]; [.[], .[]])) | length > 0)",
        ".spec | select(([limit(40; repeat(1))] | reduce .[] as $i ([1]; . + .)) | length > 0)",
    ] {
        let out = diff_with_rule(expr);
        assert_eq!(out.status.code(), Some(2), "{expr}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("spec.ignoreDifferences[0]")
                && (err.contains("grew memory") || err.contains("ran longer")),
            "{expr}: {err}"
        );
    }
}

fn lua(script: &str, limits: &LuaLimits) -> plumb_health::HealthStatus {
    LuaScript::new(
        script,
        false,
        "argocd-cm resource.customizations.health.apps_Deployment",
    )
    .evaluate(&deployment_object(), limits)
    .expect("a health")
}

/// The Deployment as the API server returns it, status included.
fn deployment_object() -> serde_json::Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "payments-api", "namespace": "payments", "generation": 4,
            "uid": "6f1c3c1e-8a43-4c59-9f3e-0d0f6c2f4b11", "resourceVersion": "918273"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app.kubernetes.io/name": "payments-api"}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": "payments-api"}},
                "spec": {"containers": [{"name": "api", "image": "registry.example.com/payments/api:1.4.2"}]}}},
        "status": {"observedGeneration": 4, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3}})
}

#[test]
fn lua_backtracking_pattern_is_stopped() {
    // Before: a minute inside C string.find with the instruction and time limits set.
    let script = r#"local s = string.rep("a", 5000)
        if s:find(string.rep("a*", 12) .. "b") then return {status = "Degraded"} end
        return {status = "Healthy"}"#;
    let limits = LuaLimits::default()
        .instructions(u64::MAX)
        .wall_time(Duration::from_millis(500));
    let h = lua(script, &limits);
    assert_eq!(h.code, HealthCode::Unknown);
    assert_eq!(
        h.message,
        "Lua health script stopped: it ran longer than its time limit of 500ms"
    );
}

#[test]
fn lua_memory_bomb_is_stopped() {
    let limits = LuaLimits::default().memory_bytes(32 * 1024 * 1024);
    for script in [
        r#"local s = "x" for i = 1, 40 do s = s .. s end return {status = "Healthy"}"#,
        r#"local t = {} for i = 1, 1e9 do t[i] = {i, i, i} end return {status = "Healthy"}"#,
        r#"local s = string.rep("x", 2^30) return {status = "Healthy"}"#,
    ] {
        let h = lua(script, &limits);
        assert_eq!(
            h.message, "Lua health script stopped: it exceeded its memory limit of 32 MiB",
            "{script}"
        );
    }
}

#[test]
fn lua_endless_loop_is_stopped() {
    let h = lua(
        "while true do end",
        &LuaLimits::default()
            .instructions(u64::MAX)
            .wall_time(Duration::from_millis(200)),
    );
    assert_eq!(
        h.message,
        "Lua health script stopped: it ran longer than its time limit of 200ms"
    );
    let h = lua(
        "local n = 0 while true do n = n + 1 end",
        &LuaLimits::default().instructions(1_000_000),
    );
    assert_eq!(
        h.message,
        "Lua health script stopped: it exceeded its budget of 1000000 instructions"
    );
}

#[test]
fn lua_error_is_a_health_message() {
    let h = lua(
        r#"local x = obj.spec.nothere.deeper return {status = "Healthy"}"#,
        &LuaLimits::default(),
    );
    assert_eq!(h.code, HealthCode::Unknown);
    assert!(h.message.contains("attempt to index"), "{}", h.message);
    let h = lua(r#"error("custom failure")"#, &LuaLimits::default());
    assert_eq!(h.code, HealthCode::Unknown);
    assert!(h.message.contains("custom failure"), "{}", h.message);
}

/// Live objects are written by whoever may write them in the destination cluster: the rule for
/// Crossplane claims and composites (recognised by their shape, in the generic path) must take
/// any field of any type without panicking, and never call a malformed object healthy.
#[test]
fn crossplane_shaped_objects_with_malformed_fields_get_a_verdict_not_a_panic() {
    let shaped = |spec: serde_json::Value, status: serde_json::Value| {
        json!({"apiVersion": "db.acme.example/v1", "kind": "Database",
               "metadata": {"name": "d", "namespace": "n", "generation": "7"},
               "spec": spec, "status": status})
    };
    let reference = json!({"compositionRef": {"name": "c"}});
    let huge = "x".repeat(1 << 20);
    let cases = [
        // Conditions of the wrong types, or not a list at all.
        shaped(
            reference.clone(),
            json!({"conditions": {"type": "Ready", "status": "True"}}),
        ),
        shaped(
            reference.clone(),
            json!({"conditions": [1, null, "Ready", [{"type": "Ready"}]]}),
        ),
        shaped(
            reference.clone(),
            json!({"conditions": [{"type": ["Synced"], "status": false, "reason": 3}]}),
        ),
        shaped(
            reference.clone(),
            json!({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": "nine"}]}),
        ),
        // Crossplane's fields of the wrong types.
        shaped(
            json!({"crossplane": "compositionRef"}),
            json!({"conditions": [{"type": "Ready", "status": "True"}]}),
        ),
        shaped(
            json!({"resourceRefs": "all"}),
            json!({"conditions": [{"type": "Synced", "status": "False"}]}),
        ),
        shaped(json!([reference.clone()]), json!({"conditions": []})),
        // A message of a megabyte.
        shaped(
            reference.clone(),
            json!({"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": huge}]}),
        ),
    ];
    for obj in &cases {
        if let Some(h) = plumb_health::assess(obj) {
            // Whatever it says, a malformed Ready never reads as Healthy, except the one case
            // with a well-formed Ready=True condition (its bad observedGeneration is ignored).
            let well_formed_ready = obj["status"]["conditions"][0]["type"] == "Ready"
                && obj["status"]["conditions"][0]["status"] == "True";
            if !well_formed_ready {
                assert_ne!(h.code, HealthCode::Healthy, "{h:?} for {obj}");
            }
        }
    }
    let failed = plumb_health::assess(&cases[7]).expect("a verdict");
    assert_eq!(failed.code, HealthCode::Degraded);
}
