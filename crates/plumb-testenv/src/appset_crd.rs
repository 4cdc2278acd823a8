//! The ApplicationSet CRD for the tests of its API, CLI and UI while deploy/crds has none: a
//! minimal one keeping every field (with the status subresource the real one has). Once the
//! controller's CRD is in deploy/crds, [`TestEnv::install_plumb_crds`] applies it and this finds
//! it there.

use std::time::{Duration, Instant};

use crate::TestEnv;

const CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "applicationsets.argoproj.io"},
  "spec": {"group": "argoproj.io", "scope": "Namespaced",
    "names": {"kind": "ApplicationSet", "listKind": "ApplicationSetList", "plural": "applicationsets",
              "singular": "applicationset", "shortNames": ["appset", "appsets"]},
    "versions": [{"name": "v1alpha1", "served": true, "storage": true, "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

impl TestEnv {
    /// Applies Plumb's CRDs, then creates the minimal ApplicationSet CRD if there is none, and
    /// waits until it is Established.
    ///
    /// # Panics
    /// When it cannot be created or is not Established within 60 s.
    pub fn ensure_applicationset_crd(&self) {
        self.install_plumb_crds();
        let established = || {
            self.kubectl()
                .args(["get", "crd", "applicationsets.argoproj.io", "-o"])
                .arg("jsonpath={.status.conditions[?(@.type==\"Established\")].status}")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "True")
        };
        if established() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("plumb-appset-crd-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("crd.json");
        if let Err(e) = std::fs::write(&path, CRD) {
            panic!("writing {}: {e}", path.display());
        }
        // Another test process may create it at the same moment: AlreadyExists is fine.
        let _ = self.kubectl().args(["create", "-f"]).arg(&path).output();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !established() {
            assert!(
                Instant::now() < deadline,
                "the ApplicationSet CRD is not Established"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
