//! The Applications the server serves, kept in memory by one watch, as Argo CD's API server
//! answers from its informer (`appLister`): the list and get routes read it instead of asking
//! the API server for every request (a list of 1,000 Applications from etcd costs the API
//! server most of a second).
//!
//! Read-your-writes: a write the server makes (create, update, patch, delete, sync, rollback,
//! terminate, refresh) answers only once the cache holds it (bounded by [`WRITE_VISIBLE`]), so a
//! read through the server after its answer sees the write. Changes made elsewhere (kubectl,
//! the controller) appear as soon as the watch delivers them, usually within milliseconds.
//!
//! kube-runtime's watcher lists, watches, relists after a gap and backs off; the map is kept
//! here rather than in kube's reflector store because the list wants its items in Argo's order
//! and as JSON, and writers need to be told when their version arrived.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::error::{Error, Result};

/// How long a write waits for the cache to hold it before answering anyway (a watch that is
/// reconnecting; the write is done either way).
const WRITE_VISIBLE: Duration = Duration::from_secs(10);
/// How long a read waits for the first list after the server started.
const FIRST_LIST: Duration = Duration::from_secs(30);

/// Where an Application sits in the list: the control namespace first, then by namespace and
/// name (the order the list route has always answered in).
type Key = (bool, String, String);

/// A cached Application: its JSON as the API server returned it, with `apiVersion` and `kind`.
pub(crate) type Cached = Arc<Value>;

/// The served Applications and how far the watch has come.
pub(crate) struct AppCache {
    control: String,
    /// `--application-namespaces` patterns: other namespaces whose Applications are served.
    patterns: Vec<String>,
    state: RwLock<State>,
    /// Bumped after every change, so waiters look again.
    changes: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    /// The first list is in.
    ready: bool,
    /// The watch failed (an API server restart, a dropped connection) and nothing has arrived
    /// since: changes made meanwhile may be missing, so reads go to the API server until the
    /// watch delivers again.
    interrupted: bool,
    objects: BTreeMap<Key, Cached>,
    /// The map being rebuilt by a (re)list, between the watcher's `Init` and `InitDone`.
    relisting: Option<BTreeMap<Key, Cached>>,
    /// The highest resourceVersion applied: every change to a served Application up to it is
    /// in `objects` (one watch delivers events in resourceVersion order).
    version: u64,
}

impl State {
    fn holds(&self, key: &Key, rv: &str) -> bool {
        let cached = self.objects.get(key).map(|v| resource_version(v));
        match parse(rv) {
            Some(n) => self.version >= n || cached.and_then(parse).is_some_and(|c| c >= n),
            // Kubernetes calls resourceVersions opaque; one that is not a number is compared
            // for equality.
            None => cached == Some(rv),
        }
    }
}

fn parse(rv: &str) -> Option<u64> {
    rv.parse().ok()
}

