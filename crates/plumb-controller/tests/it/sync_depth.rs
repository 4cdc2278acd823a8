//! The sync engine end to end: hooks, waves and health gates, SyncFail, CRDs, sync options,
//! retries, terminate, dry runs and strategies, on the real control plane (kwok: Job pods
//! complete, other pods become Ready) through the controller's operations.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::watcher;
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::Controlled;

/// Short pauses between waves keep the file fast; the order is what is checked.
const WAVE_DELAY: Duration = Duration::from_millis(200);

async fn controller(env: &'static TestEnv, prefix: &str) -> Controlled {
    Controlled::start_with(env, prefix, |c| c.sync_wave_delay = WAVE_DELAY).await
}

/// A controller whose settings ConfigMap (`argocd-cm`) holds `data` from the start.
async fn controller_with_settings(env: &'static TestEnv, prefix: &str, data: Value) -> Controlled {
    crate::support::install_crds(env);
    let ns = env.namespace(prefix);
    kubectl_apply(
        env,
        ns.name(),
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "argocd-cm"}, "data": data}),
    );
    Controlled::start_in_with(env, ns, |c| c.sync_wave_delay = WAVE_DELAY).await
}

/// A unique Application name (tracking ids of earlier runs' objects must not collide).
fn app_name(prefix: &str) -> String {
    format!("{prefix}-{}", std::process::id())
}

fn kubectl(env: &TestEnv, args: &[&str]) -> String {
    let out = env.kubectl().args(args).output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn kubectl_apply(env: &TestEnv, ns: &str, obj: &Value) {
    let file = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(file.path(), obj.to_string()).expect("write manifest");
    let path = file.path().to_string_lossy().into_owned();
    kubectl(env, &["-n", ns, "apply", "-f", &path]);
}

/// The live object, or `None` when it does not exist.
fn live(env: &TestEnv, ns: &str, resource: &str, name: &str) -> Option<Value> {
    let out = env
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            resource,
            name,
            "-o",
            "json",
            "--ignore-not-found",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    (!text.trim().is_empty()).then(|| serde_json::from_str(&text).expect("json"))
}

fn uid(obj: &Value) -> String {
    obj["metadata"]["uid"].as_str().expect("uid").to_string()
}

fn state(app: &Value) -> &Value {
    &app["status"]["operationState"]
}

fn results(app: &Value) -> Vec<Value> {
    state(app)["syncResult"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// One line per result, in the order the work started:
/// `<syncPhase> <Kind>/<name> <status> [<hookType>/<hookPhase>] <message>`.
fn rows(app: &Value) -> Vec<String> {
    results(app)
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
            let hook = if r["hookType"].is_null() {
                String::new()
            } else {
                format!(" [{}/{}]", s("hookType"), s("hookPhase"))
            };
            format!(
                "{} {}/{} {}{hook} {}",
                s("syncPhase"),
                s("kind"),
                s("name"),
                s("status"),
                s("message")
            )
        })
        .collect()
}

/// `<Kind>/<name> <hookPhase>` per result, in the order the work started. Argo CD gives every
/// result a phase, hooks or not (gitops-engine `sync_context.go`: applied objects are `Running`
/// until their health is looked at before the next step, then `Succeeded` or `Failed`; the last
/// step's objects stay `Running`; prunes are `Succeeded`).
fn phases(app: &Value) -> Vec<String> {
    results(app)
        .iter()
        .map(|r| {
            format!(
                "{}/{} {}",
                r["kind"].as_str().unwrap_or("-"),
                r["name"].as_str().unwrap_or("-"),
                r["hookPhase"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// The Application's `status.resources` rows: `<Kind>/<name> hook=<bool> requiresPruning=<bool>`.
fn resource_rows(app: &Value) -> Vec<String> {
    app["status"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{}/{} hook={} requiresPruning={}",
                r["kind"].as_str().unwrap_or("-"),
                r["name"].as_str().unwrap_or("-"),
                r["hook"].as_bool().unwrap_or(false),
                r["requiresPruning"].as_bool().unwrap_or(false)
            )
        })
        .collect()
}

fn result<'a>(results: &'a [Value], kind: &str, name: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["kind"] == kind && r["name"] == name)
        .unwrap_or_else(|| panic!("no result for {kind}/{name} in {results:#?}"))
}

/// Requests termination as `plumb app terminate-op` does and waits for the operation to end,
/// promptly and as `Failed` / `Operation terminated`; returns the Application.
async fn terminate(ctl: &Controlled, name: &str, who: &str) -> Value {
    let requested = Instant::now();
    ctl.apps()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"operationState": {"phase": "Terminating"}}})),
        )
        .await
        .expect("request termination");
    let app = ctl.wait_op(name, who).await;
    assert!(
        requested.elapsed() < Duration::from_secs(5),
        "terminated after {:?}",
        requested.elapsed()
    );
    assert_eq!(state(&app)["phase"], "Failed", "{:#}", state(&app));
    assert_eq!(state(&app)["message"], "Operation terminated");
    app
}

fn at(r: &Value, field: &str) -> jiff::Timestamp {
    r[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} missing in {r:#}"))
        .parse()
        .expect("RFC 3339 time")
}

/// Every `operationState.message` the Application shows, in order (consecutive repeats once),
/// seen through a watch so short-lived messages are not missed.
struct Messages {
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Messages {
    /// Starts watching; returns once the watch has its initial state, so nothing later is missed.
    async fn record(ctl: &Controlled, name: &str) -> Self {
        let api: Api<DynamicObject> = ctl.apps();
        let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut ready = Some(ready_tx);
            let mut stream = std::pin::pin!(watcher::watcher(api, cfg));
            while let Some(ev) = stream.next().await {
                let o = match ev {
                    Ok(watcher::Event::InitDone) => {
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => o,
                    _ => continue,
                };
                let v = serde_json::to_value(&o).expect("json");
                if let Some(m) = v
                    .pointer("/status/operationState/message")
                    .and_then(Value::as_str)
                {
                    let mut seen = sink.lock().expect("lock");
                    if seen.last().map(String::as_str) != Some(m) {
                        seen.push(m.to_string());
                    }
                }
            }
        });
        tokio::time::timeout(Duration::from_secs(30), ready_rx)
            .await
            .expect("the watch started")
            .expect("the watch started");
        Self { seen, task }
    }

    fn all(&self) -> Vec<String> {
        self.seen.lock().expect("lock").clone()
    }

    /// Waits until `message` was seen.
    async fn wait_for(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        while start.elapsed() < crate::support::DEADLINE {
            if let Some(m) = self.all().into_iter().find(|m| cond(m)) {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{what} not seen; messages: {:#?}", self.all());
    }
}

impl Drop for Messages {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn deployment(name: &str, annotations: Value) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  annotations: {annotations}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: web
        image: registry.example/{name}:v1
"#
    )
}

fn job(name: &str, annotations: Value, image: &str) -> String {
    format!(
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations: {annotations}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: run
        image: {image}
"#
    )
}

fn configmap(name: &str, annotations: Value) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations: {annotations}\ndata:\n  key: value\n"
    )
}

fn service(name: &str, annotations: Value) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  annotations: {annotations}\nspec:\n  selector:\n    app: {name}\n  ports:\n  - port: 80\n    targetPort: 8080\n"
    )
}

