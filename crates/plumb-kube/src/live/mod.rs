//! The live cache of one cluster: list+watch of every listable kind (minus noisy kinds and
//! `resource.exclusions`; for a namespaced cluster, namespaced kinds in each managed namespace
//! only and cluster-scoped kinds only with `clusterResources`, [`ClusterScope`]), full objects only for tracked objects, minimal metadata (key, uid,
//! resourceVersion, owner references, tracking) for the rest, and indexes by Application, owner
//! and namespace so a reconcile never scans the whole cache.
//!
//! [`live_cache`] returns a reader and a stream. The stream does all the work (watching, storing)
//! and yields which Applications' objects changed; the caller decides where it runs (R10): this
//! crate spawns no task.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), plumb_kube::Error> {
//! use futures::StreamExt;
//! let discovery = plumb_kube::ApiDiscovery::new(client.clone()).await?;
//! let (reader, events) = plumb_kube::live_cache(client, &discovery.catalog(), plumb_kube::LiveCacheConfig::default());
//! tokio::spawn(events.for_each(|event| async move {
//!     if let Ok(plumb_kube::LiveEvent::Changed(change)) = event {
//!         println!("{} changed; refresh {:?}", change.key, change.managed);
//!     }
//! }));
//! let objects = reader.app_objects("payments-api");
//! # let _ = objects; Ok(()) }
//! ```

mod crds;
mod filter;
mod lists;
mod object;
pub(crate) mod store;
mod tracking;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::stream::{BoxStream, SelectAll};
use futures::{Stream, StreamExt};
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use plumb_model::{GroupKind, ResourceKey};

pub use filter::{ExclusionRule, NOISY_KINDS};
pub use tracking::{TrackedBy, Tracking, TrackingMethod, tracking_id};

use crate::discovery::{ApiCatalog, ApiKind};
use crate::error::{Error, Result};
use crate::scope::{ClusterScope, WatchTarget};
use lists::Lists;
pub use object::{AppChange, LiveEvent, LiveObject, OwnerRef};
pub use store::Store;

/// Live cache options.
#[derive(Debug, Clone)]
pub struct LiveCacheConfig {
    /// How objects are attributed to Applications.
    pub tracking: Tracking,
    /// `resource.exclusions` rules.
    pub exclusions: Vec<ExclusionRule>,
    /// The cluster's URL, matched by the rules' `clusters`.
    pub cluster: String,
    /// What part of the cluster is listed and watched.
    pub scope: ClusterScope,
}

impl Default for LiveCacheConfig {
    fn default() -> Self {
        Self {
            tracking: Tracking::default(),
            exclusions: Vec::new(),
            cluster: "https://kubernetes.default.svc".to_string(),
            scope: ClusterScope::whole_cluster(),
        }
    }
}

impl LiveCacheConfig {
    /// Sets the tracking method.
    pub fn tracking(mut self, tracking: Tracking) -> Self {
        self.tracking = tracking;
        self
    }

    /// Sets the exclusion rules.
    pub fn exclusions(mut self, exclusions: Vec<ExclusionRule>) -> Self {
        self.exclusions = exclusions;
        self
    }

    /// Sets the cluster URL.
    pub fn cluster(mut self, cluster: impl Into<String>) -> Self {
        self.cluster = cluster.into();
        self
    }

    /// Sets the namespaces watched (a namespaced cluster).
    pub fn scope(mut self, scope: ClusterScope) -> Self {
        self.scope = scope;
        self
    }
}

/// Read access to the live cache; cheap to clone.
#[derive(Debug, Clone)]
pub struct LiveCacheReader {
    store: Arc<RwLock<Store>>,
    kinds: Arc<RwLock<BTreeSet<GroupKind>>>,
    /// Watched kinds whose initial list has not finished (shared with the writer).
    pending: Arc<RwLock<HashSet<GroupKind>>>,
}

impl LiveCacheReader {
    fn read(&self) -> RwLockReadGuard<'_, Store> {
        // The writer never panics while holding the lock except on a bug; the data is still whole.
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Objects tracked by an Application, ordered by key.
    pub fn app_objects(&self, app: &str) -> Vec<Arc<LiveObject>> {
        self.read().app_objects(app)
    }

