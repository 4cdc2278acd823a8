//! The Applications and AppProjects as the controller's watches last saw them (kube-runtime
//! reflector stores), so a reconcile reads them from memory instead of a GET each. The
//! controller's own writes to an Application are remembered until its watch has shown them: a
//! reconcile never starts from a version older than one this process wrote (read your writes).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use plumb_app::{Error, Result};
use plumb_model::application::Application;

use plumb_app::{application_resource, appproject_resource};

/// How long a reconcile waits for the watch to show this process's last write before it reads
/// the Application from the API server instead.
const OWN_WRITE_WAIT: Duration = Duration::from_secs(2);
/// A write the watch never showed (a relist skipped that version) is forgotten after this.
const OWN_WRITE_TTL: Duration = Duration::from_secs(10);
/// How long a reconcile waits for the first list of Applications.
const READY_WAIT: Duration = Duration::from_secs(30);

/// What a cache says about an object.
pub(crate) enum Lookup {
    /// The object, as current as this process can know it.
    Found(Arc<DynamicObject>),
    /// Listed and not there: it does not exist.
    Missing,
    /// The cache cannot tell (not listed yet, or behind this process's own write): ask the API
    /// server.
    Unknown,
}

/// The watch-fed caches of Applications and AppProjects.
pub(crate) struct Watched {
    apps: Store<DynamicObject>,
    projects: Store<DynamicObject>,
    /// What this process wrote and what the watch showed, per Application.
    writes: Mutex<Writes>,
}

/// Per Application key: the resourceVersion this process last wrote (and when), until the watch
/// shows it; and the last few versions the watch showed (a write's answer may arrive after the
/// watch event of the same version).
#[derive(Default)]
struct Writes {
    pending: HashMap<String, (String, Instant)>,
    seen: HashMap<String, VecDeque<String>>,
}

/// How many versions per Application [`Writes::seen`] keeps.
const SEEN_KEPT: usize = 8;

impl Watched {
    /// The caches, with the writers the Application and AppProject watchers fill them through.
    pub(crate) fn new() -> (Self, Writer<DynamicObject>, Writer<DynamicObject>) {
        let apps = Writer::new(application_resource());
        let projects = Writer::new(appproject_resource());
        (
            Self {
                apps: apps.as_reader(),
                projects: projects.as_reader(),
                writes: Mutex::new(Writes::default()),
            },
            apps,
            projects,
        )
    }

    /// The Application `namespace/name`.
    pub(crate) async fn application(&self, key: &str) -> Lookup {
        let Some((namespace, name)) = key.split_once('/') else {
            return Lookup::Missing;
        };
        if !matches!(
            tokio::time::timeout(READY_WAIT, self.apps.wait_until_ready()).await,
            Ok(Ok(()))
        ) {
            return Lookup::Unknown;
        }
        let oref = ObjectRef::new_with(name, application_resource()).within(namespace);
        let started = Instant::now();
        loop {
            let cached = self.apps.get(&oref);
            if !self.behind(key) {
                return cached.map_or(Lookup::Missing, Lookup::Found);
            }
            if started.elapsed() >= OWN_WRITE_WAIT {
                return Lookup::Unknown;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The AppProject `name` of the control namespace (the only one projects live in).
    pub(crate) fn project(&self, control_namespace: &str, name: &str) -> Lookup {
        if !ready(&self.projects) {
            return Lookup::Unknown;
        }
        let oref = ObjectRef::new_with(name, appproject_resource()).within(control_namespace);
        match self.projects.get(&oref) {
            Some(p) => Lookup::Found(p),
            // A project created a moment ago may not have reached the watch: the caller asks.
            None => Lookup::Unknown,
        }
    }

    /// Records a write this process made to Application `key`, answered with `resource_version`.
    pub(crate) fn wrote(&self, key: &str, resource_version: Option<&str>) {
        let Some(rv) = resource_version else {
            return;
        };
        let mut w = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        if w.seen.get(key).is_some_and(|s| s.iter().any(|v| v == rv)) {
            return;
        }
        w.pending
            .insert(key.to_string(), (rv.to_string(), Instant::now()));
    }

    /// The Application watch delivered `resource_version` of `key`.
    pub(crate) fn saw(&self, key: &str, resource_version: Option<&str>) {
        let Some(rv) = resource_version else {
            return;
        };
        let mut w = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        if w.pending.get(key).is_some_and(|(p, _)| p == rv) {
            w.pending.remove(key);
        }
        let seen = w.seen.entry(key.to_string()).or_default();
        seen.push_back(rv.to_string());
        if seen.len() > SEEN_KEPT {
            seen.pop_front();
        }
    }

    /// Forgets a deleted Application.
    pub(crate) fn forget(&self, key: &str) {
        let mut w = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        w.pending.remove(key);
        w.seen.remove(key);
    }

    /// Whether this process wrote `key` more recently than its watch has shown.
    fn behind(&self, key: &str) -> bool {
        let mut w = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        match w.pending.get(key) {
            Some((_, at)) if at.elapsed() < OWN_WRITE_TTL => true,
            Some(_) => {
                w.pending.remove(key);
                false
            }
            None => false,
        }
    }
}

/// Whether a store has finished its first list.
fn ready(store: &Store<DynamicObject>) -> bool {
    // `wait_until_ready` resolves at once on a ready store.
    futures::FutureExt::now_or_never(store.wait_until_ready()).is_some_and(|r| r.is_ok())
}

/// The Application as the watch last saw it (the API server's copy when the watch cannot tell);
/// `None` once it is gone.
pub(crate) async fn read_app(
    watched: &Watched,
    api: Api<DynamicObject>,
    key: &str,
) -> Result<Option<Application>> {
    let Some((_, name)) = key.split_once('/') else {
        return Ok(None);
    };
    let obj = match watched.application(key).await {
        Lookup::Found(obj) => obj,
        Lookup::Missing => return Ok(None),
        Lookup::Unknown => {
            match api.get_opt(name).await.map_err(|source| Error::Api {
                what: format!("reading Application {key}"),
                source: Box::new(source),
            })? {
                Some(obj) => Arc::new(obj),
                None => return Ok(None),
            }
        }
    };
    application_of(&obj, key).map(Some)
}

/// The typed Application of an object the API server returned.
pub(crate) fn application_of(obj: &DynamicObject, key: &str) -> Result<Application> {
    serde_json::to_value(obj)
        .and_then(serde_json::from_value)
        .map_err(|e| Error::InvalidApplication {
            name: key.to_string(),
            reason: e.to_string(),
        })
}