fn wave(n: i64) -> Value {
    json!({"argocd.argoproj.io/sync-wave": n.to_string()})
}

/// A namespaced custom resource kind installed for one test, removed when dropped. Its CRD has
/// no status subresource, so the status written in Git is what the API server stores (and what
/// health is judged from).
struct TestKind {
    env: &'static TestEnv,
    group: String,
    kind: &'static str,
    plural: &'static str,
}

impl TestKind {
    fn crd(group: &str, kind: &str, plural: &str) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.to_ascii_lowercase(), "listKind": format!("{kind}List")},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        })
    }

    /// Installs the kind `kind` in a group unique to this process and test.
    fn install(
        env: &'static TestEnv,
        test: &str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        let group = format!("{test}.p{}.plumb.test", std::process::id());
        kubectl_apply(env, "default", &Self::crd(&group, kind, plural));
        let name = format!("crd/{plural}.{group}");
        kubectl(
            env,
            &[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                &name,
            ],
        );
        // The controller's discovery learns the new kind when it refreshes; give it a kind it can
        // already see by waiting until the API server serves it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !kubectl(env, &["api-resources", "--api-group", &group, "-o", "name"])
            .contains(plural)
        {
            assert!(Instant::now() < deadline, "{plural}.{group} not served");
            std::thread::sleep(Duration::from_millis(200));
        }
        Self {
            env,
            group,
            kind,
            plural,
        }
    }

    fn resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// A custom resource as Git declares it (no status: its controller writes that).
    fn object(&self, name: &str, annotations: Value) -> String {
        let obj = json!({
            "apiVersion": format!("{}/v1", self.group), "kind": self.kind,
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"size": 1}
        });
        serde_json::to_string_pretty(&obj).expect("json")
    }

    /// Creates the custom resource in `ns` as its controller would leave it: with a `Ready`
    /// condition (created with it: a controller, not Git, writes this status).
    fn create_with_status(&self, ns: &str, name: &str, ready: &str, reason: &str) {
        let obj = json!({
            "apiVersion": format!("{}/v1", self.group), "kind": self.kind,
            "metadata": {"name": name, "namespace": ns},
            "spec": {"size": 1},
            "status": {"conditions": [{"type": "Ready", "status": ready, "reason": reason,
                                       "message": format!("{reason} for the test")}]}
        });
        let file = tempfile::NamedTempFile::new().expect("tempfile");
        std::fs::write(file.path(), obj.to_string()).expect("write manifest");
        let path = file.path().to_string_lossy().into_owned();
        // `create`, not `apply`: fields of kubectl-client-side-apply are taken over by Plumb's
        // apply (and the status would go with them).
        kubectl(self.env, &["create", "-f", &path]);
    }
}

impl Drop for TestKind {
    fn drop(&mut self) {
        let _ = self
            .env
            .kubectl()
            .args([
                "delete",
                "crd",
                &format!("{}.{}", self.plural, self.group),
                "--wait=false",
                "--ignore-not-found",
            ])
            .output();
    }
}

/// An Application of `repo`'s `app` directory deploying to `dest`, with extra spec fields.
async fn create_app(ctl: &Controlled, name: &str, repo: &GitRepo, dest: &str, extra: Value) {
    let mut spec = json!({"project": "default",
        "source": {"repoURL": repo.url(), "path": "app"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name}, "spec": spec
    }))
    .await;
    // The first comparison is done: the sync starts from a known state.
    ctl.wait_app(name, "compared", |a| {
        !a["status"]["sync"]["status"].is_null()
    })
    .await;
}

#[tokio::test]
async fn presync_and_postsync_hooks_run_around_a_healthy_sync_phase_and_are_recreated() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-presync").await;
    let dest = env.namespace("dest-presync");
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/migrate.yaml",
                job(
                    "migrate",
                    json!({"argocd.argoproj.io/hook": "PreSync"}),
                    "registry.example/migrate:v1",
                ),
            ),
            ("app/web.yaml", deployment("web", json!({}))),
            (
                "app/smoke.yaml",
                job(
                    "smoke",
                    json!({"argocd.argoproj.io/hook": "PostSync",
                           "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}),
                    "registry.example/smoke:v1",
                ),
            ),
        ],
        "hooks around a deployment",
    );
    let name = app_name("presync");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    // The last step holds a hook: Argo CD ends such a sync on a later look that finds nothing
    // left (checked against Argo CD 3.6 by the conformance harness).
    assert_eq!(
        state(&app)["message"],
        "successfully synced (no more tasks)"
    );
    assert_eq!(
        rows(&app),
        [
            "PreSync Job/migrate Synced [PreSync/Succeeded] Reached expected number of succeeded pods",
            "Sync Deployment/web Synced deployment.apps/web created",
            "PostSync Job/smoke Synced [PostSync/Succeeded] Reached expected number of succeeded pods",
        ]
    );
    // The Sync phase is not the last step: the Deployment was looked at before PostSync.
    assert_eq!(
        phases(&app),
        [
            "Job/migrate Succeeded",
            "Deployment/web Succeeded",
            "Job/smoke Succeeded"
        ]
    );
    // As Argo CD: the hook HookSucceeded deleted has no row; the hook still there has one,
    // marked requiresPruning (Argo reconciles hooks apart from Git's objects).
    assert_eq!(
        resource_rows(&app),
        [
            "Deployment/web hook=false requiresPruning=false",
            "Job/migrate hook=true requiresPruning=true",
        ]
    );
    let rs = results(&app);
    let hook = result(&rs, "Job", "migrate");
    let web = result(&rs, "Deployment", "web");
    let smoke = result(&rs, "Job", "smoke");
    assert!(at(hook, "startedAt") <= at(hook, "finishedAt"));
    assert!(
        at(hook, "finishedAt") <= at(web, "startedAt"),
        "the Deployment was applied before the hook completed: {rs:#?}"
    );
    // A PostSync hook waits for the Sync phase to be healthy.
    assert!(at(web, "startedAt") < at(web, "finishedAt"), "{rs:#?}");
    assert!(at(web, "finishedAt") <= at(smoke, "startedAt"), "{rs:#?}");
    assert_eq!(
        live(env, dest.name(), "job", "smoke"),
        None,
        "HookSucceeded deletes the hook once it succeeded"
    );
    let job1 = live(env, dest.name(), "job", "migrate").expect("the hook Job stays");
    assert_eq!(
        job1["metadata"]["finalizers"],
        Value::Null,
        "the hook finalizer is removed once the result is recorded"
    );
    assert_eq!(job1["status"]["succeeded"], 1);

    // BeforeHookCreation (the default policy): the next sync deletes the old Job first.
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            "PreSync Job/migrate Synced [PreSync/Succeeded] Reached expected number of succeeded pods",
            "Sync Deployment/web Synced deployment.apps/web unchanged",
            "PostSync Job/smoke Synced [PostSync/Succeeded] Reached expected number of succeeded pods",
        ]
    );
    let job2 = live(env, dest.name(), "job", "migrate").expect("the hook Job again");
    assert_ne!(uid(&job1), uid(&job2), "the hook was recreated");
    assert_eq!(job2["metadata"]["finalizers"], Value::Null);
}