fn resource_version(v: &Value) -> &str {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl AppCache {
    /// An empty cache of the Applications of `control` and of the namespaces `patterns` permit;
    /// [`AppCache::feed`] fills it.
    pub(crate) fn new(control: String, patterns: Vec<String>) -> Self {
        Self {
            control,
            patterns,
            state: RwLock::default(),
            changes: watch::Sender::new(0),
        }
    }

    /// The Applications API the cache watches: the control namespace, or every namespace (then
    /// filtered) when others are served.
    pub(crate) fn api(&self, client: kube::Client) -> Api<DynamicObject> {
        let resource = plumb_app::application_resource();
        if self.patterns.is_empty() {
            Api::namespaced_with(client, &self.control, &resource)
        } else {
            Api::all_with(client, &resource)
        }
    }

    /// Keeps the cache current; runs until the task is aborted.
    pub(crate) async fn feed(self: Arc<Self>, api: Api<DynamicObject>) {
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => self.apply(event),
                Err(e) => {
                    tracing::warn!("watching Applications for the server's cache: {e}");
                    self.interrupt();
                }
            }
        }
    }

    fn interrupt(&self) {
        self.state
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .interrupted = true;
    }

    fn served(&self, namespace: &str) -> bool {
        namespace == self.control
            || plumb_policy::project::namespace_in_list(&self.patterns, namespace)
    }

    fn key(&self, namespace: &str, name: &str) -> Key {
        (
            namespace != self.control,
            namespace.to_string(),
            name.to_string(),
        )
    }

    /// The key and JSON of a watched object, `None` for a namespace the server does not serve.
    fn entry(&self, obj: &DynamicObject) -> Option<(Key, Cached)> {
        let ns = obj.metadata.namespace.as_deref().unwrap_or_default();
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        if !self.served(ns) {
            return None;
        }
        let mut value = match serde_json::to_value(obj) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!("caching Application {ns}/{name}: {e}");
                return None;
            }
        };
        // List items from some API servers lack their type.
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| json!(plumb_model::application::API_VERSION));
            map.entry("kind")
                .or_insert_with(|| json!(plumb_model::application::Application::KIND));
        }
        Some((self.key(ns, name), Arc::new(value)))
    }

    fn apply(&self, event: Event<DynamicObject>) {
        let version_of = |obj: &DynamicObject| {
            obj.metadata
                .resource_version
                .as_deref()
                .and_then(parse)
                .unwrap_or(0)
        };
        {
            let mut st = self.state.write().unwrap_or_else(|p| p.into_inner());
            match event {
                Event::Init => st.relisting = Some(BTreeMap::new()),
                Event::InitApply(obj) => {
                    if let Some((key, value)) = self.entry(&obj) {
                        st.relisting.get_or_insert_default().insert(key, value);
                    }
                }
                Event::InitDone => {
                    if let Some(listed) = st.relisting.take() {
                        let newest = listed
                            .values()
                            .filter_map(|v| parse(resource_version(v)))
                            .max()
                            .unwrap_or(0);
                        st.version = st.version.max(newest);
                        st.objects = listed;
                    }
                    st.ready = true;
                    st.interrupted = false;
                }
                Event::Apply(obj) => {
                    st.interrupted = false;
                    st.version = st.version.max(version_of(&obj));
                    if let Some((key, value)) = self.entry(&obj) {
                        st.objects.insert(key, value);
                    }
                }
                Event::Delete(obj) => {
                    st.interrupted = false;
                    st.version = st.version.max(version_of(&obj));
                    let ns = obj.metadata.namespace.as_deref().unwrap_or_default();
                    let name = obj.metadata.name.as_deref().unwrap_or_default();
                    st.objects.remove(&self.key(ns, name));
                }
            }
        }
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (at most `bound`) until `done` holds; whether it does.
    async fn wait_until(&self, bound: Duration, done: impl Fn(&State) -> bool) -> bool {
        let mut changes = self.changes.subscribe();
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            if done(&self.read()) {
                return true;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return done(&self.read()),
            }
        }
    }

    async fn ready(&self) -> Result<()> {
        if self.wait_until(FIRST_LIST, |st| st.ready).await {
            Ok(())
        } else {
            Err(Error::Internal(format!(
                "the server's list of Applications in namespace {} is not loaded yet; try again",
                self.control
            )))
        }
    }

    /// Whether the cache, once loaded, lost its watch and has not heard from it since: reads
    /// then go to the API server (before the first list they wait for it instead).
    pub(crate) fn is_interrupted(&self) -> bool {
        let st = self.read();
        st.ready && st.interrupted
    }

    /// Every served Application, in list order, and the resourceVersion up to which the cache
    /// is complete (the list's `metadata.resourceVersion`; `None` before any change).
    pub(crate) async fn list(&self) -> Result<(Option<String>, Vec<Cached>)> {
        self.ready().await?;
        let st = self.read();
        let version = (st.version > 0).then(|| st.version.to_string());
        Ok((version, st.objects.values().cloned().collect()))
    }

    /// The Application `name` of `namespace`, if the cache holds it.
    pub(crate) async fn get(&self, namespace: &str, name: &str) -> Result<Option<Cached>> {
        self.ready().await?;
        Ok(self.read().objects.get(&self.key(namespace, name)).cloned())
    }

    /// Waits (bounded) until the cache holds `written`, the object a write of the server
    /// returned, or something newer.
    pub(crate) async fn written(&self, written: &DynamicObject) {
        let ns = written.metadata.namespace.as_deref().unwrap_or_default();
        let name = written.metadata.name.as_deref().unwrap_or_default();
        let Some(rv) = written.metadata.resource_version.as_deref() else {
            return;
        };
        if !self.served(ns) {
            return;
        }
        let key = self.key(ns, name);
        if !self
            .wait_until(WRITE_VISIBLE, |st| st.ready && st.holds(&key, rv))
            .await
        {
            tracing::warn!(
                "the server's cache did not see Application {ns}/{name} at resourceVersion {rv} within {WRITE_VISIBLE:?}; answering anyway"
            );
        }
    }

    /// Waits (bounded) until the cache no longer holds the Application `name` of `namespace`,
    /// which the server deleted.
    pub(crate) async fn deleted(&self, namespace: &str, name: &str) {
        let key = self.key(namespace, name);
        if !self
            .wait_until(WRITE_VISIBLE, |st| {
                st.ready && !st.objects.contains_key(&key)
            })
            .await
        {
            tracing::warn!(
                "the server's cache still holds the deleted Application {namespace}/{name} after {WRITE_VISIBLE:?}; answering anyway"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(ns: &str, name: &str, rv: &str) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
            "spec": {"project": "default"}
        }))
        .expect("object")
    }

    fn names(cache: &AppCache) -> Vec<String> {
        cache
            .read()
            .objects
            .values()
            .map(|v| {
                format!(
                    "{}/{}@{}",
                    v["metadata"]["namespace"].as_str().unwrap_or_default(),
                    v["metadata"]["name"].as_str().unwrap_or_default(),
                    resource_version(v)
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn a_relist_replaces_the_map_and_events_after_it_apply_in_order() {
        let cache = AppCache::new("argocd".into(), vec!["team-*".into()]);
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("team-b", "web", "7")));
        cache.apply(Event::InitApply(app("argocd", "zeta", "5")));
        cache.apply(Event::InitApply(app("elsewhere", "x", "9")));
        cache.apply(Event::InitApply(app("argocd", "alpha", "3")));
        assert!(!cache.read().ready, "not ready before InitDone");
        cache.apply(Event::InitDone);
        // The control namespace first, then others by namespace; unserved namespaces left out.
        assert_eq!(
            names(&cache),
            ["argocd/alpha@3", "argocd/zeta@5", "team-b/web@7"]
        );
        let (version, items) = cache.list().await.expect("ready");
        assert_eq!(version.as_deref(), Some("7"));
        assert_eq!(items[0]["kind"], "Application");

        cache.apply(Event::Apply(app("argocd", "alpha", "12")));
        cache.apply(Event::Delete(app("team-b", "web", "13")));
        assert_eq!(names(&cache), ["argocd/alpha@12", "argocd/zeta@5"]);
        assert_eq!(cache.read().version, 13);

        // A relist after a gap: what is gone from it is gone from the cache.
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("argocd", "zeta", "20")));
        assert_eq!(
            names(&cache),
            ["argocd/alpha@12", "argocd/zeta@5"],
            "the old map serves until the relist is done"
        );
        cache.apply(Event::InitDone);
        assert_eq!(names(&cache), ["argocd/zeta@20"]);
        assert_eq!(cache.read().version, 20);
    }

    #[tokio::test]
    async fn a_write_waits_until_the_cache_holds_its_version() {
        let cache = Arc::new(AppCache::new("argocd".into(), Vec::new()));
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("argocd", "api", "10")));
        cache.apply(Event::InitDone);
        let waiting = {
            let cache = cache.clone();
            tokio::spawn(async move { cache.written(&app("argocd", "api", "15")).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "version 15 is not in yet");
        // Another object's newer event proves everything up to 16 was delivered.
        cache.apply(Event::Apply(app("argocd", "other", "16")));
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the wait ends once the cache passed the version")
            .expect("joined");

        let gone = {
            let cache = cache.clone();
            tokio::spawn(async move { cache.deleted("argocd", "api").await })
        };
        tokio::task::yield_now().await;
        assert!(!gone.is_finished(), "api is still cached");
        cache.apply(Event::Delete(app("argocd", "api", "17")));
        tokio::time::timeout(Duration::from_secs(5), gone)
            .await
            .expect("the wait ends once it is gone")
            .expect("joined");
        assert_eq!(cache.get("argocd", "api").await.expect("ready"), None);
    }

    #[tokio::test]
    async fn a_failed_watch_sends_reads_to_the_api_server_until_it_delivers_again() {
        let cache = AppCache::new("argocd".into(), vec![]);
        cache.interrupt();
        assert!(
            !cache.is_interrupted(),
            "before the first list, reads wait for it"
        );
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("argocd", "api", "10")));
        cache.apply(Event::InitDone);
        assert!(!cache.is_interrupted());
        cache.interrupt();
        assert!(cache.is_interrupted());
        // A watch resumed from its resourceVersion delivers no Init: its next event is the sign.
        cache.apply(Event::Apply(app("argocd", "other", "11")));
        assert!(!cache.is_interrupted());
        cache.interrupt();
        cache.apply(Event::Delete(app("argocd", "other", "12")));
        assert!(!cache.is_interrupted());
        // A relist (410 Gone) is whole only at InitDone.
        cache.interrupt();
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("argocd", "api", "13")));
        assert!(cache.is_interrupted());
        cache.apply(Event::InitDone);
        assert!(!cache.is_interrupted());
    }

    #[test]
    fn opaque_versions_are_compared_for_equality() {
        let cache = AppCache::new("argocd".into(), Vec::new());
        cache.apply(Event::Init);
        cache.apply(Event::InitApply(app("argocd", "api", "abc")));
        cache.apply(Event::InitDone);
        let st = cache.read();
        let key = cache.key("argocd", "api");
        assert!(st.holds(&key, "abc"));
        assert!(!st.holds(&key, "abd"));
    }
}
