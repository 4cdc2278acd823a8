//! The Helm chart (`deploy/chart/plumb`, issue #28) with the real helm, kustomize and API
//! server: `helm lint --strict` and `helm template` for every values file of its `ci/` folder,
//! the rendered objects' security settings, its schema refusing wrong keys by name, the same
//! objects and Pod, RBAC and network settings as `kustomize build deploy` (what install.yaml is
//! generated from), and the API server accepting every rendered object (server-side dry run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plumb_testenv::tools;
use serde_json::Value;

use crate::app::env;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chart() -> PathBuf {
    repo().join("deploy/chart/plumb")
}

/// The chart's `ci/*.yaml`, sorted.
fn ci_values() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(chart().join("ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "ci/ holds {} values files", files.len());
    files
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `helm template` of the chart as release `plumb` in namespace `argocd` with `args` (values
/// files, --set), as parsed objects.
fn render(args: &[&str]) -> Vec<Value> {
    let out = run(Command::new(tools::helm())
        .args(["template", "plumb"])
        .arg(chart())
        .args(["--namespace", "argocd"])
        .args(args));
    assert!(
        out.status.success(),
        "helm template {args:?}: {}",
        stderr(&out)
    );
    parse(
        &String::from_utf8_lossy(&out.stdout),
        &format!("helm template {args:?}"),
    )
}

fn parse(text: &str, source: &str) -> Vec<Value> {
    plumb_yaml::read_documents(text, source)
        .unwrap_or_else(|e| panic!("{source} does not parse: {e}"))
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
}

fn key(obj: &Value) -> (String, String) {
    (
        obj["kind"].as_str().unwrap_or_default().to_owned(),
        obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn by_key(objs: &[Value]) -> BTreeMap<(String, String), &Value> {
    let mut map = BTreeMap::new();
    for obj in objs {
        assert!(
            map.insert(key(obj), obj).is_none(),
            "{:?} rendered twice",
            key(obj)
        );
    }
    map
}

fn pod_spec(obj: &Value) -> Option<&Value> {
    matches!(obj["kind"].as_str(), Some("Deployment" | "StatefulSet"))
        .then(|| &obj["spec"]["template"]["spec"])
}

/// Every object has a kind, a name and (unless cluster-scoped) the namespace; every Pod runs as
/// the non-root image user under RuntimeDefault seccomp, every container with a read-only root
/// file system, no privilege escalation, no capabilities, a memory limit and both probes.
fn check_objects(objs: &[Value], namespace: &str, source: &str) {
    const CLUSTER_SCOPED: &[&str] = &[
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Namespace",
    ];
    assert!(!objs.is_empty(), "{source} rendered nothing");
    by_key(objs);
    for obj in objs {
        let (kind, name) = key(obj);
        assert!(
            !kind.is_empty() && !name.is_empty() && obj["apiVersion"].is_string(),
            "{source}: an object without apiVersion, kind or name: {obj}"
        );
        let ns = obj["metadata"]["namespace"].as_str();
        if CLUSTER_SCOPED.contains(&kind.as_str()) {
            assert_eq!(ns, None, "{source}: {kind}/{name} is cluster-scoped");
        } else {
            assert_eq!(ns, Some(namespace), "{source}: {kind}/{name}'s namespace");
        }
        if let Some(spec) = pod_spec(obj) {
            check_pod(spec, &format!("{source}: {kind}/{name}"));
        }
    }
}

fn check_pod(spec: &Value, what: &str) {
    let pod = &spec["securityContext"];
    assert_eq!(pod["runAsNonRoot"], true, "{what}: pod runAsNonRoot");
    assert_eq!(pod["runAsUser"], 999, "{what}: pod runAsUser");
    assert_eq!(
        pod["seccompProfile"]["type"], "RuntimeDefault",
        "{what}: pod seccomp"
    );
    let containers = spec["containers"].as_array().unwrap();
    assert!(!containers.is_empty(), "{what}: no containers");
    for c in containers {
        let what = format!("{what} container {}", c["name"]);
        let sc = &c["securityContext"];
        assert_eq!(sc["runAsNonRoot"], true, "{what}: runAsNonRoot");
        assert_eq!(
            sc["readOnlyRootFilesystem"], true,
            "{what}: readOnlyRootFilesystem"
        );
        assert_eq!(
            sc["allowPrivilegeEscalation"], false,
            "{what}: allowPrivilegeEscalation"
        );
        assert_eq!(
            sc["capabilities"]["drop"],
            serde_json::json!(["ALL"]),
            "{what}: drop"
        );
        assert_eq!(
            sc["seccompProfile"]["type"], "RuntimeDefault",
            "{what}: seccomp"
        );
        assert!(
            c["resources"]["limits"]["memory"].is_string(),
            "{what}: memory limit"
        );
        assert!(
            c["resources"]["requests"]["cpu"].is_string(),
            "{what}: cpu request"
        );
        if c["name"] == "dex" {
            // plumb dex rundex serves nothing itself: Dex's port answering is its readiness,
            // and rundex exits (the container restarts) when Dex does.
            assert_eq!(
                c["readinessProbe"]["tcpSocket"]["port"], "http",
                "{what}: readiness"
            );
        } else {
            assert_eq!(
                c["livenessProbe"]["httpGet"]["path"], "/healthz",
                "{what}: liveness"
            );
            assert_eq!(
                c["readinessProbe"]["httpGet"]["path"], "/readyz",
                "{what}: readiness"
            );
        }
        let image = c["image"].as_str().unwrap_or_default();
        assert!(image.contains(':'), "{what}: image {image} has no tag");
    }
}

#[test]
fn chart_lints_and_renders_every_ci_values_file() {
    for file in ci_values() {
        let source = file.display().to_string();
        let lint = run(Command::new(tools::helm())
            .args(["lint", "--strict"])
            .arg(chart())
            .arg("-f")
            .arg(&file));
        assert!(
            lint.status.success(),
            "helm lint --strict -f {source}: {}{}",
            String::from_utf8_lossy(&lint.stdout),
            stderr(&lint)
        );
        let objs = render(&["-f", &source]);
        check_objects(&objs, "argocd", &source);
        assert_eq!(
            render(&["-f", &source]),
            objs,
            "{source}: two renders differ"
        );
    }
}

/// appVersion (the image tag by default) is the plumb crate's version.
#[test]
fn chart_app_version_is_the_crate_version() {
    let text = std::fs::read_to_string(chart().join("Chart.yaml")).unwrap();
    let chart = &parse(&text, "Chart.yaml")[0];
    assert_eq!(chart["appVersion"], env!("CARGO_PKG_VERSION"));
    let objs = render(&[]);
    let server = by_key(&objs)[&("Deployment".into(), "plumb-server".into())];
    let image = server["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap();
    assert!(
        image.ends_with(&format!(":{}", env!("CARGO_PKG_VERSION"))),
        "{image}"
    );
}

/// The chart's CRDs are deploy/crds' (files/crds links there, so they cannot drift), with only
/// the keep annotation added.
#[test]
fn chart_crds_are_deploys() {
    let link = std::fs::read_link(chart().join("files/crds")).unwrap();
    assert_eq!(link, Path::new("../../../crds"));
    let objs = render(&[]);
    let rendered = by_key(&objs);
    for name in [
        "application-crd.yaml",
        "appproject-crd.yaml",
        "applicationset-crd.yaml",
    ] {
        let deploy = std::fs::read_to_string(repo().join("deploy/crds").join(name)).unwrap();
        let want = &parse(&deploy, name)[0];
        let mut got = rendered[&key(want)].clone();
        let annotations = got["metadata"]["annotations"].as_object_mut().unwrap();
        assert_eq!(
            annotations.remove("helm.sh/resource-policy"),
            Some("keep".into())
        );
        if annotations.is_empty() {
            got["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("annotations");
        }
        assert_eq!(&got, want, "the rendered {name}");
    }
    let kept = render(&["--set", "crds.keep=false"]);
    let crd = by_key(&kept)[&(
        "CustomResourceDefinition".into(),
        "applications.argoproj.io".into(),
    )];
    assert!(
        crd["metadata"]["annotations"]
            .get("helm.sh/resource-policy")
            .is_none()
    );
    let none = render(&["--set", "crds.install=false"]);
    assert!(!none.iter().any(|o| o["kind"] == "CustomResourceDefinition"));
}

/// A values file with a key the chart does not know is refused by lint and template, the key
/// named; so are Argo CD components Plumb does not have.
#[test]
fn chart_refuses_wrong_keys_naming_them() {
    let cases = [
        ("controller:\n  replicass: 2\n", "'replicass'"),
        (
            "server:\n  ingress:\n    hostnmae: a.example.com\n",
            "'hostnmae'",
        ),
        (
            "global:\n  securityContext:\n    runAsUsr: 1\n",
            "'runAsUsr'",
        ),
        (
            "configs:\n  params:\n    otlp.address: collector:4317\n",
            "'otlp.address'",
        ),
        (
            "configs:\n  cm:\n    url:\n      nested: true\n",
            "/configs/cm/url",
        ),
        ("repoServer:\n  replicas: 2\n", "'replicas'"),
        ("redis:\n  enabled: true\n", "/redis/enabled"),
        ("fullnameOverride: x\n", "'fullnameOverride'"),
        ("controller:\n  replicas: 0\n", "/controller/replicas"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (values, named)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("bad-{i}.yaml"));
        std::fs::write(&file, values).unwrap();
        for verb in ["lint", "template"] {
            let out = run(Command::new(tools::helm())
                .arg(verb)
                .arg(chart())
                .arg("-f")
                .arg(&file));
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(
                !out.status.success(),
                "helm {verb} accepted {values:?}: {text}"
            );
            assert!(
                text.contains(named) && text.contains("schema"),
                "helm {verb} on {values:?} does not name {named}: {text}"
            );
        }
    }
    // Argo CD's components, turned off, are accepted: they are off here too.
    render(&[
        "--set",
        "redis.enabled=false,dex.enabled=false,repoServer.enabled=false",
    ]);
}

/// `kustomize build` of a deploy/ directory, parsed.
fn kustomize_build(dir: &Path) -> Vec<Value> {
    let out = run(Command::new(tools::kustomize()).arg("build").arg(dir));
    assert!(
        out.status.success(),
        "kustomize build {}: {}",
        dir.display(),
        stderr(&out)
    );
    parse(
        &String::from_utf8_lossy(&out.stdout),
        &dir.display().to_string(),
    )
}

/// What must be the same in the chart's object and deploy/'s, by kind: the Pod's security,
/// probes, resources, ports, volumes and image; RBAC rules and bindings; Services' ports and
/// selectors; NetworkPolicies, PodDisruptionBudgets and the AppProject whole.
fn compared(obj: &Value) -> Value {
    let spec = &obj["spec"];
    match obj["kind"].as_str().unwrap_or_default() {
        "Deployment" | "StatefulSet" => {
            let pod = &spec["template"]["spec"];
            let containers: Vec<Value> = pod["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "name": c["name"], "image": c["image"], "ports": c["ports"],
                        "securityContext": c["securityContext"], "resources": c["resources"],
                        "livenessProbe": c["livenessProbe"], "readinessProbe": c["readinessProbe"],
                        "volumeMounts": c["volumeMounts"],
                    })
                })
                .collect();
            serde_json::json!({
                "replicas": spec["replicas"], "selector": spec["selector"],
                "strategy": spec["strategy"], "serviceName": spec["serviceName"],
                "podManagementPolicy": spec["podManagementPolicy"],
                "serviceAccountName": pod["serviceAccountName"],
                "securityContext": pod["securityContext"], "volumes": pod["volumes"],
                "containers": containers,
            })
        }
        "Role" | "ClusterRole" => obj["rules"].clone(),
        "RoleBinding" | "ClusterRoleBinding" => {
            let subjects: Vec<Value> = obj["subjects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| serde_json::json!({"kind": s["kind"], "name": s["name"]}))
                .collect();
            serde_json::json!({"roleRef": obj["roleRef"], "subjects": subjects})
        }
        "Service" => serde_json::json!({"ports": spec["ports"], "selector": spec["selector"],
                                         "clusterIP": spec["clusterIP"]}),
        "CustomResourceDefinition" => spec.clone(),
        _ => spec.clone(),
    }
}

/// A probe with Kubernetes' defaults written out, so an omitted default equals a written one.
fn with_probe_defaults(probe: &Value) -> Value {
    let mut p = probe.clone();
    if let Some(map) = p.as_object_mut() {
        for (field, default) in [
            ("failureThreshold", 3),
            ("successThreshold", 1),
            ("initialDelaySeconds", 0),
            ("periodSeconds", 10),
            ("timeoutSeconds", 1),
        ] {
            map.entry(field).or_insert(default.into());
        }
        if let Some(get) = map.get_mut("httpGet").and_then(Value::as_object_mut) {
            get.entry("scheme").or_insert("HTTP".into());
        }
    }
    p
}

fn normalized(obj: &Value) -> Value {
    let mut v = compared(obj);
    if let Some(containers) = v.get_mut("containers").and_then(Value::as_array_mut) {
        for c in containers {
            for probe in ["livenessProbe", "readinessProbe"] {
                c[probe] = with_probe_defaults(&c[probe]);
            }
        }
    }
    v
}

/// The chart rendered with `args` has deploy's objects (by kind and name; `only_deploy` and
/// `only_chart` are the documented differences) with the same settings.
fn assert_same_install(args: &[&str], deploy: &[Value], only_deploy: &[&str], only_chart: &[&str]) {
    let chart_objs = render(args);
    let chart = by_key(&chart_objs);
    let deploy = by_key(deploy);
    let name = |k: &(String, String)| format!("{}/{}", k.0, k.1);
    let missing: BTreeSet<String> = deploy
        .keys()
        .filter(|k| !chart.contains_key(*k))
        .map(name)
        .collect();
    let extra: BTreeSet<String> = chart
        .keys()
        .filter(|k| !deploy.contains_key(*k))
        .map(name)
        .collect();
    let want = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        missing,
        want(only_deploy),
        "{args:?}: objects of deploy/ the chart lacks"
    );
    assert_eq!(
        extra,
        want(only_chart),
        "{args:?}: objects only the chart has"
    );
    for (k, d) in &deploy {
        if let Some(c) = chart.get(k) {
            assert_eq!(
                normalized(c),
                normalized(d),
                "{args:?}: {} differs",
                name(k)
            );
        }
    }
}

/// The chart's settings objects: install.yaml leaves them to the user (Plumb runs without
/// them), the chart writes them from configs.*.
const SETTINGS: &[&str] = &[
    "ConfigMap/argocd-cm",
    "ConfigMap/argocd-cmd-params-cm",
    "ConfigMap/argocd-gpg-keys-cm",
    "ConfigMap/argocd-rbac-cm",
    "ConfigMap/argocd-ssh-known-hosts-cm",
    "ConfigMap/argocd-tls-certs-cm",
    "Secret/argocd-secret",
];

/// deploy/'s generated `install.yaml` or `namespace-install.yaml`, parsed.
fn install_file(name: &str) -> Vec<Value> {
    let path = repo().join("deploy").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (scripts/install-manifests makes it)",
            path.display()
        )
    });
    parse(&text, name)
}

/// The default render installs what deploy/install.yaml does, except the Namespace (`helm
/// install --create-namespace`); `createClusterRoles=false` without CRDs what
/// namespace-install.yaml does; `controller.replicas=3` what deploy/ with
/// components/controller-statefulset does; `dex.enabled=true` what deploy/ with components/dex
/// does.
#[test]
fn chart_installs_what_deploy_installs() {
    assert_same_install(
        &[],
        &install_file("install.yaml"),
        &["Namespace/argocd"],
        SETTINGS,
    );
    let args = ["--set", "createClusterRoles=false,crds.install=false"];
    let namespaced = install_file("namespace-install.yaml");
    assert_same_install(&args, &namespaced, &[], SETTINGS);
    // Three shards: deploy with components/controller-statefulset, from an overlay in a
    // temporary directory (kustomize takes only relative paths to other directories).
    let deploy = repo().join("deploy").canonicalize().unwrap();
    let overlay = tempfile::tempdir().unwrap();
    let up = "../".repeat(overlay.path().canonicalize().unwrap().components().count() - 1);
    let deploy = format!(
        "{up}{}",
        deploy.display().to_string().trim_start_matches('/')
    );
    let kustomization = format!(
        "resources: [{deploy}]\ncomponents: [{deploy}/components/controller-statefulset]\n"
    );
    std::fs::write(overlay.path().join("kustomization.yaml"), kustomization).unwrap();
    let sharded = kustomize_build(overlay.path());
    let args = ["--set", "controller.replicas=3"];
    assert_same_install(&args, &sharded, &["Namespace/argocd"], SETTINGS);
    // The bundled Dex: deploy with components/dex, the chart with dex.enabled.
    let kustomization = format!("resources: [{deploy}]\ncomponents: [{deploy}/components/dex]\n");
    std::fs::write(overlay.path().join("kustomization.yaml"), kustomization).unwrap();
    let with_dex = kustomize_build(overlay.path());
    let args = ["--set", "dex.enabled=true"];
    assert_same_install(&args, &with_dex, &["Namespace/argocd"], SETTINGS);
    let server = by_key(&with_dex)[&("Deployment".into(), "plumb-server".into())]["spec"]["template"]
        ["spec"]["containers"][0]["env"]
        .clone();
    let chart_objs = render(&args);
    let chart_server = &by_key(&chart_objs)[&("Deployment".into(), "plumb-server".into())]["spec"]
        ["template"]["spec"]["containers"][0]["env"];
    for env in [&server, chart_server] {
        let dex = env
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "ARGOCD_SERVER_DEX_SERVER");
        assert_eq!(
            dex.map(|e| &e["value"]),
            Some(&Value::from("http://plumb-dex-server:5556")),
            "plumb server's --dex-server is the Service"
        );
    }
}