#[tokio::test]
async fn waves_run_in_order_and_a_deployment_holds_the_next_wave_until_healthy() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-waves").await;
    let dest = env.namespace("dest-waves");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/config.yaml", configmap("config", wave(-1))),
            ("app/web.yaml", deployment("web", wave(0))),
            ("app/front.yaml", service("front", wave(1))),
        ],
        "three waves",
    );
    let name = app_name("waves");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let messages = Messages::record(&ctl, &name).await;

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            "Sync ConfigMap/config Synced configmap/config created",
            "Sync Deployment/web Synced deployment.apps/web created",
            "Sync Service/front Synced service/front created",
        ]
    );
    // Earlier waves were looked at before the next one; the last wave of plain objects ends
    // the operation once applied and stays Running, as in Argo CD.
    assert_eq!(
        phases(&app),
        [
            "ConfigMap/config Succeeded",
            "Deployment/web Succeeded",
            "Service/front Running"
        ]
    );
    let rs = results(&app);
    let (config, web, front) = (
        result(&rs, "ConfigMap", "config"),
        result(&rs, "Deployment", "web"),
        result(&rs, "Service", "front"),
    );
    assert!(at(config, "finishedAt") <= at(web, "startedAt"), "{rs:#?}");
    assert!(at(web, "startedAt") < at(web, "finishedAt"), "{rs:#?}");
    assert!(at(web, "finishedAt") <= at(front, "startedAt"), "{rs:#?}");
    // The wave pause separates the waves.
    let gap = at(front, "startedAt").duration_since(at(web, "finishedAt"));
    assert!(gap >= jiff::SignedDuration::try_from(WAVE_DELAY).expect("duration"));
    let seen = messages.all();
    assert!(
        seen.iter()
            .any(|m| m == "waiting for healthy state of apps/Deployment/web"),
        "{seen:#?}"
    );
    // When wave 0 was released the Deployment was available.
    let web_live = live(env, dest.name(), "deployment", "web").expect("deployment");
    assert_eq!(web_live["status"]["availableReplicas"], 1);
}

#[tokio::test]
async fn a_degraded_wave_fails_the_sync_runs_syncfail_hooks_and_stops_later_waves() {
    let env = TestEnv::shared();
    let widgets = TestKind::install(env, "syncfail", "Widget", "widgets");
    let ctl = controller(env, "ctl-syncfail").await;
    let dest = env.namespace("dest-syncfail");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/first.yaml", configmap("first", wave(-1))),
            ("app/broken.yaml", widgets.object("broken", wave(0))),
            ("app/later.yaml", configmap("later", wave(1))),
            (
                "app/on-fail.yaml",
                job(
                    "on-fail",
                    json!({"argocd.argoproj.io/hook": "SyncFail"}),
                    "registry.example/notify:v1",
                ),
            ),
        ],
        "a wave that fails",
    );
    widgets.create_with_status(dest.name(), "broken", "False", "Failed");
    let name = app_name("syncfail");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Failed", "{:#}", state(&app));
    assert_eq!(
        state(&app)["message"],
        "one or more synchronization tasks completed unsuccessfully"
    );
    assert_eq!(
        rows(&app),
        [
            "Sync ConfigMap/first Synced configmap/first created",
            "Sync Widget/broken Synced generic: condition Ready=False (Failed): Failed for the test",
            "SyncFail Job/on-fail Synced [SyncFail/Succeeded] Reached expected number of succeeded pods",
        ]
    );
    // As Argo CD: the Degraded object was applied (`Synced`); its phase is what failed.
    assert_eq!(
        phases(&app),
        [
            "ConfigMap/first Succeeded",
            "Widget/broken Failed",
            "Job/on-fail Succeeded"
        ]
    );
    let rs = results(&app);
    assert!(
        at(result(&rs, "Widget", "broken"), "finishedAt")
            <= at(result(&rs, "Job", "on-fail"), "startedAt")
    );
    assert!(live(env, dest.name(), "job", "on-fail").is_some());
    assert_eq!(
        live(env, dest.name(), "configmap", "later"),
        None,
        "the wave after the failure is not applied"
    );
    assert!(live(env, dest.name(), &widgets.resource(), "broken").is_some());
}

/// Deletes a cluster-scoped CRD created by a sync when the test ends.
struct DeleteCrd(&'static TestEnv, String);

impl Drop for DeleteCrd {
    fn drop(&mut self) {
        let _ = self
            .0
            .kubectl()
            .args([
                "delete",
                "crd",
                &self.1,
                "--wait=false",
                "--ignore-not-found",
            ])
            .output();
    }
}

#[tokio::test]
async fn a_crd_and_its_custom_resource_sync_together_and_a_second_sync_changes_nothing() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-crd").await;
    let dest = env.namespace("dest-crd");
    let group = format!("crd.p{}.plumb.test", std::process::id());
    let crd_name = format!("gadgets.{group}");
    let _cleanup = DeleteCrd(env, crd_name.clone());
    let crd =
        serde_json::to_string_pretty(&TestKind::crd(&group, "Gadget", "gadgets")).expect("json");
    let gadget = serde_json::to_string_pretty(&json!({
        "apiVersion": format!("{group}/v1"), "kind": "Gadget",
        "metadata": {"name": "one"}, "spec": {"size": 1}
    }))
    .expect("json");
    let repo = GitRepo::new();
    repo.commit(
        &[("app/crd.yaml", crd), ("app/gadget.yaml", gadget)],
        "crd and resource",
    );
    let name = app_name("crd");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!(
                "Sync CustomResourceDefinition/{crd_name} Synced customresourcedefinition.apiextensions.k8s.io/{crd_name} created"
            ),
            format!("Sync Gadget/one Synced gadget.{group}/one created"),
        ]
    );
    let rs = results(&app);
    assert!(
        at(
            result(&rs, "CustomResourceDefinition", &crd_name),
            "finishedAt"
        ) <= at(result(&rs, "Gadget", "one"), "startedAt")
    );
    let before = live(env, dest.name(), &format!("gadgets.{group}"), "one").expect("gadget");
    let app = ctl
        .wait_app(&name, "Synced", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    assert_eq!(app["status"]["resources"].as_array().map(Vec::len), Some(2));

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!(
                "Sync CustomResourceDefinition/{crd_name} Synced customresourcedefinition.apiextensions.k8s.io/{crd_name} unchanged"
            ),
            format!("Sync Gadget/one Synced gadget.{group}/one unchanged"),
        ]
    );
    let after = live(env, dest.name(), &format!("gadgets.{group}"), "one").expect("gadget");
    assert_eq!(
        after["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
}

/// Git for the health-gate tests: a custom resource in wave 0 that is not Ready, a ConfigMap in
/// wave 1.
fn gated_repo(widgets: &TestKind) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/slow.yaml", widgets.object("slow", wave(0))),
            ("app/after.yaml", configmap("after", wave(1))),
        ],
        "a custom resource that is not ready",
    );
    repo
}

