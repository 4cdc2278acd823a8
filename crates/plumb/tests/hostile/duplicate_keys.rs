//! Attacks: duplicate mapping keys. They are accepted as Argo CD and kubectl accept them (the
//! last value wins) and reported, but a file made of duplicates must not flood the log.

use std::process::Command;

#[test]
fn a_flood_of_duplicate_keys_is_read_and_reported_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flood\n  namespace: ns\ndata:\n",
    );
    for i in 0..20_000 {
        text.push_str(&format!("  key: \"{i}\"\n"));
    }
    let desired = dir.path().join("flood.yaml");
    std::fs::write(&desired, &text).unwrap();
    let live = dir.path().join("live.yaml");
    std::fs::write(
        &live,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flood\n  namespace: ns\ndata:\n  key: \"19999\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["diff", "--desired"])
        .arg(&desired)
        .arg("--live")
        .arg(&live)
        .env_remove("PLUMB_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The last value wins: no difference.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let listed = stderr.matches("duplicate key \"key\"").count();
    assert_eq!(listed, 20, "{stderr}");
    assert!(
        stderr.contains("19979 more duplicate keys not listed"),
        "{stderr}"
    );
}