/// Above one controller replica, a StatefulSet told its replica count, as
/// deploy/components/controller-statefulset; the server in plain HTTP with server.insecure.
#[test]
fn chart_sharded_controller_and_insecure_server() {
    let objs = render(&[
        "--set",
        "controller.replicas=3,configs.params.server\\.insecure=true",
    ]);
    let objs = by_key(&objs);
    assert!(!objs.contains_key(&("Deployment".into(), "plumb-controller".into())));
    let sts = objs[&("StatefulSet".into(), "plumb-controller".into())];
    assert_eq!(sts["spec"]["replicas"], 3);
    assert_eq!(sts["spec"]["serviceName"], "plumb-controller");
    let env = &sts["spec"]["template"]["spec"]["containers"][0]["env"];
    let replicas = env
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "ARGOCD_CONTROLLER_REPLICAS");
    assert_eq!(replicas.map(|e| &e["value"]), Some(&Value::from("3")));
    assert_eq!(
        objs[&("Service".into(), "plumb-controller".into())]["spec"]["clusterIP"],
        "None"
    );
    let server = &objs[&("Deployment".into(), "plumb-server".into())]["spec"]["template"]["spec"]["containers"]
        [0];
    assert!(
        server["args"]
            .as_array()
            .unwrap()
            .contains(&"--insecure".into())
    );
    assert_eq!(server["readinessProbe"]["httpGet"]["scheme"], "HTTP");
}

