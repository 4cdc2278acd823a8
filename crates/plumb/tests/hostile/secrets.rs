//! Attacks: Secret values in output. The real `plumb controller` runs at trace level
//! (`RUST_LOG=trace`) over Secrets that drift, a jq ignore rule that fails on a Secret, a render
//! that fails inside a Secret's file, and a sync that fails on a Secret; then every output is
//! searched for the values, raw and base64: the controller's log, the Events, the
//! Applications' status (conditions, operation state, resources), and what `plumb app get`,
//! `plumb app diff` and `plumb app manifests` print.

use base64::Engine;
use serde_json::json;

use crate::running::{Running, kubectl, kubectl_apply, text, unique};

/// A value no other text contains: a fixed tag and the process id and time, in letters only
/// (so its base64 form is just as distinctive).
pub(crate) fn distinctive(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let digits = format!("{}{nanos}", std::process::id());
    let letters: String = digits
        .chars()
        .map(|c| char::from(b'g' + c.to_digit(10).map_or(0, |d| d as u8)))
        .collect();
    format!("{tag}Zq{letters}")
}

pub(crate) fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Every form of `value` that would betray it: raw, base64, and base64 of it inside a longer
/// text at each alignment (the middle of the encoding is the same whatever precedes it).
pub(crate) fn forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_string(), b64(value)];
    for pad in ["", "x", "xx"] {
        let enc = b64(&format!("{pad}{value}"));
        // Drop the characters that mix the padding in, and the last group (which mixes in
        // whatever follows the value: without it, a value followed by more text was missed).
        let skip = if pad.is_empty() { 0 } else { 4 };
        let core: String = enc
            .chars()
            .skip(skip)
            .take(enc.len().saturating_sub(skip + 4))
            .collect();
        if core.len() >= 12 {
            forms.push(core);
        }
    }
    forms
}

fn secret_yaml(name: &str, key: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\ntype: Opaque\ndata:\n  {key}: {}\n",
        b64(value)
    )
}

#[test]
fn no_secret_value_reaches_any_output_at_trace_level() {
    let ctl = Running::start("hostile-secrets", &[("RUST_LOG", "trace")]);
    let dest = crate::running::env().namespace("hostile-secrets-dest");
    let in_git = distinctive("gitvalue");
    let drifted = distinctive("driftvalue");
    let in_broken = distinctive("brokenvalue");
    let rejected = distinctive("rejectedvalue");
    let values = [&in_git, &drifted, &in_broken, &rejected];

    // 1. A Secret from Git, synced, then changed in the cluster (drift), compared with an
    //    ignore rule whose jq fails on the Secret's data.
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            ("drift/secret.yaml", secret_yaml("db", "password", &in_git)),
            (
                "broken/secret.yaml",
                // The render fails inside the Secret's file, after the value.
                format!(
                    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\nstringData:\n  password: {in_broken}\n  other: [unclosed\n"
                ),
            ),
            (
                "rejected/secret.yaml",
                // Not base64: the API server refuses it (dry run and apply).
                format!(
                    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: rejected\ndata:\n  password: \"{rejected}!\"\n"
                ),
            ),
        ],
        "secrets",
    );
    let app = |name: &str, path: &str, extra: serde_json::Value| {
        let mut spec = json!({"project": "default",
            "source": {"repoURL": repo.url(), "path": path},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        ctl.create_app(name, spec);
    };
    let drift = unique("drift");
    app(&drift, "drift", json!({}));
    let broken = unique("broken");
    app(&broken, "broken", json!({}));
    let rejected_app = unique("rejected");
    app(&rejected_app, "rejected", json!({}));

    let synced = ctl.sync(&drift, json!({}));
    assert_eq!(
        synced["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        synced["status"]["operationState"]
    );
    let patch = json!({"data": {"password": b64(&drifted)}}).to_string();
    let out = kubectl(&[
        "-n",
        dest.name(),
        "patch",
        "secret",
        "db",
        "--type=merge",
        "-p",
        &patch,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    ctl.wait_app(&drift, "drift seen", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    });
    // Ignore rules whose jq fails on the Secret's data (with the value in jq's error text).
    ctl.patch_app(
        &drift,
        &json!({"spec": {"ignoreDifferences": [{"kind": "Secret", "jqPathExpressions": [".data.password | tonumber", ".data | error"]}]},
                "metadata": {"annotations": {"argocd.argoproj.io/refresh": "hard"}}}),
    );
    ctl.wait_app(&drift, "compared with the rules", |a| {
        a["metadata"]["annotations"]["argocd.argoproj.io/refresh"].is_null()
    });
    let _ = ctl.sync(&drift, json!({}));
    // 2. The failing render.
    ctl.wait_app(&broken, "ComparisonError", |a| {
        crate::running::condition(a, "ComparisonError").is_some()
    });
    let _ = ctl.sync(&broken, json!({}));
    // 3. The failing sync.
    let failed = ctl.sync(&rejected_app, json!({}));
    assert_ne!(failed["status"]["operationState"]["phase"], "Succeeded");
    // And a Secret applied by hand with a last-applied annotation holding the drifted value.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": dest.name()},
        "data": {"password": b64(&drifted)}}));
    ctl.patch_app(
        &drift,
        &json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
    );
    ctl.wait_app(&drift, "compared again", |a| {
        a["metadata"]["annotations"]["argocd.argoproj.io/refresh"].is_null()
    });

    // Every output.
    let mut outputs: Vec<(String, String)> = vec![
        ("events".into(), ctl.events()),
        (
            "events in the destination".into(),
            text(&kubectl(&["-n", dest.name(), "get", "events", "-o", "json"]).stdout),
        ),
    ];
    for name in [&drift, &broken, &rejected_app] {
        let a = ctl.app(name).unwrap();
        outputs.push((format!("{name} status"), a["status"].to_string()));
        for args in [
            vec!["get", name.as_str()],
            vec!["get", name.as_str(), "-o", "json"],
            vec!["get", name.as_str(), "--show-operation"],
            vec!["diff", name.as_str()],
            vec!["manifests", name.as_str()],
            vec!["manifests", name.as_str(), "--source", "live"],
        ] {
            let out = ctl.plumb_app(&args, None);
            outputs.push((
                format!("plumb app {}", args.join(" ")),
                format!("{}{}", text(&out.stdout), text(&out.stderr)),
            ));
        }
    }
    // The log last, so it holds everything the commands above made the controller do.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let log = ctl.log();
    assert!(
        log.contains("TRACE") && log.lines().count() > 100,
        "the controller did not log at trace level:\n{log}"
    );
    outputs.push(("controller log".into(), log));

    let mut leaks = Vec::new();
    for (what, output) in &outputs {
        for v in values {
            for form in forms(v) {
                if let Some(at) = output.find(&form) {
                    let start = output[..at]
                        .char_indices()
                        .rev()
                        .nth(200)
                        .map_or(0, |(i, _)| i);
                    let end = (at + form.len() + 200).min(output.len());
                    let end = (end..=output.len())
                        .find(|&i| output.is_char_boundary(i))
                        .unwrap_or(output.len());
                    leaks.push(format!("{what} shows {form}:\n…{}…", &output[start..end]));
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "Secret values leaked:\n\n{}",
        leaks.join("\n\n")
    );
}
