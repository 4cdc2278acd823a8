//! The watchers that feed the work queue: Applications (changes that need a reconcile, and the
//! control of a running operation), cluster Secrets (remote clusters attached and detached),
//! AppProjects, the settings ConfigMap, and the poller (`timeout.reconciliation` + jitter).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use plumb_kube::{LiveCacheConfig, LiveEvent};
use plumb_model::Settings;
use serde_json::Value;

use crate::shared::{RemoteCluster, Shared};
use plumb_app::appproject_resource;
use plumb_app::clusters::ClusterSecret;
use plumb_app::{Cluster, Engines};
use plumb_app::{Result, chain};

/// What about an Application makes a reconcile necessary (status writes alone do not).
#[derive(PartialEq, Eq, Clone)]
struct AppTrigger {
    generation: i64,
    refresh: Option<String>,
    operation: bool,
    deleting: bool,
}

fn trigger_of(obj: &DynamicObject) -> AppTrigger {
    AppTrigger {
        generation: obj.metadata.generation.unwrap_or_default(),
        refresh: obj
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(plumb_model::annotations::REFRESH))
            .cloned(),
        operation: obj.data.get("operation").is_some_and(|o| !o.is_null()),
        deleting: obj.metadata.deletion_timestamp.is_some(),
    }
}

/// What the watch caches keep of an Application or AppProject: all but `managedFields` and
/// kubectl's last-applied copy, which nothing here reads (with a status written many times, the
/// field ownership of `status` was the largest part of a cached Application; issue #17's memory
/// budget).
fn slim(obj: &mut DynamicObject) {
    obj.metadata.managed_fields = None;
    if let Some(a) = obj.metadata.annotations.as_mut() {
        a.remove(plumb_model::annotations::LAST_APPLIED);
    }
}