/// Every object of the chart except the (shared) CRDs, rendered for a namespace of its own with
/// namespaceOverride, is accepted by the API server (`kubectl apply --dry-run=server`): the
/// default values and the fullest ci/ file.
#[test]
fn chart_objects_are_accepted_by_the_api_server() {
    let env = env();
    let ns = env.namespace("chart");
    let dir = tempfile::tempdir().unwrap();
    for values in [
        "default-values.yaml",
        "configs-values.yaml",
        "ha-values.yaml",
        "dex-values.yaml",
    ] {
        let file = chart().join("ci").join(values);
        let set = format!("namespaceOverride={},crds.install=false", ns.name());
        let objs = render(&["-f", &file.display().to_string(), "--set", &set]);
        check_objects(&objs, ns.name(), values);
        let stream: String = objs
            .iter()
            .map(|o| format!("---\n{}", plumb_yaml::to_yaml_string(o)))
            .collect();
        let rendered = dir.path().join(values);
        std::fs::write(&rendered, stream).unwrap();
        let out = run(env
            .kubectl()
            .args(["apply", "--dry-run=server", "-o", "name", "-f"])
            .arg(&rendered));
        assert!(
            out.status.success(),
            "{values}: the API server refused: {}",
            stderr(&out)
        );
        let applied = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(
            applied,
            objs.len(),
            "{values}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
