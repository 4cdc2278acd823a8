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

/// A customizations directory (`--customizations`, Argo's `resource_customizations` layout) is
/// read beneath its root: a script or a directory whose link leads outside is refused (naming
/// the path), so is a script over the size limit; links that stay inside (a ConfigMap volume's
/// `..data`) are followed and the volume's dot-directories are not indexed.
mod directories {
    use std::os::unix::fs::symlink;
    use std::path::Path;

    use plumb_health::actions::Actions;
    use plumb_health::customizations_dir::MAX_SCRIPT_BYTES;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn load(root: &Path) -> Result<Actions, String> {
        Actions::default()
            .with_directories(&[root.to_path_buf()])
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_action_script_linked_outside_the_directory_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.lua", "return obj\n");
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "apps/Deployment/actions/discovery.lua",
            "return {go = {}}\n",
        );
        std::fs::create_dir_all(dir.path().join("apps/Deployment/actions/go")).unwrap();
        symlink(
            outside.path().join("secret.lua"),
            dir.path().join("apps/Deployment/actions/go/action.lua"),
        )
        .unwrap();
        let err = load(dir.path()).unwrap_err();
        let named = dir.path().join("apps/Deployment/actions/go/action.lua");
        assert!(err.contains(&named.display().to_string()), "{err}");
        // The same through a relative chain that climbs out.
        std::fs::remove_file(&named).unwrap();
        symlink("../../../../../../../../../etc/passwd", &named).unwrap();
        let err = load(dir.path()).unwrap_err();
        assert!(err.contains(&named.display().to_string()), "{err}");
    }

    #[test]
    fn a_kind_directory_linked_outside_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        write(
            outside.path(),
            "Deployment/actions/discovery.lua",
            "return {go = {}}\n",
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("apps")).unwrap();
        symlink(
            outside.path().join("Deployment"),
            dir.path().join("apps/Deployment"),
        )
        .unwrap();
        let err = load(dir.path()).unwrap_err();
        assert!(
            err.contains(&dir.path().join("apps/Deployment").display().to_string()),
            "{err}"
        );
        // And a whole group linked out.
        let dir = tempfile::tempdir().unwrap();
        symlink(outside.path(), dir.path().join("apps")).unwrap();
        let err = load(dir.path()).unwrap_err();
        assert!(
            err.contains(&dir.path().join("apps").display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn an_oversized_script_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = format!(
            "-- {}\nreturn {{}}\n",
            "x".repeat(MAX_SCRIPT_BYTES as usize)
        );
        write(dir.path(), "apps/Deployment/actions/discovery.lua", &big);
        let err = load(dir.path()).unwrap_err();
        assert!(
            err.ends_with(&format!(
                "{}: script larger than {MAX_SCRIPT_BYTES} bytes",
                dir.path()
                    .join("apps/Deployment/actions/discovery.lua")
                    .display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_configmap_volume_layout_is_read_through_its_links() {
        // What the kubelet makes of a ConfigMap with `items[].path`: the files live in a
        // timestamped directory, `..data` points at it, and the top-level names are links.
        let dir = tempfile::tempdir().unwrap();
        let real = "..2026_12_01_10_00_00.123456789";
        write(
            dir.path(),
            &format!("{real}/apps/Deployment/actions/discovery.lua"),
            "return {go = {}}\n",
        );
        write(
            dir.path(),
            &format!("{real}/apps/Deployment/actions/go/action.lua"),
            "obj.spec.replicas = 0\nreturn obj\n",
        );
        symlink(real, dir.path().join("..data")).unwrap();
        symlink("..data/apps", dir.path().join("apps")).unwrap();
        let actions = load(dir.path()).unwrap();
        let deployment = super::deployment();
        let found = actions.discover(&deployment).unwrap();
        assert_eq!(
            found.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["go"]
        );
        let out = actions
            .run(&deployment, "go", &std::collections::BTreeMap::new())
            .unwrap();
        assert_eq!(out[0].resource["spec"]["replicas"], serde_json::json!(0));
    }

    #[test]
    fn health_scripts_of_the_directory_are_read_the_same_way() {
        let outside = tempfile::tempdir().unwrap();
        write(
            outside.path(),
            "health.lua",
            "return {status = \"Healthy\"}\n",
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("apps/Deployment")).unwrap();
        symlink(
            outside.path().join("health.lua"),
            dir.path().join("apps/Deployment/health.lua"),
        )
        .unwrap();
        let err = plumb_health::Assessor::new(
            plumb_health::Config::default().customizations_dir(dir.path()),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            err.contains(
                &dir.path()
                    .join("apps/Deployment/health.lua")
                    .display()
                    .to_string()
            ),
            "{err}"
        );
    }
}
