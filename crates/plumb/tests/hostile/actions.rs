//! Resource action scripts (argocd-cm `resource.customizations.actions.<group>_<kind>`) are
//! written by whoever may edit the settings, and run by the CLI on live objects: they get the
//! health scripts' sandbox and limits, may only patch the object they ran on, and what they
//! return is bounded.

use std::collections::BTreeMap;
use std::time::Duration;

use plumb_health::LuaLimits;
use plumb_health::actions::{ActionError, Actions};
use plumb_model::Settings;
use serde_json::{Value, json};

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "payments-api", "namespace": "payments"},
        "spec": {"replicas": 3, "template": {"metadata": {}, "spec": {"containers": [{"name": "api", "image": "api:1"}]}}}})
}

/// Settings with one action `go` whose script is `action`.
fn with_action(action: &str) -> Actions {
    let indented: String = action.lines().map(|l| format!("    {l}\n")).collect();
    let entry = format!(
        "discovery.lua: |\n  return {{go = {{}}}}\ndefinitions:\n- name: go\n  action.lua: |\n{indented}"
    );
    let settings = Settings::from_data(BTreeMap::from([(
        "resource.customizations.actions.apps_Deployment".to_string(),
        entry,
    )]));
    Actions::from_settings(&settings)
        .unwrap()
        // The instruction budget is set out of reach so the time limit is what these tests
        // see: on an idle machine 100 million instructions took less than 500 ms (CI).
        .with_limits(
            LuaLimits::default()
                .wall_time(Duration::from_millis(500))
                .instructions(1 << 50),
        )
}

fn run(action: &str) -> Result<Vec<plumb_health::actions::ImpactedResource>, ActionError> {
    with_action(action).run(&deployment(), "go", &BTreeMap::new())
}

fn error(action: &str) -> String {
    run(action).unwrap_err().to_string()
}

const ORIGIN: &str =
    "argocd-cm resource.customizations.actions.apps_Deployment definitions[go] action.lua";

#[test]
fn runaway_loop_is_stopped() {
    assert_eq!(
        error("while true do end"),
        format!("{ORIGIN}: Lua action script stopped: it ran longer than its time limit of 500ms")
    );
    // pcall cannot swallow the stop.
    assert_eq!(
        error("while true do pcall(function() while true do end end) end"),
        format!("{ORIGIN}: Lua action script stopped: it ran longer than its time limit of 500ms")
    );
}

#[test]
fn backtracking_pattern_is_stopped() {
    let e = error(
        r#"local s = string.rep("a", 5000)
if s:find(string.rep("a*", 12) .. "b") then obj.spec.replicas = 0 end
return obj"#,
    );
    assert_eq!(
        e,
        format!("{ORIGIN}: Lua action script stopped: it ran longer than its time limit of 500ms")
    );
}

#[test]
fn memory_bomb_is_stopped() {
    let actions = with_action(r#"local s = "x" for i = 1, 40 do s = s .. s end return obj"#)
        .with_limits(LuaLimits::default().memory_bytes(32 * 1024 * 1024));
    let e = actions
        .run(&deployment(), "go", &BTreeMap::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("Lua action script stopped: it exceeded its memory limit of 32 MiB")
            || e.ends_with("it ran longer than its time limit of 1s"),
        "{e}"
    );
}

#[test]
fn no_escape_from_the_sandbox() {
    for (script, needle) in [
        (
            r#"os.execute("touch /tmp/plumb-action-escape") return obj"#,
            "execute",
        ),
        (
            r#"local io = require("io") return obj"#,
            "module 'io' not found",
        ),
        (r#"loadstring("return 1")() return obj"#, "loadstring"),
        (r#"debug.sethook() return obj"#, "debug"),
    ] {
        let e = error(script);
        assert!(e.contains(needle), "{script}: {e}");
    }
    assert!(!std::path::Path::new("/tmp/plumb-action-escape").exists());
}

#[test]
fn a_patch_of_another_object_is_refused() {
    for (script, what) in [
        (
            r#"obj.metadata.namespace = "kube-system" return obj"#,
            "apps/Deployment kube-system/payments-api",
        ),
        (
            r#"obj.metadata.name = "billing-api" return obj"#,
            "apps/Deployment payments/billing-api",
        ),
        (
            r#"obj.kind = "DaemonSet" return obj"#,
            "apps/DaemonSet payments/payments-api",
        ),
        (
            r#"local other = {apiVersion = "v1", kind = "Secret", metadata = {name = "db", namespace = "payments"}}
return {{operation = "patch", resource = other}}"#,
            "Secret payments/db",
        ),
    ] {
        assert_eq!(
            error(script),
            format!(
                "{ORIGIN}: the action returned a patch of {what}, not of the apps/Deployment payments/payments-api it ran on; an action may only patch its own object"
            ),
            "{script}"
        );
    }
}

#[test]
fn unusable_results_are_errors() {
    for (script, message) in [
        (
            "return 42",
            "expect table output from Lua script, not number",
        ),
        ("return nil", "expect table output from Lua script, not nil"),
        (
            "return {1, 2, x = 3}",
            "cannot encode mixed or invalid key types",
        ),
        (
            r#"return {{operation = "delete", resource = obj}}"#,
            "entry 0: unsupported operation 'delete' (patch or create)",
        ),
        ("return {print}", "cannot encode function to JSON"),
    ] {
        assert_eq!(error(script), format!("{ORIGIN}: {message}"), "{script}");
    }
}

#[test]
fn huge_or_deep_results_are_bounded() {
    // Cheap to build (shared tables), 2^40 values to walk.
    let e = error("local t = {} for i = 1, 40 do t = {a = t, b = t} end return t");
    assert!(
        e.ends_with("the script's result is nested deeper than 100 levels")
            || e.ends_with("holds more than 1000000 values"),
        "{e}"
    );
    let e = error("local t = {} for i = 1, 30 do t = {a = t, b = t} end return t");
    assert_eq!(
        e,
        format!("{ORIGIN}: the script's result holds more than 1000000 values")
    );
    let e = error("local t = {} t.self = t return t");
    assert_eq!(
        e,
        format!("{ORIGIN}: the script's result is nested deeper than 100 levels")
    );
}

#[test]
fn bad_settings_yaml_names_the_key() {
    let settings = Settings::from_data(BTreeMap::from([(
        "resource.customizations.actions.apps_Deployment".to_string(),
        "discovery.lua: [unclosed".to_string(),
    )]));
    let e = Actions::from_settings(&settings).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "settings key argocd-cm resource.customizations.actions.apps_Deployment: not Argo's actions YAML"
        ),
        "{e}"
    );
}