#[tokio::test]
async fn a_custom_resource_that_is_not_ready_holds_the_next_wave_until_it_is() {
    let env = TestEnv::shared();
    let widgets = TestKind::install(env, "gate", "Widget", "widgets");
    let ctl = controller(env, "ctl-gate").await;
    let dest = env.namespace("dest-gate");
    let repo = gated_repo(&widgets);
    widgets.create_with_status(dest.name(), "slow", "False", "Provisioning");
    let name = app_name("gate");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let messages = Messages::record(&ctl, &name).await;

    let who = ctl.request_op(&name, json!({"sync": {}})).await;
    let waiting = format!("waiting for healthy state of {}/Widget/slow", widgets.group);
    messages.wait_for(&waiting, |m| m == waiting).await;
    // Held: several polls and wave pauses later, still Running and wave 1 not applied.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let app = serde_json::to_value(ctl.apps().get(&name).await.expect("get")).expect("json");
    assert_eq!(state(&app)["phase"], "Running", "{:#}", state(&app));
    assert_eq!(state(&app)["message"], waiting.as_str());
    assert_eq!(
        rows(&app),
        [format!(
            "Sync Widget/slow Synced widget.{}/slow configured",
            widgets.group
        )]
    );
    assert_eq!(live(env, dest.name(), "configmap", "after"), None);

    // The resource becomes Ready: the next wave goes.
    kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "patch",
            &widgets.resource(),
            "slow",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Provisioned","message":"ready"}]}}"#,
        ],
    );
    let app = ctl.wait_op(&name, &who).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!(
                "Sync Widget/slow Synced widget.{}/slow configured",
                widgets.group
            ),
            "Sync ConfigMap/after Synced configmap/after created".to_string(),
        ]
    );
    let rs = results(&app);
    assert!(
        at(result(&rs, "Widget", "slow"), "finishedAt")
            <= at(result(&rs, "ConfigMap", "after"), "startedAt")
    );
    assert!(live(env, dest.name(), "configmap", "after").is_some());
}

#[tokio::test]
async fn with_the_argo_health_gate_a_custom_resource_without_a_rule_does_not_hold_waves() {
    let env = TestEnv::shared();
    let widgets = TestKind::install(env, "argogate", "Widget", "widgets");
    let ctl = controller_with_settings(
        env,
        "ctl-argogate",
        json!({"plumb.sync.healthGate": "argo"}),
    )
    .await;
    let dest = env.namespace("dest-argogate");
    let repo = gated_repo(&widgets);
    widgets.create_with_status(dest.name(), "slow", "False", "Provisioning");
    let name = app_name("argogate");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!(
                "Sync Widget/slow Synced widget.{}/slow configured",
                widgets.group
            ),
            "Sync ConfigMap/after Synced configmap/after created".to_string(),
        ]
    );
    let slow = live(env, dest.name(), &widgets.resource(), "slow").expect("widget");
    assert_eq!(slow["status"]["conditions"][0]["status"], "False");
    assert!(live(env, dest.name(), "configmap", "after").is_some());
}

#[tokio::test]
async fn prune_false_keeps_an_object_and_prune_last_prunes_after_the_last_wave() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-prune").await;
    let dest = env.namespace("dest-prune");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/main.yaml", configmap("main", json!({}))),
            (
                "app/keep.yaml",
                configmap(
                    "keep",
                    json!({"argocd.argoproj.io/sync-options": "Prune=false"}),
                ),
            ),
            (
                "app/last.yaml",
                configmap(
                    "last",
                    json!({"argocd.argoproj.io/sync-options": "PruneLast=true"}),
                ),
            ),
            ("app/front.yaml", service("front", wave(1))),
        ],
        "v1",
    );
    let name = app_name("prune");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));

    repo.remove(&["app/keep.yaml", "app/last.yaml"], "v2: drop two");
    let app = ctl
        .sync(&name, json!({"prune": true, "revision": repo.head()}))
        .await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        state(&app)["message"],
        "successfully synced (all tasks run)"
    );
    assert_eq!(
        rows(&app),
        [
            "Sync ConfigMap/keep PruneSkipped ignored (no prune)",
            "Sync ConfigMap/main Synced configmap/main unchanged",
            "Sync Service/front Synced service/front unchanged",
            "Sync ConfigMap/last Pruned pruned",
        ]
    );
    assert_eq!(
        phases(&app),
        [
            "ConfigMap/keep Succeeded",
            "ConfigMap/main Succeeded",
            "Service/front Succeeded",
            "ConfigMap/last Succeeded",
        ]
    );
    let rs = results(&app);
    let last = at(result(&rs, "ConfigMap", "last"), "startedAt");
    for r in rs.iter().filter(|r| r["name"] != "last") {
        assert!(at(r, "finishedAt") <= last, "{rs:#?}");
    }
    assert!(live(env, dest.name(), "configmap", "keep").is_some());
    assert_eq!(live(env, dest.name(), "configmap", "last"), None);
}

