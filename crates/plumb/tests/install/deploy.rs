//! `deploy/` installed as a user installs it, with one change: a kustomize overlay of the test's
//! own puts it into a fresh namespace (kustomize's NamespaceTransformer) and gives the cluster-scoped RBAC objects a
//! unique suffix, so runs sharing one control plane never collide. The workloads (Deployments)
//! are not applied: the test runs their containers under runc instead, from the same rendered
//! objects. Everything cluster-scoped the install created is deleted when [`Install`] is dropped.

use std::path::Path;
use std::process::Stdio;

use plumb_testenv::TestEnv;
use plumb_testenv::process::output_with_stdin;
use serde_json::{Value, json};

/// Kinds the test runs itself instead of applying: their Pods would only be fake ones (kwok).
const WORKLOADS: &[&str] = &["Deployment", "StatefulSet"];

/// `deploy/` rendered into one namespace and applied.
pub struct Install {
    /// Every object `kustomize build` rendered (the workloads included).
    pub objects: Vec<Value>,
    /// Cluster-scoped objects applied (kind, name), deleted on drop.
    cluster_scoped: Vec<(String, String)>,
    env: &'static TestEnv,
}

impl Install {
    /// Renders `deploy/` into `namespace`, applies Plumb's CRDs and everything else but the
    /// workloads with the admin client, and checks that the RBAC subjects name `namespace`.
    pub fn apply(env: &'static TestEnv, namespace: &str) -> Self {
        env.install_plumb_crds();
        let objects = render(namespace);
        let mut install = Self {
            objects,
            cluster_scoped: Vec::new(),
            env,
        };
        let mut apply = Vec::new();
        for o in &install.objects {
            let kind = o["kind"].as_str().unwrap_or_default();
            // The CRDs went in through install_plumb_crds (the same files, serialised against
            // the other tests installing them); the namespace exists already.
            if WORKLOADS.contains(&kind)
                || kind == "CustomResourceDefinition"
                || kind == "Namespace"
            {
                continue;
            }
            if o["metadata"]["namespace"].is_null() {
                let name = o["metadata"]["name"].as_str().unwrap_or_default();
                install
                    .cluster_scoped
                    .push((kind.to_owned(), name.to_owned()));
            }
            check_subjects(o, namespace);
            apply.push(o.clone());
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": apply});
        let out = output_with_stdin(env.kubectl().args(["apply", "-f", "-"]), &list.to_string());
        assert!(
            out.status.success(),
            "kubectl apply of deploy/ rendered into {namespace}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        install
    }

    /// The rendered workload named `name` (a Deployment of deploy/).
    pub fn workload(&self, name: &str) -> &Value {
        self.objects
            .iter()
            .find(|o| {
                WORKLOADS.contains(&o["kind"].as_str().unwrap_or_default())
                    && o["metadata"]["name"] == name
            })
            .unwrap_or_else(|| panic!("deploy/ renders no Deployment or StatefulSet {name}"))
    }

    /// A token of ServiceAccount `account` in `namespace` from the TokenRequest API (what the
    /// kubelet mounts into a Pod), valid for an hour.
    pub fn token(&self, namespace: &str, account: &str) -> String {
        let out = self
            .env
            .kubectl()
            .args([
                "-n",
                namespace,
                "create",
                "token",
                account,
                "--duration=3600s",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running kubectl create token: {e}"));
        assert!(
            out.status.success(),
            "TokenRequest for ServiceAccount {namespace}/{account}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Install {
    fn drop(&mut self) {
        for (kind, name) in &self.cluster_scoped {
            let _ = self
                .env
                .kubectl()
                .args(["delete", kind, name, "--ignore-not-found", "--wait=false"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// `kustomize build` of an overlay of `deploy/` that moves it into `namespace` and suffixes the
/// names of ClusterRoles and ClusterRoleBindings (kustomize then fixes the `roleRef`s).
fn render(namespace: &str) -> Vec<Value> {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let base = tmp.path().join("base");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy"),
        &base,
    );
    let overlay = tmp.path().join("overlay");
    std::fs::create_dir_all(&overlay).expect("overlay directory");
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\
         resources:\n  - ../base\ntransformers:\n  - namespace.yaml\n  - suffix.yaml\n",
    )
    .expect("writing the overlay");
    // The `namespace:` field moves only the subjects in namespace `default` (kustomize's
    // `setRoleBindingSubjects: defaultOnly`); the ClusterRoleBindings name `argocd`, so every
    // ServiceAccount subject is moved explicitly, as Argo CD's docs tell users to.
    std::fs::write(
        overlay.join("namespace.yaml"),
        format!(
            "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: install\n\
             \x20 namespace: {namespace}\nsetRoleBindingSubjects: allServiceAccounts\n\
             unsetOnly: false\n"
        ),
    )
    .expect("writing the overlay");
    std::fs::write(
        overlay.join("suffix.yaml"),
        format!(
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: unique\n\
             suffix: -{namespace}\nfieldSpecs:\n  - kind: ClusterRole\n    path: metadata/name\n\
             \x20 - kind: ClusterRoleBinding\n    path: metadata/name\n"
        ),
    )
    .expect("writing the overlay");
    let out = std::process::Command::new(plumb_testenv::tools::kustomize())
        .arg("build")
        .arg(&overlay)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running kustomize: {e}"));
    assert!(
        out.status.success(),
        "kustomize build of deploy/ in an overlay: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    plumb_yaml::read_documents(&text, "kustomize build deploy/")
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|d| d.value)
        .collect()
}

/// Panics when a (Cluster)RoleBinding binds a ServiceAccount of another namespace: the overlay
/// must have moved every subject along, or the test would run with RBAC that names nothing.
fn check_subjects(o: &Value, namespace: &str) {
    let kind = o["kind"].as_str().unwrap_or_default();
    if !kind.ends_with("RoleBinding") {
        return;
    }
    for s in o["subjects"].as_array().into_iter().flatten() {
        if s["kind"] == "ServiceAccount" {
            assert_eq!(
                s["namespace"].as_str(),
                Some(namespace),
                "{kind} {} binds a ServiceAccount outside the install's namespace: {s}",
                o["metadata"]["name"]
            );
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("creating {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("reading {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            // The chart's files/crds points at deploy/crds: relative, so it holds in the copy too.
            let link = std::fs::read_link(entry.path()).expect("read_link");
            std::os::unix::fs::symlink(&link, &target)
                .unwrap_or_else(|e| panic!("linking {}: {e}", target.display()));
        } else if kind.is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("copying {}: {e}", entry.path().display()));
        }
    }
}