pub(super) fn spawn_app_watcher(shared: Arc<Shared>, cache: Writer<DynamicObject>) {
    tokio::spawn(async move {
        let mut apps = AppWatch::default();
        let stream = watcher::watcher(shared.apps_watch_api(), watcher::Config::default())
            .modify(slim)
            .reflect(cache);
        let mut stream = std::pin::pin!(stream);
        loop {
            match stream.try_next().await {
                Ok(Some(watcher::Event::Init)) => apps.relist_began(&shared),
                Ok(Some(watcher::Event::InitApply(obj))) => apps.applied(&shared, &obj, true),
                Ok(Some(watcher::Event::Apply(obj))) => apps.applied(&shared, &obj, false),
                Ok(Some(watcher::Event::Delete(obj))) => apps.deleted(&shared, &obj),
                Ok(Some(watcher::Event::InitDone)) => apps.relist_done(&shared),
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching Applications: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
}

/// What the Application watcher remembers between events.
#[derive(Default)]
struct AppWatch {
    /// The last trigger seen of each Application.
    last: HashMap<String, AppTrigger>,
    /// Keys listed by a (re)list: queued once the list is complete and in the cache.
    listed: Vec<String>,
}

impl AppWatch {
    /// A (re)list: the names that follow are the whole set.
    fn relist_began(&mut self, shared: &Shared) {
        shared.metrics.set_apps_synced(false);
        shared
            .memory
            .known_apps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.listed.clear();
    }

    /// An Application added or changed (`initial`: listed by a relist).
    fn applied(&mut self, shared: &Shared, obj: &DynamicObject, initial: bool) {
        let Some(name) = enabled_key(shared, obj) else {
            return;
        };
        shared
            .watched
            .saw(&name, obj.metadata.resource_version.as_deref());
        shared
            .memory
            .known_apps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.clone());
        place_on_shard(shared, &name, obj);
        if shared.operations.is_running(&name)
            && let Ok(v) = serde_json::to_value(obj)
        {
            shared
                .operations
                .update_control(&name, crate::operation::control_of(&v));
        }
        let t = trigger_of(obj);
        tracing::debug!(app = %name, generation = t.generation, operation = t.operation, "application event");
        if self.last.get(&name) == Some(&t) {
            return;
        }
        answer_refresh(shared, &name, obj, self.last.get(&name), &t);
        self.last.insert(name.clone(), t);
        if initial {
            // The cache shows a relist only once it is complete.
            self.listed.push(name);
        } else {
            shared.queue.push(&name);
        }
    }

    /// An Application gone: everything remembered of it is dropped.
    fn deleted(&mut self, shared: &Shared, obj: &DynamicObject) {
        let Some(name) = enabled_key(shared, obj) else {
            return;
        };
        self.last.remove(&name);
        shared.memory.forget_refresh(&name);
        shared.renderer.release(&name);
        if let Some(s) = &shared.sharding
            && s.remove_app(&name)
        {
            push_all(shared);
        }
        shared.watched.forget(&name);
        shared
            .memory
            .known_apps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&name);
        shared.metrics.remove_app(
            obj.metadata.namespace.as_deref().unwrap_or_default(),
            obj.metadata.name.as_deref().unwrap_or_default(),
        );
        shared.forget(&name);
    }

    /// A (re)list complete and in the cache: the listed Applications are queued.
    fn relist_done(&mut self, shared: &Shared) {
        shared.metrics.set_apps_synced(true);
        for name in self.listed.drain(..) {
            shared.queue.push(&name);
        }
    }
}

/// Tells the shard which cluster an Application deploys to.
fn place_on_shard(shared: &Shared, name: &str, obj: &DynamicObject) {
    if let Some(s) = &shared.sharding {
        let dest = &obj.data["spec"]["destination"];
        let text = |k: &str| dest[k].as_str().unwrap_or_default().to_string();
        if s.set_app(name, &text("server"), &text("name")) {
            // Consistent hashing weighs clusters by their Applications.
            push_all(shared);
        }
    }
}

/// A refresh asked for (the annotation set or changed since `before`), or a sync to the target
/// revision requested: the repository listings of the Application's sources are dropped.
fn answer_refresh(
    shared: &Shared,
    name: &str,
    obj: &DynamicObject,
    before: Option<&AppTrigger>,
    t: &AppTrigger,
) {
    let refreshed = t.refresh.is_some() && before.is_none_or(|l| l.refresh != t.refresh);
    let sync_to_latest = t.operation && before.is_none_or(|l| !l.operation) && syncs_to_target(obj);
    if refreshed {
        shared.memory.refresh_asked(name);
    }
    if refreshed || sync_to_latest {
        // A refresh (or a webhook) says the repository moved, and a sync of the target revision
        // (not a given commit) must see the latest commit: the shared ref listing is not good
        // enough for them.
        for url in source_urls(obj) {
            shared.renderer.invalidate_refs(&url);
        }
    }
}

/// Whether the requested operation syncs to the target revision rather than a given commit
/// (a manual sync without `--revision`; automated syncs name the commit they compared).
fn syncs_to_target(obj: &DynamicObject) -> bool {
    let Some(sync) = obj.data.get("operation").and_then(|o| o.get("sync")) else {
        return false;
    };
    let given = |v: Option<&Value>| match v {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    !given(sync.get("revision")) && !given(sync.get("revisions"))
}

/// The repository URLs of an Application's sources (`spec.source`, `spec.sources`).
fn source_urls(obj: &DynamicObject) -> Vec<String> {
    let spec = obj.data.get("spec");
    spec.and_then(|s| s.get("source"))
        .into_iter()
        .chain(
            spec.and_then(|s| s.get("sources"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .filter_map(|s| s.get("repoURL").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The queue key (`namespace/name`) of a watched Application, `None` for one in a namespace the
/// controller does not reconcile (a cluster-wide watch sees them all: they are left alone).
fn enabled_key(shared: &Shared, obj: &DynamicObject) -> Option<String> {
    let namespace = obj.metadata.namespace.as_deref().unwrap_or_default();
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    shared
        .namespace_enabled(namespace)
        .then(|| format!("{namespace}/{name}"))
}

/// Every Application the watcher knows of, from memory (no API request).
fn all_apps(shared: &Shared) -> Vec<String> {
    shared
        .memory
        .known_apps
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect()
}

/// Queues every Application the watcher knows of.
fn push_all(shared: &Shared) {
    for app in all_apps(shared) {
        shared.queue.push(&app);
    }
}

/// Connects to a cluster named by a cluster Secret and starts its live cache.
async fn attach(
    shared: &Arc<Shared>,
    secret: &ClusterSecret,
) -> Result<(Arc<Cluster>, tokio::task::JoinHandle<()>)> {
    // A namespaced cluster (`namespaces`, `clusterResources`): watched in those namespaces
    // only, and comparisons refuse what lies outside them.
    let scope = secret.cluster_scope()?;
    let client = secret.client().await?;
    let mut cluster = Cluster::connect(&secret.server, &secret.name, client.clone()).await?;
    cluster.scope = scope;
    let k8s_version = client
        .apiserver_version()
        .await
        .map(|v| v.git_version)
        .unwrap_or_default();
    shared
        .metrics
        .cluster(&secret.server, &secret.name, &k8s_version);
    let engines = shared.engines();
    let cfg = LiveCacheConfig::default()
        .tracking(engines.tracking.clone())
        .exclusions(engines.exclusions.clone())
        .cluster(secret.server.clone())
        .scope(cluster.scope.clone());
    let (reader, events) = plumb_kube::live_cache(client, &cluster.discovery.catalog(), cfg);
    cluster.live = Some(reader);
    let task = {
        let shared = shared.clone();
        let server = secret.server.clone();
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            while let Some(ev) = events.next().await {
                match ev {
                    Ok(LiveEvent::Changed(change)) => {
                        for app in change.managed {
                            shared.queue.push(&shared.key_of_instance(&app));
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(cluster = %server, "live cache: {}", chain(&e));
                        shared.clusters.rediscover.notify_one();
                    }
                }
            }
        })
    };
    Ok((Arc::new(cluster), task))
}

pub(super) fn spawn_cluster_watcher(shared: Arc<Shared>) {
    tokio::spawn(async move {
        let api: Api<Secret> =
            Api::namespaced(shared.client.clone(), &shared.config.control_namespace);
        let cfg = watcher::Config::default().labels(plumb_app::clusters::CLUSTER_SECRET_LABEL);
        let mut stream = std::pin::pin!(watcher::watcher(api, cfg));
        let mut known: HashMap<String, ClusterSecret> = HashMap::new();
        loop {
            let next = tokio::select! {
                next = tokio::time::timeout(RETRY_FAILED_CLUSTERS, stream.try_next()) => next,
                // `cluster.inClusterEnabled` may have changed.
                () = shared.clusters.settings_changed.notified() => Ok(Ok(Some(watcher::Event::InitDone))),
            };
            let changed = match next {
                Ok(Ok(Some(watcher::Event::InitDone))) => true,
                Ok(Ok(Some(event))) => note_cluster_secret(&mut known, event),
                Ok(Ok(None)) => return,
                Ok(Err(e)) => {
                    tracing::warn!("watching cluster Secrets: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    false
                }
                // Clusters that could not be connected are tried again (an exec plugin or an
                // API server that failed for a while).
                Err(_) => has_failed(&shared) || in_cluster_failed(&shared),
            };
            if changed {
                clusters_changed(&shared, &known).await;
            }
        }
    });
}

/// The cluster Secrets (or `cluster.inClusterEnabled`) changed: the in-cluster destination is
/// rebuilt if its scope changed, remote clusters attached and detached, and every Application
/// compared again.
async fn clusters_changed(shared: &Arc<Shared>, known: &HashMap<String, ClusterSecret>) {
    share_clusters(shared, known);
    let mut secrets: Vec<(&String, &ClusterSecret)> = known.iter().collect();
    secrets.sort_by_key(|(name, _)| *name);
    let secrets: Vec<ClusterSecret> = secrets.into_iter().map(|(_, c)| c.clone()).collect();
    *shared
        .clusters
        .secrets
        .write()
        .unwrap_or_else(|e| e.into_inner()) = secrets.clone();
    let enabled = crate::shared::in_cluster_enabled(&shared.engines().settings);
    let want = crate::shared::InClusterWant::of(enabled, &secrets);
    if let Err(e) = super::in_cluster::apply(shared, want).await {
        tracing::warn!(
            "cannot connect to the in-cluster destination: {}",
            chain(&e)
        );
    }
    // A Secret for the in-cluster URL configures the controller's own connection (above), it
    // adds no cluster. Attach the new clusters first, then swap: Applications on clusters that
    // stay never see their cluster missing while another one connects.
    let wanted: Vec<ClusterSecret> = secrets
        .into_iter()
        .filter(|s| !crate::shared::names_in_cluster(s))
        .collect();
    let fresh = attach_new(shared, &wanted).await;
    swap_remote(shared, &wanted, fresh);
    push_all(shared);
}

/// Whether the in-cluster destination is wanted but has no connection (tried again).
fn in_cluster_failed(shared: &Shared) -> bool {
    let state = shared
        .clusters
        .in_cluster
        .read()
        .unwrap_or_else(|e| e.into_inner());
    matches!(state.want, crate::shared::InClusterWant::Scoped(_)) && state.cluster.is_none()
}

/// How often clusters whose connection failed are tried again.
const RETRY_FAILED_CLUSTERS: Duration = Duration::from_secs(30);

fn has_failed(shared: &Shared) -> bool {
    !shared
        .clusters
        .failed
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty()
}

/// Keeps the cluster Secrets by name; whether the clusters they name changed.
fn note_cluster_secret(
    known: &mut HashMap<String, ClusterSecret>,
    event: watcher::Event<Secret>,
) -> bool {
    match event {
        watcher::Event::Apply(s) | watcher::Event::InitApply(s) => {
            let key = s.metadata.name.clone().unwrap_or_default();
            match ClusterSecret::from_secret(&s) {
                Some(c) if known.get(&key) != Some(&c) => {
                    known.insert(key, c);
                    true
                }
                Some(_) => false,
                None => known.remove(&key).is_some(),
            }
        }
        watcher::Event::Delete(s) => known
            .remove(&s.metadata.name.clone().unwrap_or_default())
            .is_some(),
        _ => false,
    }
}

/// Tells the shard which clusters there are.
fn share_clusters(shared: &Shared, known: &HashMap<String, ClusterSecret>) {
    if let Some(s) = &shared.sharding {
        s.set_clusters(
            known
                .values()
                .map(|c| {
                    (
                        c.name.clone(),
                        crate::sharding::ClusterRef {
                            id: c.id.clone(),
                            server: c.server.clone(),
                            shard: c.shard,
                        },
                    )
                })
                .collect(),
        );
    }
}

/// Connects to the wanted clusters not attached yet (one that fails is left out and logged).
async fn attach_new(shared: &Arc<Shared>, wanted: &[ClusterSecret]) -> Vec<RemoteCluster> {
    let to_attach: Vec<ClusterSecret> = {
        let attached = shared
            .clusters
            .remote
            .read()
            .unwrap_or_else(|e| e.into_inner());
        wanted
            .iter()
            .filter(|s| !attached.iter().any(|(a, _, _)| a == *s))
            .cloned()
            .collect()
    };
    let mut fresh = Vec::new();
    let mut failed = Vec::new();
    for s in to_attach {
        match attach(shared, &s).await {
            Ok((cluster, task)) => {
                tracing::info!(cluster = %s.server, name = %s.name, "destination cluster added");
                fresh.push((s, cluster, task));
            }
            Err(e) => {
                let why = chain(&e);
                tracing::warn!(cluster = %s.server, "cannot use cluster: {why}");
                failed.push((s, why));
            }
        }
    }
    *shared
        .clusters
        .failed
        .write()
        .unwrap_or_else(|e| e.into_inner()) = failed;
    fresh
}

/// Detaches the clusters no longer wanted (their live caches stopped) and adds the fresh ones.
fn swap_remote(shared: &Shared, wanted: &[ClusterSecret], fresh: Vec<RemoteCluster>) {
    let mut attached = shared
        .clusters
        .remote
        .write()
        .unwrap_or_else(|e| e.into_inner());
    attached.retain(|(s, _, task)| {
        let keep = wanted.contains(s);
        if !keep {
            task.abort();
        }
        keep
    });
    attached.extend(fresh);
}

pub(super) fn spawn_project_watcher(shared: Arc<Shared>, cache: Writer<DynamicObject>) {
    tokio::spawn(async move {
        let api: Api<DynamicObject> = Api::namespaced_with(
            shared.client.clone(),
            &shared.config.control_namespace,
            &appproject_resource(),
        );
        let mut stream = std::pin::pin!(
            watcher::watcher(api, watcher::Config::default())
                .modify(slim)
                .reflect(cache)
        );
        let mut seen: HashMap<String, i64> = HashMap::new();
        loop {
            match stream.try_next().await {
                Ok(Some(
                    watcher::Event::Apply(p)
                    | watcher::Event::InitApply(p)
                    | watcher::Event::Delete(p),
                )) => {
                    let name = p.metadata.name.clone().unwrap_or_default();
                    let generation = p.metadata.generation.unwrap_or_default();
                    if seen.insert(name, generation) == Some(generation) {
                        continue;
                    }
                    push_all(&shared);
                }
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching AppProjects: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
}

pub(super) fn spawn_settings_watcher(shared: Arc<Shared>) {
    tokio::spawn(async move {
        let api: Api<ConfigMap> =
            Api::namespaced(shared.client.clone(), &shared.config.control_namespace);
        let cfg = watcher::Config::default()
            .fields(&format!("metadata.name={}", shared.config.settings_name));
        let mut stream = std::pin::pin!(watcher::watcher(api, cfg));
        let mut current = shared.engines().settings.clone();
        loop {
            let data = match stream.try_next().await {
                Ok(Some(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm))) => {
                    Settings::from_data(cm.data.unwrap_or_default().into_iter().collect())
                }
                Ok(Some(watcher::Event::Delete(_))) => Settings::default(),
                Ok(Some(_)) => continue,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching settings: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if data == current {
                continue;
            }
            match Engines::new(
                data.clone(),
                &shared.config.control_namespace,
                &shared.config.customizations,
            ) {
                Ok(e) => {
                    plumb_app::render_settings::apply(
                        &shared.renderer,
                        &e.settings,
                        &crate::config::render_defaults(&shared.config),
                    );
                    *shared.engines.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(e);
                    current = data;
                    tracing::info!("settings reloaded");
                    shared.clusters.settings_changed.notify_one();
                    plumb_app::unenforced::log(&plumb_app::unenforced::in_settings(&current));
                    push_all(&shared);
                }
                Err(e) => tracing::error!(
                    "settings ConfigMap rejected, keeping the previous settings: {}",
                    chain(&e)
                ),
            }
        }
    });
}

/// Repository Secrets and `argocd-tls-certs-cm`: new credentials re-queue every Application (one
/// whose repository refused it may render now).
pub(super) fn spawn_repository_watcher(shared: Arc<Shared>) {
    let (client, ns, renderer) = (
        shared.client.clone(),
        shared.config.control_namespace.clone(),
        shared.renderer.clone(),
    );
    tokio::spawn(plumb_app::repositories::watch(
        client,
        ns,
        renderer,
        move || {
            push_all(&shared);
        },
    ));
}

/// `argocd-gpg-keys-cm`: new keys re-queue every Application (a revision refused for a key
/// not in the keyring may pass now, a removed key must refuse at once).
pub(super) fn spawn_gpg_keys_watcher(shared: Arc<Shared>) {
    let (client, ns, renderer) = (
        shared.client.clone(),
        shared.config.control_namespace.clone(),
        shared.renderer.clone(),
    );
    tokio::spawn(plumb_app::signatures::watch(
        client,
        ns,
        renderer,
        move || {
            push_all(&shared);
        },
    ));
}

pub(super) fn spawn_poller(shared: Arc<Shared>) {
    tokio::spawn(async move {
        let mut next: HashMap<String, Instant> = HashMap::new();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let interval = shared.poll_interval();
            if interval.is_zero() {
                continue;
            }
            let now = Instant::now();
            let apps = all_apps(&shared);
            next.retain(|k, _| apps.contains(k));
            for app in apps {
                let armed = now + interval + jitter_for(&app, shared.jitter());
                if poll_due(next.entry(app.clone()).or_insert(armed), now, armed) {
                    shared.queue.push(&app);
                }
            }
        }
    });
}

/// Whether an Application's poll is due at `now`; moves `due` to its next time. `armed` is when
/// a poll armed now would fall: a due time beyond it was armed with a longer
/// `timeout.reconciliation`, and a shortened one applies at once (as Argo compares the last
/// reconcile with the current timeout), not after the old interval ran out.
fn poll_due(due: &mut Instant, now: Instant, armed: Instant) -> bool {
    if *due > armed {
        *due = armed;
    }
    if *due <= now {
        *due = armed;
        return true;
    }
    false
}

/// A per-Application offset in `[0, jitter)` so polls spread out instead of arriving together.
fn jitter_for(app: &str, jitter: Duration) -> Duration {
    if jitter.is_zero() {
        return Duration::ZERO;
    }
    let mut h: u64 = 0xcbf29ce484222325;
    for b in app.bytes().chain(std::process::id().to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    Duration::from_millis(h % (jitter.as_millis().max(1) as u64))
}

/// Takes part in the shard Leases when several replicas share the work.
pub(super) fn spawn_shard_membership(shared: &Arc<Shared>) {
    if let Some(sharding) = shared.sharding.clone() {
        let s = shared.clone();
        crate::sharding::membership::spawn(
            shared.client.clone(),
            shared.config.control_namespace.clone(),
            sharding,
            move |lost| {
                if lost {
                    tracing::warn!("this replica lost its shard Lease: stopping its operations");
                    s.operations.terminate_all();
                }
                // Applications that changed hands are reconciled by their new owner now.
                push_all(&s);
            },
        );
    }
}

/// What discovery said about a cluster, to tell whether it changed: the group versions served
/// and those listed but unavailable.
fn served_state(catalog: &plumb_kube::ApiCatalog) -> (BTreeSet<String>, BTreeSet<String>) {
    (
        catalog
            .preferred()
            .map(|k| format!("{}/{}", k.resource.api_version, k.resource.kind))
            .collect(),
        catalog.unavailable().map(str::to_string).collect(),
    )
}

/// Runs API discovery again for every cluster, every `discovery_interval` and soon after a
/// watch fails. The catalog is built at start; without this an aggregated API whose backend
/// dies later kept its kinds and cached objects, and was compared as last seen (its objects
/// neither readable nor writable). With it, the group is marked unavailable, the comparison of
/// each Application using it fails with a `ComparisonError` naming it (nothing synced or
/// pruned), and it is compared again once the group is served. A change re-queues every
/// Application so the report does not wait for the next poll.
pub(super) fn spawn_rediscovery(shared: Arc<Shared>) {
    tokio::spawn(async move {
        // At most one extra run per this spacing however many watches fail.
        const MIN_SPACING: Duration = Duration::from_secs(2);
        let interval = shared.config.discovery_interval.max(MIN_SPACING);
        let mut last: HashMap<String, (BTreeSet<String>, BTreeSet<String>)> = HashMap::new();
        loop {
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = shared.clusters.rediscover.notified() => {
                    tokio::time::sleep(MIN_SPACING).await;
                }
            }
            let mut clusters: Vec<Arc<plumb_app::Cluster>> =
                shared.clusters.in_cluster().into_iter().collect();
            clusters.extend(
                shared
                    .clusters
                    .remote
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .map(|(_, c, _)| c.clone()),
            );
            let mut changed = false;
            for cluster in clusters {
                let before = served_state(&cluster.discovery.catalog());
                let catalog = match cluster.discovery.refresh().await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(cluster = %cluster.server, "discovery: {}", chain(&e));
                        continue;
                    }
                };
                let now = served_state(&catalog);
                let previous = last.insert(cluster.server.clone(), now.clone());
                if now != before || previous.is_some_and(|p| p != now) {
                    tracing::info!(
                        cluster = %cluster.server,
                        unavailable = ?now.1,
                        "API discovery changed; comparing every Application again"
                    );
                    changed = true;
                }
            }
            if changed {
                push_all(&shared);
            }
        }
    });
}

#[cfg(test)]
mod poll_tests {
    use super::*;

    #[test]
    fn jitter_stays_in_range() {
        for app in ["a", "payments-api", "x-very-long-name"] {
            assert!(jitter_for(app, Duration::from_secs(60)) < Duration::from_secs(60));
        }
        assert_eq!(jitter_for("a", Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_shortened_reconciliation_timeout_applies_at_once() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        // Armed under the default 120 s.
        let mut due = t0 + s(120);
        assert!(!poll_due(&mut due, t0 + s(1), t0 + s(121)));
        assert_eq!(due, t0 + s(120), "an unchanged interval keeps its time");
        // timeout.reconciliation becomes 2s at t0 + 10 s.
        assert!(!poll_due(&mut due, t0 + s(10), t0 + s(12)));
        assert_eq!(due, t0 + s(12));
        assert!(poll_due(&mut due, t0 + s(12), t0 + s(14)));
        assert_eq!(due, t0 + s(14), "re-armed with the new interval");
        // Lengthened again: the poll already armed stays, the next one takes the new interval.
        assert!(poll_due(&mut due, t0 + s(14), t0 + s(134)));
        assert_eq!(due, t0 + s(134));
    }
}
