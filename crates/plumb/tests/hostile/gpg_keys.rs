//! GnuPG public keys are input from whoever may edit `argocd-gpg-keys-cm` or call `plumb gpg
//! add`: a malformed armored key, a huge key block, an expired or revoked key, and an entry
//! whose key ID has odd characters are each refused with a clear error naming the key or the
//! file, bounded, and a broken entry makes every listing fail loudly rather than skip it.

use std::process::{Command, Output};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use plumb_testenv::gpg::GpgKey;
use serde_json::json;

use crate::running::env;

fn gpg(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("gpg")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns, "--core"])
        .output()
        .expect("run plumb gpg")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn hostile_key_files_are_refused_naming_the_problem() {
    let ns = env().namespace("hostile-gpg-add");
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_string_lossy().into_owned()
    };
    let malformed = write(
        "malformed.asc",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!! not base64 !!!!\n-----END PGP PUBLIC KEY BLOCK-----\n",
    );
    let huge = write(
        "huge.asc",
        &format!(
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n{}",
            "QUFBQUFB\n".repeat(60_000)
        ),
    );
    let private = write("secret.txt", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxx\n");
    for (file, expected) in [
        (&malformed, "error validating PGP keys from input"),
        (&huge, "more than the limit"),
        (&private, "not an ASCII-armored public key"),
    ] {
        let out = gpg(ns.name(), &["add", "--from", file]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(expected),
            "{file}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).len() < 4000, "bounded");
    }
    // Nothing was stored.
    let out = gpg(ns.name(), &["list"]);
    assert_eq!(
        text(&out.stdout),
        "KEYID  TYPE  IDENTITY\n",
        "{}",
        text(&out.stderr)
    );

    // Expired and revoked keys are keys: stored, and shown as such (verification refuses them).
    let expired = GpgKey::expired("Old Bot <old@plumb.invalid>");
    let revoked = GpgKey::generate("Gone Bot <gone@plumb.invalid>");
    revoked.revoke();
    for (key, trust) in [(&expired, "expired"), (&revoked, "revoked")] {
        let file = write(&format!("{trust}.asc"), &key.public_key());
        let out = gpg(ns.name(), &["add", "--from", &file]);
        assert_eq!(
            text(&out.stdout),
            "Created 1 key(s) from input file.\n",
            "{}",
            text(&out.stderr)
        );
        let out = gpg(ns.name(), &["get", key.key_id(), "-o", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["trust"], trust);
        assert_eq!(v["keyID"], key.key_id());
    }
}

#[tokio::test]
async fn a_broken_configmap_entry_is_an_error_naming_it() {
    let ns = env().namespace("hostile-gpg-cm");
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let cms: Api<ConfigMap> = Api::namespaced(env().client().await, ns.name());
    let mut cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "argocd-gpg-keys-cm"},
        "data": {key.key_id(): key.public_key()}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let out = gpg(ns.name(), &["list"]);
    assert!(
        text(&out.stdout).contains(key.key_id()),
        "{}",
        text(&out.stderr)
    );

    for (name, data, expected) in [
        ("ODD.KEY_ID-1", key.public_key(), "ODD.KEY_ID-1"),
        ("1111222233334444", key.public_key(), "had different key ID"),
        (
            "AAAABBBBCCCCDDDD",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\ngarbage\n".to_string(),
            "AAAABBBBCCCCDDDD",
        ),
    ] {
        cm = cms.get("argocd-gpg-keys-cm").await.unwrap();
        let mut data_map = std::collections::BTreeMap::new();
        data_map.insert(key.key_id().to_string(), key.public_key());
        data_map.insert(name.to_string(), data);
        cm.data = Some(data_map);
        cms.replace("argocd-gpg-keys-cm", &PostParams::default(), &cm)
            .await
            .unwrap();
        let out = gpg(ns.name(), &["list"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = text(&out.stderr);
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.len() < 4000, "bounded: {err}");
    }
}