#[tokio::test]
async fn an_immutable_change_fails_with_the_way_out_and_replace_force_recreates() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-replace").await;
    let dest = env.namespace("dest-replace");
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/batch.yaml",
            job("batch", json!({}), "registry.example/batch:v1"),
        )],
        "v1",
    );
    let name = app_name("replace");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        rows(&app),
        ["Sync Job/batch Synced job.batch/batch created"]
    );
    let before = live(env, dest.name(), "job", "batch").expect("job");

    // A Job's pod template cannot change in place: the dry run refuses, nothing changes.
    repo.commit(
        &[(
            "app/batch.yaml",
            job("batch", json!({}), "registry.example/batch:v2"),
        )],
        "v2",
    );
    let app = ctl.sync(&name, json!({"revision": repo.head()})).await;
    assert_eq!(state(&app)["phase"], "Failed", "{:#}", state(&app));
    assert_eq!(
        state(&app)["message"],
        "one or more objects failed to apply (dry run)"
    );
    let rs = results(&app);
    assert_eq!(rs.len(), 1, "{rs:#?}");
    assert_eq!(rs[0]["status"], "SyncFailed");
    // The API server's message verbatim (it dumps the whole new template), then the way out.
    let message = rs[0]["message"].as_str().expect("message");
    let head = format!(
        r#"Job.batch "batch" is invalid: spec.template: Invalid value: {{"labels":{{"batch.kubernetes.io/controller-uid":"{}","batch.kubernetes.io/job-name":"batch","#,
        uid(&before)
    );
    let tail = r#""Image":"registry.example/batch:v2","#;
    let end = r#"}}: field is immutable (the field is immutable: the sync option Force=true, with Replace=true or alone, deletes and recreates the object; set it in the object's argocd.argoproj.io/sync-options annotation)"#;
    assert!(
        message.starts_with(&head) && message.contains(tail) && message.ends_with(end),
        "{message}"
    );
    assert_eq!(
        uid(&live(env, dest.name(), "job", "batch").expect("job")),
        uid(&before)
    );

    // With Replace=true,Force=true the Job is deleted and created again.
    repo.commit(
        &[(
            "app/batch.yaml",
            job(
                "batch",
                json!({"argocd.argoproj.io/sync-options": "Replace=true,Force=true"}),
                "registry.example/batch:v2",
            ),
        )],
        "v3",
    );
    let app = ctl.sync(&name, json!({"revision": repo.head()})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        ["Sync Job/batch Synced job.batch/batch replaced"]
    );
    let after = live(env, dest.name(), "job", "batch").expect("job");
    assert_ne!(uid(&after), uid(&before));
    assert_eq!(
        after["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/batch:v2"
    );
}

/// `<message>. Retrying attempt #<n> at 3:04PM.`: the attempt number, with the format checked.
fn retry_attempt(message: &str, failure: &str) -> Option<u64> {
    let rest = message.strip_prefix(&format!("{failure}. Retrying attempt #"))?;
    let (n, time) = rest.split_once(" at ")?;
    let time = time.strip_suffix('.')?;
    let (clock, meridiem) = time.split_at(time.len().checked_sub(2)?);
    let (h, m) = clock.split_once(':')?;
    let valid = matches!(meridiem, "AM" | "PM")
        && h.parse::<u8>().is_ok_and(|h| (1..=12).contains(&h))
        && m.len() == 2
        && m.parse::<u8>().is_ok_and(|m| m < 60);
    valid.then(|| n.parse().ok()).flatten()
}

#[tokio::test]
async fn a_failed_sync_is_retried_with_backoff_until_the_namespace_appears() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-retry").await;
    let missing = format!("retry-missing-{}", std::process::id());
    struct DeleteNs(&'static TestEnv, String);
    impl Drop for DeleteNs {
        fn drop(&mut self) {
            let _ = self
                .0
                .kubectl()
                .args([
                    "delete",
                    "namespace",
                    &self.1,
                    "--wait=false",
                    "--ignore-not-found",
                ])
                .output();
        }
    }
    let _cleanup = DeleteNs(env, missing.clone());
    let repo = GitRepo::new();
    repo.commit(&[("app/cfg.yaml", configmap("cfg", json!({})))], "v1");
    let name = app_name("retry");
    create_app(&ctl, &name, &repo, &missing, json!({})).await;
    let messages = Messages::record(&ctl, &name).await;

    let failure = "one or more objects failed to apply (dry run)";
    let who = ctl
        .request_op(
            &name,
            json!({"sync": {}, "retry": {"limit": 5, "backoff": {"duration": "1s", "factor": 2, "maxDuration": "4s"}}}),
        )
        .await;
    let app = ctl
        .wait_app(&name, "waiting to retry", |a| {
            state(a)["retryCount"].as_u64().is_some_and(|n| n >= 1)
                && state(a)["message"]
                    .as_str()
                    .is_some_and(|m| retry_attempt(m, failure).is_some())
        })
        .await;
    assert_eq!(state(&app)["phase"], "Running", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [format!(
            "Sync ConfigMap/cfg SyncFailed namespaces \"{missing}\" not found"
        )]
    );
    messages
        .wait_for("the first retry message", |m| {
            retry_attempt(m, failure) == Some(1)
        })
        .await;

    kubectl(env, &["create", "namespace", &missing]);
    let app = ctl.wait_op(&name, &who).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        state(&app)["message"],
        "successfully synced (all tasks run)"
    );
    assert_eq!(
        rows(&app),
        ["Sync ConfigMap/cfg Synced configmap/cfg created"]
    );
    // Every retry announced itself, numbered from 1, and the count recorded is the last one.
    let attempts: Vec<u64> = messages
        .all()
        .iter()
        .filter_map(|m| retry_attempt(m, failure))
        .collect();
    let expected: Vec<u64> = (1..=attempts.len() as u64).collect();
    assert_eq!(attempts, expected, "{:#?}", messages.all());
    assert_eq!(state(&app)["retryCount"], json!(attempts.len()));
    assert!(live(env, &missing, "configmap", "cfg").is_some());
}

/// A Job hook whose pod can never be scheduled: it runs until stopped.
fn stuck_job(name: &str, annotations: Value) -> String {
    format!(
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations: {annotations}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        plumb.test/no-such-node: "true"
      containers:
      - name: run
        image: registry.example/wait:v1
"#
    )
}

#[tokio::test]
async fn terminate_stops_a_sync_held_by_a_running_hook_and_deletes_the_hook() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-terminate").await;
    let dest = env.namespace("dest-terminate");
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/hold.yaml",
                stuck_job("hold", json!({"argocd.argoproj.io/hook": "PreSync"})),
            ),
            ("app/cfg.yaml", configmap("cfg", json!({}))),
        ],
        "a hook that never ends",
    );
    let name = app_name("terminate");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let messages = Messages::record(&ctl, &name).await;

    let who = ctl.request_op(&name, json!({"sync": {}})).await;
    let waiting = "waiting for completion of hook batch/Job/hold";
    messages.wait_for(waiting, |m| m == waiting).await;
    let hook = live(env, dest.name(), "job", "hold").expect("the running hook");
    assert_eq!(
        hook["metadata"]["finalizers"],
        json!(["argocd.argoproj.io/hook-finalizer"])
    );

    // What `plumb app terminate-op` writes.
    let app = terminate(&ctl, &name, &who).await;
    assert_eq!(
        rows(&app),
        ["PreSync Job/hold Synced [PreSync/Failed] Terminated"]
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while live(env, dest.name(), "job", "hold").is_some() {
        assert!(
            Instant::now() < deadline,
            "the running hook was not deleted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(live(env, dest.name(), "configmap", "cfg"), None);
}

#[tokio::test]
async fn a_dry_run_changes_nothing_and_the_apply_strategy_runs_no_hooks() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-dryrun").await;
    let dest = env.namespace("dest-dryrun");
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/migrate.yaml",
                job(
                    "migrate",
                    json!({"argocd.argoproj.io/hook": "PreSync"}),
                    "registry.example/migrate:v1",
                ),
            ),
            ("app/cfg.yaml", configmap("cfg", json!({}))),
        ],
        "hook and configmap",
    );
    let name = app_name("dryrun");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;

    let app = ctl.sync(&name, json!({"dryRun": true})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    // Argo CD's wording for a dry run (its wet pass finds no task left).
    assert_eq!(
        state(&app)["message"],
        "successfully synced (no more tasks)"
    );
    assert_eq!(
        rows(&app),
        [
            "PreSync Job/migrate Synced [PreSync/Succeeded] job.batch/migrate created (dry run)",
            "Sync ConfigMap/cfg Synced configmap/cfg created (dry run)",
        ]
    );
    assert_eq!(live(env, dest.name(), "job", "migrate"), None);
    assert_eq!(live(env, dest.name(), "configmap", "cfg"), None);
    assert_eq!(
        app["status"]["history"],
        Value::Null,
        "a dry run is no deployment"
    );

    let app = ctl
        .sync(&name, json!({"syncStrategy": {"apply": {}}}))
        .await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        ["Sync ConfigMap/cfg Synced configmap/cfg created"]
    );
    assert_eq!(live(env, dest.name(), "job", "migrate"), None);
    assert!(live(env, dest.name(), "configmap", "cfg").is_some());
}

