//! Attacks: mass deletion. A push that drops most of an Application (a bad merge, a renamed
//! path, a malicious commit) must not delete most of it without someone confirming: automated
//! prunes stop at the brake (the controller's own suite covers that end to end), and a manual
//! `plumb app sync --prune` over the brake asks, refusing outright without a terminal unless
//! `--assumeYes`.

use serde_json::json;

use crate::running::{Running, env, kubectl, text, unique};

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

fn live_count(ns: &str) -> usize {
    let out = kubectl(&["-n", ns, "get", "configmaps", "-o", "name"]);
    text(&out.stdout)
        .lines()
        .filter(|l| !l.ends_with("/kube-root-ca.crt"))
        .count()
}

#[test]
fn a_manual_mass_prune_needs_confirmation() {
    let ctl = Running::start("hostile-mass", &[]);
    let dest = env().namespace("hostile-mass-dest");
    let repo = plumb_testenv::git::GitRepo::new();
    let files: Vec<(String, String)> = (0..13)
        .map(|i| {
            (
                format!("app/cm-{i:02}.yaml"),
                config_map(&format!("cm-{i:02}")),
            )
        })
        .collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
    repo.commit(&refs, "thirteen objects");
    let name = unique("mass");
    ctl.create_app(
        &name,
        json!({"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    assert_eq!(
        ctl.sync(&name, json!({}))["status"]["operationState"]["phase"],
        "Succeeded"
    );
    assert_eq!(live_count(dest.name()), 13);

    // The push drops twelve of them.
    let gone: Vec<String> = (1..13).map(|i| format!("app/cm-{i:02}.yaml")).collect();
    let gone: Vec<&str> = gone.iter().map(String::as_str).collect();
    repo.remove(&gone, "oops");
    ctl.patch_app(
        &name,
        &json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
    );
    ctl.wait_app(&name, "twelve to prune", |a| {
        a["status"]["resources"]
            .as_array()
            .is_some_and(|rs| rs.iter().filter(|r| r["requiresPruning"] == true).count() == 12)
    });

    // No terminal, no --assumeYes: refused, nothing requested.
    let out = ctl.plumb_app(&["sync", &name, "--prune"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "plumb: refusing to sync application '{name}' with --prune: pruning 12 of 13 objects (92.3%) exceeds both limits: \
             10 objects (default) and 50% (default) (the mass-deletion brake). Check what would be deleted with \
             `plumb app diff {name}`, then confirm on a terminal or pass --assumeYes\n"
        )
    );
    // A pipe is no terminal either, whatever it says.
    let out = ctl.plumb_app(&["sync", &name, "--prune"], Some("y\n"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(ctl.app(&name).unwrap()["operation"].is_null());
    assert_eq!(live_count(dest.name()), 13);

    // On a terminal it asks; no cancels with nothing requested.
    let on_tty = on_a_terminal(&ctl, &["sync", &name, "--prune"], "n\n");
    let shown = text(&on_tty.stdout);
    assert_eq!(on_tty.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains(&format!(
            "Application '{name}': pruning 12 of 13 objects (92.3%) exceeds both limits: 10 objects (default) and 50% (default) \
             (the mass-deletion brake). Check `plumb app diff {name}`. Do you want to delete them? (y/n): "
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "Sync of application '{name}' cancelled: nothing was requested."
        )),
        "{shown}"
    );
    assert!(ctl.app(&name).unwrap()["operation"].is_null());
    assert_eq!(live_count(dest.name()), 13);

    // Without --prune nothing is deleted, so nothing is asked.
    let out = ctl.plumb_app(&["sync", &name, "--timeout", "120"], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "prunes skipped: {}",
        text(&out.stderr)
    );
    assert_eq!(live_count(dest.name()), 13);

    // --assumeYes: the sync runs and prunes.
    let out = ctl.plumb_app(
        &["sync", &name, "--prune", "--assumeYes", "--timeout", "120"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("pruning 12 of 13 objects (92.3%) exceeds both limits"),
        "{}",
        text(&out.stderr)
    );
    let start = std::time::Instant::now();
    while live_count(dest.name()) != 1 {
        assert!(start.elapsed() < crate::running::DEADLINE, "not pruned");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

/// `plumb app ARGS` on a pseudo-terminal (util-linux `script`), typing `input`.
fn on_a_terminal(ctl: &Running, args: &[&str], input: &str) -> std::process::Output {
    let command = format!(
        "{} app {} --kubeconfig {} -N {}",
        env!("CARGO_BIN_EXE_plumb"),
        args.join(" "),
        env().kubeconfig().display(),
        ctl.ns.name()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
