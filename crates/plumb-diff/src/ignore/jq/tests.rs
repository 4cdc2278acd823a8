use super::*;
use serde_json::json;

fn limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(10),
        fuel: 1_000_000,
        stack_reserve: 256 * 1024,
    }
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "app", "image": "registry.example.com/api:1.4.2"},
            {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0"}]}}}})
}

#[test]
fn select_paths() {
    let p = paths(
        r#".spec.template.spec.containers[] | select(.name == "istio-proxy")"#,
        &deployment(),
        limits(),
        false,
    )
    .unwrap();
    assert_eq!(
        p,
        vec![vec![
            Step::Token("spec".into()),
            Step::Token("template".into()),
            Step::Token("spec".into()),
            Step::Token("containers".into()),
            Step::Index(1)
        ]]
    );
}

#[test]
fn missing_path_is_a_path_not_an_error() {
    let p = paths(".spec.missing.field", &json!({"spec": {}}), limits(), false).unwrap();
    assert_eq!(p.len(), 1);
}

#[test]
fn invalid_expression() {
    assert!(matches!(check(".spec[[["), Err(JqFailure::Invalid(_))));
    assert!(matches!(
        check(".spec | nosuchfn"),
        Err(JqFailure::Invalid(_))
    ));
    assert!(check(".metadata.annotations[\"a/b\"]").is_ok());
}

#[test]
fn runaway_loop_is_cancelled_by_fuel() {
    // Constant memory, effectively endless: counts to 10^15 before deciding.
    let r = paths(
        ".a | select(last(range(1e15)) < 0)",
        &json!({}),
        limits(),
        false,
    );
    assert_eq!(r, Err(JqFailure::Fuel(1_000_000)));
}

#[test]
fn runaway_loop_is_cancelled_by_the_deadline() {
    let limits = Limits {
        timeout: Duration::from_millis(50),
        fuel: u64::MAX,
        ..limits()
    };
    let r = paths("def f: f; .a | select(f)", &json!({}), limits, false);
    assert_eq!(r, Err(JqFailure::Timeout(Duration::from_millis(50))));
}

#[test]
fn unbounded_recursion_stops_before_the_stack_does() {
    let limits = Limits {
        fuel: u64::MAX,
        ..limits()
    };
    // Recursion that is no tail call, in path mode and in value mode: each level is a frame.
    for expr in [
        "def f: f | .a; f",
        ".a | select(def f: 1 + f; f)",
        "def f: 1 + f; .a | select(f)",
    ] {
        let r = paths(expr, &json!({"a": 1}), limits, false);
        assert_eq!(r, Err(JqFailure::Stack), "{expr}");
    }
    // `1 + f` is no path: jaq refuses it before recursing.
    let r = paths("def f: 1 + f; f", &json!({"a": 1}), limits, false);
    assert!(matches!(r, Err(JqFailure::Runtime(_))), "{r:?}");
    // With the default fuel too, whichever limit comes first, it is an error.
    let r = paths(
        ".a | select(def f: 1 + f; f)",
        &json!({}),
        super::tests::limits(),
        false,
    );
    assert!(r.as_ref().is_err_and(JqFailure::is_unbounded), "{r:?}");
}

#[test]
fn evaluation_after_a_stop_is_unaffected() {
    let _ = paths(".a | select(def f: 1 + f; f)", &json!({}), limits(), false);
    let p = paths(".spec.replicas", &deployment(), limits(), false).unwrap();
    assert_eq!(p.len(), 1);
    // No budget is left armed on this thread after a run.
    budget::tick();
}

#[test]
fn allocation_in_one_step_is_refused() {
    for expr in [
        r#".a | select(("x" * 1e12) | length > 0)"#,
        ".a | select((.[1e12] = 1) | length > 0)",
        ".a | select(setpath([1e12]; 1) | length > 0)",
        r#".a | select(scalb("x"; 40) | length > 0)"#,
        ".spec |= 1",
        ".a | select(env.HOME)",
        ".a | select(halt_error)",
    ] {
        assert!(
            matches!(check(expr), Err(JqFailure::Refused(_))),
            "{expr}: {:?}",
            check(expr)
        );
    }
    // Operators inside strings are text; comparison operators are not assignments.
    assert!(check(r#".metadata.annotations["a*b=c"] | select(. == "x" or . != "y")"#).is_ok());
}

#[test]
fn builtins_that_print_fail_inside() {
    // `debug` prints the value it sees: in the logs that would be a Secret's data.
    let r = paths(
        ".data | debug",
        &json!({"data": {"password": "aHVudGVyMg=="}}),
        limits(),
        false,
    );
    assert!(matches!(r, Err(JqFailure::Runtime(_))), "{r:?}");
}

#[test]
fn runtime_errors_do_not_quote_the_object() {
    let secret = json!({"kind": "Secret", "data": {"password": "aHVudGVyMg=="}});
    let r = paths(".data.password[0]", &secret, limits(), false);
    let Err(JqFailure::Runtime(msg)) = r else {
        panic!("{r:?}")
    };
    assert!(!msg.contains("aHVudGVyMg=="), "{msg}");
    let r = paths(".data.password[0]", &secret, limits(), true);
    let Err(JqFailure::Runtime(msg)) = r else {
        panic!("{r:?}")
    };
    assert!(msg.contains("aHVudGVyMg=="), "revealed when asked: {msg}");
}

#[test]
fn many_paths_are_capped() {
    let r = paths(
        ".a | select(false) , (range(200000) | tostring | [.] | .[0] | empty), .x[range(200000)]",
        &json!({}),
        limits(),
        false,
    );
    assert!(matches!(r, Err(JqFailure::Runtime(_))), "{r:?}");
}