    /// One object.
    pub fn get(&self, key: &ResourceKey) -> Option<Arc<LiveObject>> {
        self.read().get(key)
    }

    /// Objects owned by the object with this uid, ordered by key.
    pub fn children(&self, uid: &str) -> Vec<Arc<LiveObject>> {
        self.read().children(uid)
    }

    /// Objects in a namespace (`""` for cluster-scoped), ordered by key.
    pub fn namespace_objects(&self, namespace: &str) -> Vec<Arc<LiveObject>> {
        self.read().namespace_objects(namespace)
    }

    /// Number of objects cached.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the cache holds the complete list of a kind: it is watched and its initial list
    /// finished. Only then does an object's absence from the cache mean absence in the cluster
    /// (a kind whose list keeps failing, as for an aggregated API that does not answer, is
    /// watched but never synced).
    pub fn is_synced(&self, gk: &GroupKind) -> bool {
        self.kinds
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(gk)
            && !self
                .pending
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(gk)
    }

    /// The kinds being watched, including kinds whose CRDs appeared since the cache started.
    pub fn watched_kinds(&self) -> Vec<GroupKind> {
        self.kinds
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// Whether a watch failed because the API server does not serve the kind (404 Not Found).
fn is_not_found(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => matches!(e, kube::Error::Api(s) if s.code == 404),
        watcher::Error::WatchError(s) => s.code == 404,
        _ => false,
    }
}

fn key_of(kind: &ApiKind, obj: &DynamicObject) -> ResourceKey {
    ResourceKey::new(
        kind.resource.group.clone(),
        kind.resource.kind.clone(),
        obj.metadata.namespace.clone().unwrap_or_default(),
        obj.metadata.name.clone().unwrap_or_default(),
    )
}

type KindEvent = (
    Arc<ApiKind>,
    WatchTarget,
    Result<WatchEvent<DynamicObject>, watcher::Error>,
);

/// Starts a live cache over the listable kinds of `catalog`. Nothing happens until the returned
/// stream is polled; poll it for as long as the cache is needed.
pub fn live_cache(
    client: Client,
    catalog: &ApiCatalog,
    config: LiveCacheConfig,
) -> (
    LiveCacheReader,
    impl Stream<Item = Result<LiveEvent>> + Send + 'static,
) {
    let kinds: Vec<Arc<ApiKind>> = catalog
        .listable()
        .filter(|k| filter::is_watched(&k.group_kind(), &config.cluster, &config.exclusions))
        .filter(|k| !config.scope.watch_targets(k.namespaced).is_empty())
        .map(|k| Arc::new(k.clone()))
        .collect();
    let store = Arc::new(RwLock::new(Store::default()));
    let watched = Arc::new(RwLock::new(kinds.iter().map(|k| k.group_kind()).collect()));
    let pending = Arc::new(RwLock::new(kinds.iter().map(|k| k.group_kind()).collect()));
    let reader = LiveCacheReader {
        store: store.clone(),
        kinds: watched.clone(),
        pending: pending.clone(),
    };
    let mut state = State {
        store,
        client,
        config,
        watched,
        stops: HashMap::new(),
        not_found: HashSet::new(),
        pending,
        lists: Lists::default(),
        ready_sent: false,
        out: VecDeque::new(),
        watches: SelectAll::new(),
    };
    for kind in kinds {
        state.start_watch(kind);
    }
    let stream = futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.out.pop_front() {
                return Some((item, state));
            }
            let (kind, target, event) = state.watches.next().await?;
            state.step(&kind, &target, event);
        }
    });
    (reader, stream)
}

/// One list+watch of a kind, over the whole cluster or in one namespace.
fn watch_kind(
    client: Client,
    kind: Arc<ApiKind>,
    target: WatchTarget,
    stop: Arc<AtomicBool>,
) -> BoxStream<'static, KindEvent> {
    let api: Api<DynamicObject> = match &target {
        WatchTarget::AllNamespaces => Api::all_with(client, &kind.resource),
        WatchTarget::Namespace(ns) => Api::namespaced_with(client, ns, &kind.resource),
    };
    watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        // A stopped kind (its CRD was deleted) ends its stream instead of retrying forever.
        .take_while(move |_| futures::future::ready(!stop.load(Ordering::Relaxed)))
        .map(move |event| (kind.clone(), target.clone(), event))
        .boxed()
}