/// Found by the conformance harness: with `application.resourceTrackingMethod: label` Argo CD
/// writes the instance label and no tracking annotation (`annotation+label`: both); Plumb wrote
/// the annotation whatever the method.
#[tokio::test]
async fn the_tracking_method_decides_what_a_sync_writes() {
    let env = TestEnv::shared();
    for (method, label, annotation) in [("label", true, false), ("annotation+label", true, true)] {
        let prefix = format!("ctl-track-{}", method.replace('+', "-"));
        let ctl = controller_with_settings(
            env,
            &prefix,
            json!({"application.resourceTrackingMethod": method}),
        )
        .await;
        let dest = env.namespace(&format!("dest-track-{}", method.replace('+', "-")));
        let repo = GitRepo::new();
        repo.commit(
            &[("app/cfg.yaml", configmap("cfg", json!({})))],
            "one object",
        );
        let name = app_name(&format!("track-{}", method.replace('+', "-")));
        create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
        let app = ctl.sync(&name, json!({})).await;
        assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
        let cfg = live(env, dest.name(), "configmap", "cfg").expect("synced");
        assert_eq!(
            cfg["metadata"]["labels"]["app.kubernetes.io/instance"].as_str() == Some(&name),
            label,
            "{method}: {:#}",
            cfg["metadata"]
        );
        assert_eq!(
            cfg["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"].is_string(),
            annotation,
            "{method}: {:#}",
            cfg["metadata"]
        );
        // The object is recognised as the Application's own: the comparison finds it in sync.
        ctl.wait_app(&name, "Synced", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    }
}

/// Found by the conformance harness: Argo CD lists an object marked `hook: Skip` in
/// `status.resources` (no status, no health, not a hook); Plumb left it out.
#[tokio::test]
async fn a_skipped_object_is_listed_without_status_and_never_applied() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-skip").await;
    let dest = env.namespace("dest-skip");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/cfg.yaml", configmap("cfg", json!({}))),
            (
                "app/skipped.yaml",
                configmap("skipped", json!({"argocd.argoproj.io/hook": "Skip"})),
            ),
        ],
        "one object and one skipped",
    );
    let name = app_name("skip");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        ["Sync ConfigMap/cfg Synced configmap/cfg created"]
    );
    let app = ctl
        .wait_app(&name, "compared after the sync", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    let skipped: Vec<&Value> = app["status"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["name"] == "skipped")
        .collect();
    assert_eq!(skipped.len(), 1, "{:#}", app["status"]["resources"]);
    assert_eq!(skipped[0]["kind"], "ConfigMap");
    assert_eq!(skipped[0]["namespace"], dest.name());
    for field in ["status", "health", "hook", "requiresPruning"] {
        assert!(skipped[0].get(field).is_none(), "{field}: {:#}", skipped[0]);
    }
    assert_eq!(live(env, dest.name(), "configmap", "skipped"), None);
}

/// Found by the conformance harness: Plumb dry-ran objects into the namespace a dry run does not
/// create and failed with `namespaces "…" not found`; Argo CD's dry-run sync passes them.
#[tokio::test]
async fn a_dry_run_into_a_namespace_it_would_create_succeeds_and_creates_nothing() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-dryrun-ns").await;
    let dest = format!("dry-ns-{}", std::process::id());
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/migrate.yaml",
                job(
                    "migrate",
                    json!({"argocd.argoproj.io/hook": "PreSync"}),
                    "registry.example/migrate:v1",
                ),
            ),
            ("app/cfg.yaml", configmap("cfg", json!({}))),
        ],
        "hook and configmap",
    );
    let name = app_name("dryrun-ns");
    create_app(
        &ctl,
        &name,
        &repo,
        &dest,
        json!({"syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}),
    )
    .await;

    let app = ctl.sync(&name, json!({"dryRun": true})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!("PreSync Namespace/{dest} Synced namespace/{dest} created (dry run)"),
            "PreSync Job/migrate Synced [PreSync/Succeeded] job.batch/migrate created (dry run)"
                .to_string(),
            "Sync ConfigMap/cfg Synced configmap/cfg created (dry run)".to_string(),
        ]
    );
    assert_eq!(
        phases(&app),
        [
            format!("Namespace/{dest} Succeeded"),
            "Job/migrate Succeeded".to_string(),
            "ConfigMap/cfg Succeeded".to_string(),
        ]
    );
    let ns = env
        .kubectl()
        .args([
            "get",
            "namespace",
            &dest,
            "--ignore-not-found",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl");
    assert!(
        String::from_utf8_lossy(&ns.stdout).trim().is_empty(),
        "a dry run created the namespace"
    );
}

#[tokio::test]
async fn fail_on_shared_resource_fails_before_any_change() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-shared").await;
    let dest = env.namespace("dest-shared");
    let first_repo = GitRepo::new();
    first_repo.commit(&[("app/shared.yaml", configmap("shared", json!({})))], "v1");
    let first = app_name("shared-a");
    create_app(&ctl, &first, &first_repo, dest.name(), json!({})).await;
    let app = ctl.sync(&first, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));

    let second_repo = GitRepo::new();
    second_repo.commit(
        &[
            ("app/shared.yaml", configmap("shared", json!({}))),
            ("app/own.yaml", configmap("own", json!({}))),
        ],
        "v1",
    );
    let second = app_name("shared-b");
    create_app(
        &ctl,
        &second,
        &second_repo,
        dest.name(),
        json!({"syncPolicy": {"syncOptions": ["FailOnSharedResource=true"]}}),
    )
    .await;
    let app = ctl.sync(&second, json!({})).await;
    assert_eq!(state(&app)["phase"], "Failed", "{:#}", state(&app));
    // Argo CD names this Application by its qualified name (`namespace/name`).
    let ns = app["metadata"]["namespace"].as_str().unwrap_or_default();
    let expected = format!(
        "Shared resource found: ConfigMap/shared is part of applications {ns}/{second} and {first}"
    );
    assert_eq!(state(&app)["message"], expected.as_str());
    assert_eq!(live(env, dest.name(), "configmap", "own"), None);
    let shared = live(env, dest.name(), "configmap", "shared").expect("shared");
    assert_eq!(
        shared["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        format!("{first}:/ConfigMap:{}/shared", dest.name())
    );
}

#[tokio::test]
async fn respect_ignore_differences_keeps_the_live_value_of_an_ignored_field() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-respect").await;
    let dest = env.namespace("dest-respect");
    let repo = GitRepo::new();
    repo.commit(&[("app/web.yaml", deployment("web", json!({})))], "v1");
    let name = app_name("respect");
    create_app(
        &ctl,
        &name,
        &repo,
        dest.name(),
        json!({
            "ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}],
            "syncPolicy": {"syncOptions": ["RespectIgnoreDifferences=true"]}
        }),
    )
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "scale",
            "deployment",
            "web",
            "--replicas=3",
        ],
    );

    // A change in Git is applied; the ignored field keeps its live value.
    repo.commit(
        &[(
            "app/web.yaml",
            deployment("web", json!({"team": "payments"})),
        )],
        "v2",
    );
    let app = ctl.sync(&name, json!({"revision": repo.head()})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        ["Sync Deployment/web Synced deployment.apps/web configured"]
    );
    let web = live(env, dest.name(), "deployment", "web").expect("deployment");
    assert_eq!(web["metadata"]["annotations"]["team"], "payments");
    assert_eq!(web["spec"]["replicas"], 3);

    // Without the option, Git's value wins.
    ctl.patch_app(&name, json!({"spec": {"syncPolicy": {"syncOptions": []}}}))
        .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    let web = live(env, dest.name(), "deployment", "web").expect("deployment");
    assert_eq!(web["spec"]["replicas"], 1);
}

