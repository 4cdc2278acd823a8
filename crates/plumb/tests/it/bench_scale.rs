//! `bench/scale --check`: the fleet benchmark (docs/performance.md, "Fleet benchmark") runs
//! through every phase on a 3-app fleet, so that the script does not rot between the runs that
//! produce the published figures. It drives this build's `plumb controller` in a control namespace
//! of its own on the shared control plane; its Applications are `bench-check-<pid>-NNNNN`. It
//! runs two controller replicas (`--replicas 2`, each given half the Applications by name) and a
//! few untracked objects, so that both options keep working between the published runs.

use std::process::Command;

use serde_json::Value;

use crate::app::env;

#[test]
fn bench_scale_check_runs_a_tiny_fleet_through_every_phase() {
    let env = env();
    let out = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/scale");
    let run = Command::new(&script)
        .arg("--check")
        .arg("--kubeconfig")
        .arg(env.kubeconfig())
        .arg("--plumb")
        .arg(env!("CARGO_BIN_EXE_plumb"))
        .arg("--out")
        .arg(out.path())
        .args(["--replicas", "2", "--untracked", "7"])
        // A short Lease: the restarted replicas wait for their predecessors' to lapse.
        .arg("--controller-arg=--lease-duration=4")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "bench/scale --check failed:\n{stderr}"
    );
    let text = std::fs::read_to_string(out.path().join("result.json")).unwrap();
    let r: Value = serde_json::from_str(&text).unwrap();
    let p = &r["phases"];
    assert_eq!(r["parameters"]["replicas"], 2, "{text}");
    assert_eq!(r["parameters"]["untracked_created"], 7, "{text}");
    // The floor applied the same 9 objects and saw the 3 Deployments available.
    assert_eq!(p["floor"]["objects"], 9, "{text}");
    assert_eq!(p["floor"]["deployments_available"], 3, "{text}");
    // The controller synced every app, with every object in its status, and the figures exist.
    assert_eq!(p["cold"]["apps_healthy"], 3, "{text}");
    assert_eq!(p["cold"]["objects_in_status"], 9, "{text}");
    assert!(p["cold"]["seconds_to_all_synced"].is_number(), "{text}");
    assert!(
        p["cold"]["k8s_requests_total"].as_u64().unwrap_or(0) > 0,
        "{text}"
    );
    for replica in 0..2 {
        assert!(
            p["cold"]["controller"][replica]["peak_rss_mib"]
                .as_f64()
                .unwrap_or(0.0)
                > 0.0,
            "replica {replica}: {text}"
        );
    }
    // A restart confirms every app again without writing any managed object.
    assert_eq!(p["restart"]["apps_confirmed"], 3, "{text}");
    assert_eq!(
        p["restart"]["controller_object_writes"],
        serde_json::json!({}),
        "{text}"
    );
    // The commit reached every app; only the touched app's ConfigMap changed.
    assert!(
        p["commit"]["seconds_to_all_synced_at_revision"].is_number(),
        "{text}"
    );
    assert_eq!(
        p["commit"]["objects_changed_outside_touched_apps"], 0,
        "{text}"
    );
    assert!(out.path().join("result.md").is_file());
}