/// One kind's watch.
struct Watch {
    /// Set to end the watch's stream.
    stop: Arc<AtomicBool>,
    /// The name a CRD defining the kind would have (`<plural>.<group>`).
    crd_name: String,
}

/// The writer side: applies watch events to the store and queues what to yield.
struct State {
    store: Arc<RwLock<Store>>,
    client: Client,
    config: LiveCacheConfig,
    /// Kinds being watched (shared with readers).
    watched: Arc<RwLock<BTreeSet<GroupKind>>>,
    /// The watches, per kind.
    stops: HashMap<GroupKind, Watch>,
    /// Watched kinds whose last list or watch the API server answered with 404 Not Found: a
    /// kind whose CRD is gone, or one whose CRD is so new that it is not served yet.
    not_found: HashSet<GroupKind>,
    watches: SelectAll<BoxStream<'static, KindEvent>>,
    /// Kinds whose initial list has not finished (shared with readers).
    pending: Arc<RwLock<HashSet<GroupKind>>>,
    /// The (re)lists in progress, per kind and namespace.
    lists: Lists,
    ready_sent: bool,
    out: VecDeque<Result<LiveEvent>>,
}

impl State {
    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    fn pending(&self) -> RwLockReadGuard<'_, HashSet<GroupKind>> {
        self.pending.read().unwrap_or_else(|e| e.into_inner())
    }

    fn pending_mut(&self) -> RwLockWriteGuard<'_, HashSet<GroupKind>> {
        self.pending.write().unwrap_or_else(|e| e.into_inner())
    }

    fn step(
        &mut self,
        kind: &ApiKind,
        target: &WatchTarget,
        event: Result<WatchEvent<DynamicObject>, watcher::Error>,
    ) {
        let gk = kind.group_kind();
        let event = match event {
            Ok(event) => event,
            Err(source) => {
                let not_found = is_not_found(&source);
                self.out.push_back(Err(Error::Watch {
                    gk: gk.clone(),
                    source: Box::new(source),
                }));
                if not_found && self.not_found.insert(gk.clone()) {
                    self.drop_if_undefined(&gk);
                }
                return;
            }
        };
        self.not_found.remove(&gk);
        let initial = self.lists.is_initial(&gk, target);
        let crd_kind = crds::is_crd_kind(kind);
        if crd_kind {
            self.crd_event(&event);
        }
        match event {
            WatchEvent::Apply(obj) => {
                let change = self.write().upsert(kind, obj, &self.config.tracking);
                self.notify(change);
            }
            WatchEvent::Delete(obj) => {
                let change = self.write().remove(&key_of(kind, &obj));
                self.notify(change);
            }
            WatchEvent::Init => self.lists.begins(&gk, target),
            WatchEvent::InitApply(obj) => {
                self.lists.shows(&gk, target, key_of(kind, &obj));
                let change = self.write().upsert(kind, obj, &self.config.tracking);
                if !initial {
                    self.notify(change);
                }
            }
            WatchEvent::InitDone => {
                let (stale, synced) = self.lists.done(&gk, target, self.read_kind_keys(&gk));
                for key in &stale {
                    let change = self.write().remove(key);
                    self.notify(change);
                }
                if synced && self.pending_mut().remove(&gk) {
                    self.out.push_back(Ok(LiveEvent::KindSynced(gk)));
                }
                if crd_kind {
                    // CRDs deleted while their list was redone left no delete event behind.
                    for crd in &stale {
                        if let Some(gk) = self.kind_defined_by(&crd.name) {
                            self.drop_kind(&gk);
                        }
                    }
                    for gk in self.not_found.clone() {
                        self.drop_if_undefined(&gk);
                    }
                }
                self.send_ready_when_complete();
            }
        }
    }

    /// Sends `Ready` once, when no watched kind is still waiting for its initial list.
    fn send_ready_when_complete(&mut self) {
        if !self.ready_sent && self.pending().is_empty() {
            self.ready_sent = true;
            self.out.push_back(Ok(LiveEvent::Ready));
        }
    }

    /// The watched kind a CRD of this name defines.
    fn kind_defined_by(&self, crd_name: &str) -> Option<GroupKind> {
        self.stops
            .iter()
            .find(|(_, w)| w.crd_name == crd_name)
            .map(|(gk, _)| gk.clone())
    }

    /// Drops a kind the API server does not know (404) when the complete list of CRDs has no
    /// CRD for it: its CRD was deleted before the CRD list was taken, so no delete event will
    /// come, and waiting for its list would keep the cache from ever being complete. A kind whose
    /// CRD is listed keeps being retried (a new CRD is served a moment after it is Established);
    /// so does one served otherwise (an aggregated API), and every kind while the CRDs' own list
    /// is incomplete or not watched.
    fn drop_if_undefined(&mut self, gk: &GroupKind) {
        let crds = GroupKind::new("apiextensions.k8s.io", "CustomResourceDefinition");
        if !self.stops.contains_key(&crds) || self.pending().contains(&crds) {
            return;
        }
        let Some(crd_name) = self.stops.get(gk).map(|w| w.crd_name.clone()) else {
            return;
        };
        let crd_key = ResourceKey::new(crds.group, crds.kind, "", crd_name);
        let defined = self
            .store
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&crd_key)
            .is_some();
        if !defined {
            tracing::debug!(%gk, "kind not found and no CRD defines it: no longer watching it");
            self.drop_kind(gk);
        }
    }

    /// Stops watching a kind and forgets its objects.
    fn drop_kind(&mut self, gk: &GroupKind) {
        let Some(watch) = self.stops.remove(gk) else {
            return;
        };
        watch.stop.store(true, Ordering::Relaxed);
        self.not_found.remove(gk);
        // Objects go before the kind leaves the watched set: a reader that sees the kind
        // unwatched must not still find its objects.
        for key in self.read_kind_keys(gk) {
            let change = self.write().remove(&key);
            self.notify(change);
        }
        self.watched
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(gk);
        self.lists.forget(gk);
        self.pending_mut().remove(gk);
        self.send_ready_when_complete();
    }

    /// Starts a kind's list+watch in each place the scope names.
    fn start_watch(&mut self, kind: Arc<ApiKind>) {
        let targets = self.config.scope.watch_targets(kind.namespaced);
        self.lists.started(&kind.group_kind(), &targets);
        let stop = Arc::new(AtomicBool::new(false));
        let crd_name = format!("{}.{}", kind.resource.plural, kind.resource.group);
        self.stops.insert(
            kind.group_kind(),
            Watch {
                stop: stop.clone(),
                crd_name,
            },
        );
        for target in targets {
            self.watches.push(watch_kind(
                self.client.clone(),
                kind.clone(),
                target,
                stop.clone(),
            ));
        }
    }

    /// Starts watching kinds of newly Established CRDs; stops watching kinds of deleted ones.
    fn crd_event(&mut self, event: &WatchEvent<DynamicObject>) {
        match event {
            WatchEvent::Apply(crd) | WatchEvent::InitApply(crd) => {
                let Some(kind) = crds::served_kind(crd) else {
                    return;
                };
                let gk = kind.group_kind();
                if self.stops.contains_key(&gk)
                    || !filter::is_watched(&gk, &self.config.cluster, &self.config.exclusions)
                    || self.config.scope.watch_targets(kind.namespaced).is_empty()
                {
                    return;
                }
                tracing::debug!(%gk, "CRD established: watching its kind");
                self.watched
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(gk.clone());
                self.pending_mut().insert(gk);
                self.start_watch(Arc::new(kind));
            }
            WatchEvent::Delete(crd) => {
                let Some(gk) = crds::defined_group_kind(crd) else {
                    return;
                };
                if self.stops.contains_key(&gk) {
                    tracing::debug!(%gk, "CRD deleted: no longer watching its kind");
                    self.drop_kind(&gk);
                }
            }
            _ => {}
        }
    }

    fn read_kind_keys(&self, gk: &GroupKind) -> Vec<ResourceKey> {
        self.store
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .kind_keys(gk)
    }

    fn notify(&mut self, change: Option<AppChange>) {
        if let Some(change) = change
            && (!change.managed.is_empty() || !change.tree.is_empty())
        {
            self.out.push_back(Ok(LiveEvent::Changed(change)));
        }
    }
}