#[tokio::test]
async fn prune_confirm_waits_for_the_deletion_approval() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-confirm").await;
    let dest = env.namespace("dest-confirm");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/keep.yaml", configmap("keep", json!({}))),
            (
                "app/guarded.yaml",
                configmap(
                    "guarded",
                    json!({"argocd.argoproj.io/sync-options": "Prune=confirm"}),
                ),
            ),
        ],
        "v1",
    );
    let name = app_name("confirm");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    repo.remove(&["app/guarded.yaml"], "v2");
    let messages = Messages::record(&ctl, &name).await;

    let who = ctl
        .request_op(
            &name,
            json!({"sync": {"prune": true, "revision": repo.head()}}),
        )
        .await;
    let waiting = "waiting for pruning confirmation of /ConfigMap/guarded";
    messages.wait_for(waiting, |m| m == waiting).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let app = serde_json::to_value(ctl.apps().get(&name).await.expect("get")).expect("json");
    assert_eq!(state(&app)["phase"], "Running", "{:#}", state(&app));
    assert_eq!(state(&app)["message"], waiting);
    assert!(live(env, dest.name(), "configmap", "guarded").is_some());

    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .expect("round");
    ctl.patch_app(
        &name,
        json!({"metadata": {"annotations": {"argocd.argoproj.io/deletion-approved": now.to_string()}}}),
    )
    .await;
    let app = ctl.wait_op(&name, &who).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            "Sync ConfigMap/guarded Pruned pruned",
            "Sync ConfigMap/keep Synced configmap/keep unchanged",
        ]
    );
    assert_eq!(live(env, dest.name(), "configmap", "guarded"), None);
}

#[tokio::test]
async fn replace_and_force_update_a_crd_in_place_and_keep_its_resources() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-crdreplace").await;
    let dest = env.namespace("dest-crdreplace");
    let group = format!("crdreplace.p{}.plumb.test", std::process::id());
    let crd_name = format!("gizmos.{group}");
    let _cleanup = DeleteCrd(env, crd_name.clone());
    let crd = |column: &str| {
        let mut crd = TestKind::crd(&group, "Gizmo", "gizmos");
        crd["metadata"]["annotations"] =
            json!({"argocd.argoproj.io/sync-options": "Replace=true,Force=true"});
        crd["spec"]["versions"][0]["additionalPrinterColumns"] =
            json!([{"name": column, "type": "integer", "jsonPath": ".spec.size"}]);
        serde_json::to_string_pretty(&crd).expect("json")
    };
    let gizmo = serde_json::to_string_pretty(&json!({
        "apiVersion": format!("{group}/v1"), "kind": "Gizmo",
        "metadata": {"name": "one"}, "spec": {"size": 1}
    }))
    .expect("json");
    let repo = GitRepo::new();
    repo.commit(
        &[("app/crd.yaml", crd("Size")), ("app/gizmo.yaml", gizmo)],
        "v1",
    );
    let name = app_name("crdreplace");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    let crd_before = live(env, "", "crd", &crd_name).expect("crd");
    let gizmo_before = live(env, dest.name(), &crd_name, "one").expect("gizmo");
    // The controller's live cache learns of the Gizmo the sync just created through its watch of
    // a kind only seconds old. A sync asked at this very instant can plan it from a cache that
    // has not heard of it yet, and reports `created` where the apply changed nothing (seen twice
    // in CI; the apply is right either way): let the watch deliver first.
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Replacing a CRD by deleting it would delete every resource of its kind: it is updated.
    repo.commit(&[("app/crd.yaml", crd("Capacity"))], "v2");
    let app = ctl.sync(&name, json!({"revision": repo.head()})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert_eq!(
        rows(&app),
        [
            format!(
                "Sync CustomResourceDefinition/{crd_name} Synced customresourcedefinition.apiextensions.k8s.io/{crd_name} replaced"
            ),
            format!("Sync Gizmo/one Synced gizmo.{group}/one unchanged"),
        ]
    );
    let crd_after = live(env, "", "crd", &crd_name).expect("crd");
    assert_eq!(uid(&crd_after), uid(&crd_before));
    assert_eq!(
        crd_after["spec"]["versions"][0]["additionalPrinterColumns"][0]["name"],
        "Capacity"
    );
    let gizmo_after = live(env, dest.name(), &crd_name, "one").expect("gizmo");
    assert_eq!(uid(&gizmo_after), uid(&gizmo_before));
}

#[tokio::test]
async fn terminate_stops_a_sync_held_by_a_resource_that_never_becomes_healthy() {
    let env = TestEnv::shared();
    let widgets = TestKind::install(env, "termgate", "Widget", "widgets");
    let ctl = controller(env, "ctl-termgate").await;
    let dest = env.namespace("dest-termgate");
    let repo = gated_repo(&widgets);
    widgets.create_with_status(dest.name(), "slow", "False", "Provisioning");
    let name = app_name("termgate");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let messages = Messages::record(&ctl, &name).await;

    let who = ctl.request_op(&name, json!({"sync": {}})).await;
    let waiting = format!("waiting for healthy state of {}/Widget/slow", widgets.group);
    messages.wait_for(&waiting, |m| m == waiting).await;
    let app = terminate(&ctl, &name, &who).await;
    // The resource was applied and stays so; it never finished.
    assert_eq!(
        rows(&app),
        [format!(
            "Sync Widget/slow Synced widget.{}/slow configured",
            widgets.group
        )]
    );
    assert_eq!(results(&app)[0]["finishedAt"], Value::Null);
    assert!(live(env, dest.name(), &widgets.resource(), "slow").is_some());
    assert_eq!(live(env, dest.name(), "configmap", "after"), None);
}

#[tokio::test]
async fn generate_name_hooks_get_a_name_per_operation_and_stay_apart() {
    let env = TestEnv::shared();
    let ctl = controller(env, "ctl-genname").await;
    let dest = env.namespace("dest-genname");
    let hook = |prefix: &str, phase: &str| {
        job(
            "PLACEHOLDER",
            json!({"argocd.argoproj.io/hook": phase}),
            "registry.example/tool:v1",
        )
        .replace(
            "  name: PLACEHOLDER\n",
            &format!("  generateName: {prefix}\n"),
        )
    };
    let repo = GitRepo::new();
    let head = repo.commit(
        &[
            ("app/migrate.yaml", hook("migrate-", "PreSync")),
            ("app/seed.yaml", hook("seed-", "PreSync")),
            ("app/settings.yaml", configmap("settings", json!({}))),
        ],
        "two generateName hooks",
    );
    let name = app_name("genname");
    create_app(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl
        .wait_app(&name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert!(
        app["status"]["conditions"].is_null(),
        "two generateName hooks of one kind compare without a conflict: {:#}",
        app["status"]["conditions"]
    );
    // As Argo CD: status.resources lists only hooks that exist, never a row named after the
    // prefix (an object that never exists).
    let resource_names = |app: &Value| -> Vec<String> {
        app["status"]["resources"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .map(|r| {
                        format!(
                            "{}/{}",
                            r["kind"].as_str().unwrap_or_default(),
                            r["name"].as_str().unwrap_or_default()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(resource_names(&app), ["ConfigMap/settings"]);

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    let started: jiff::Timestamp = state(&app)["startedAt"]
        .as_str()
        .expect("startedAt")
        .parse()
        .expect("time");
    let suffix = format!("{}-presync-{}", &head[..7], started.as_second());
    let migrate = format!("migrate-{suffix}");
    let seed = format!("seed-{suffix}");
    assert_eq!(
        rows(&app),
        [
            format!(
                "PreSync Job/{migrate} Synced [PreSync/Succeeded] Reached expected number of succeeded pods"
            ),
            format!(
                "PreSync Job/{seed} Synced [PreSync/Succeeded] Reached expected number of succeeded pods"
            ),
            "Sync ConfigMap/settings Synced configmap/settings created".to_string(),
        ]
    );
    let job = live(env, dest.name(), "job", &migrate).expect("the generated hook");
    assert_eq!(
        job["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        format!("{name}:batch/Job:{}/{migrate}", dest.name())
    );
    assert!(live(env, dest.name(), "job", &seed).is_some());
    let app = ctl
        .wait_app(&name, "compared after the sync", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    let names = resource_names(&app);
    assert!(
        !names
            .iter()
            .any(|n| n == "Job/migrate-" || n == "Job/seed-"),
        "{names:?}"
    );
    // As Argo CD (checked by the conformance harness): a hook whose name was generated is listed
    // but not marked requiresPruning (Argo's tracking id for it names no object).
    assert_eq!(
        resource_rows(&app),
        [
            "ConfigMap/settings hook=false requiresPruning=false".to_string(),
            format!("Job/{migrate} hook=true requiresPruning=false"),
            format!("Job/{seed} hook=true requiresPruning=false"),
        ]
    );

    // The next operation creates new hooks; the earlier ones stay (no BeforeHookCreation match).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    let jobs = kubectl(env, &["-n", dest.name(), "get", "jobs", "-o", "name"]);
    assert_eq!(
        jobs.lines()
            .filter(|l| l.starts_with("job.batch/migrate-"))
            .count(),
        2,
        "{jobs}"
    );
}

/// With one operation processor, a second sync waits (its state `Running`, nothing applied)
/// while the first holds the slot; a terminate request ends it without waiting for the slot,
/// and once the slot is free the next sync of that Application runs.
#[tokio::test]
async fn operations_beyond_the_operation_processors_wait_for_a_slot_and_can_be_terminated_meanwhile()
 {
    let env = TestEnv::shared();
    let ctl = Controlled::start_with(env, "ctl-opslots", |c| {
        c.sync_wave_delay = WAVE_DELAY;
        c.operation_processors = 1;
    })
    .await;
    let dest = env.namespace("dest-opslots");
    let holder_repo = GitRepo::new();
    holder_repo.commit(
        &[(
            "app/hold.yaml",
            stuck_job("hold", json!({"argocd.argoproj.io/hook": "PreSync"})),
        )],
        "a hook that never ends",
    );
    let waiter_repo = GitRepo::new();
    waiter_repo.commit(
        &[("app/queued.yaml", configmap("queued", json!({})))],
        "one ConfigMap",
    );
    let holder = app_name("opslots-holder");
    let waiter = app_name("opslots-waiter");
    create_app(&ctl, &holder, &holder_repo, dest.name(), json!({})).await;
    create_app(&ctl, &waiter, &waiter_repo, dest.name(), json!({})).await;
    let holder_messages = Messages::record(&ctl, &holder).await;

    let holder_who = ctl.request_op(&holder, json!({"sync": {}})).await;
    let waiting = "waiting for completion of hook batch/Job/hold";
    holder_messages.wait_for(waiting, |m| m == waiting).await;

    // The second sync is accepted and recorded `Running`, but applies nothing while the slot
    // is taken (unbounded, it would have created its ConfigMap within a second).
    let waiter_who = ctl.request_op(&waiter, json!({"sync": {}})).await;
    ctl.wait_app(&waiter, "its operation recorded Running", |a| {
        state(a)["phase"] == "Running"
            && state(a)["operation"]["initiatedBy"]["username"] == waiter_who.as_str()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(live(env, dest.name(), "configmap", "queued"), None);

    // Terminated while it waits: it ends at once, having applied nothing.
    let app = terminate(&ctl, &waiter, &waiter_who).await;
    assert!(results(&app).is_empty(), "{:#?}", results(&app));
    assert_eq!(live(env, dest.name(), "configmap", "queued"), None);

    // The holder ends; the slot is free for the next sync.
    terminate(&ctl, &holder, &holder_who).await;
    let app = ctl.sync(&waiter, json!({})).await;
    assert_eq!(state(&app)["phase"], "Succeeded", "{:#}", state(&app));
    assert!(live(env, dest.name(), "configmap", "queued").is_some());
}
