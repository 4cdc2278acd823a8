//! Which Application an object belongs to: Argo CD's resource tracking
//! (`util/argo/resource_tracking.go`). The default is the `argocd.argoproj.io/tracking-id`
//! annotation, `<app>:<group>/<kind>:<namespace>/<name>`; label tracking uses
//! `application.instanceLabelKey` (default `app.kubernetes.io/instance`).

use std::collections::BTreeMap;

use plumb_model::ResourceKey;
use plumb_model::annotations::{DEFAULT_INSTANCE_LABEL, TRACKING_ID};

/// `application.resourceTrackingMethod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrackingMethod {
    /// The tracking-id annotation (Argo's default since 3.0).
    #[default]
    Annotation,
    /// The instance label.
    Label,
    /// The annotation tracks; the label is informational.
    AnnotationAndLabel,
}

impl TrackingMethod {
    /// Parses the argocd-cm value (`annotation`, `label`, `annotation+label`).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "" | "annotation" => Some(Self::Annotation),
            "label" => Some(Self::Label),
            "annotation+label" => Some(Self::AnnotationAndLabel),
            _ => None,
        }
    }
}

/// How objects are attributed to Applications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracking {
    /// The method.
    pub method: TrackingMethod,
    /// The label key label tracking reads.
    pub instance_label: String,
}

impl Default for Tracking {
    fn default() -> Self {
        Self {
            method: TrackingMethod::Annotation,
            instance_label: DEFAULT_INSTANCE_LABEL.to_string(),
        }
    }
}

/// The Application an object is tracked by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedBy {
    /// Application instance name (`<name>`, or `<namespace>_<name>` outside the control namespace).
    pub app: String,
    /// False when the tracking id names another object (it was copied, e.g. by a controller
    /// cloning a template): Argo shows such objects but never syncs or prunes them.
    pub self_referencing: bool,
}

impl Tracking {
    /// The Application tracking an object, from its annotations and labels.
    pub fn tracked_by(
        &self,
        key: &ResourceKey,
        annotations: Option<&BTreeMap<String, String>>,
        labels: Option<&BTreeMap<String, String>>,
    ) -> Option<TrackedBy> {
        match self.method {
            TrackingMethod::Annotation | TrackingMethod::AnnotationAndLabel => {
                let id = annotations?.get(TRACKING_ID)?;
                parse_tracking_id(id, key)
            }
            TrackingMethod::Label => {
                let app = labels?.get(&self.instance_label)?;
                (!app.is_empty()).then(|| TrackedBy {
                    app: app.clone(),
                    self_referencing: true,
                })
            }
        }
    }
}

/// The tracking-id annotation value for an object of an Application whose destination namespace
/// is `dest_ns`. A cluster-scoped object carries the destination namespace, as Argo CD writes it
/// (`UnstructuredToAppInstanceValue` defaults the namespace): an Application adopted from Argo CD
/// must find its ClusterRoles' and Namespaces' annotations already as it would write them.
pub fn tracking_id(app: &str, key: &ResourceKey, dest_ns: &str) -> String {
    let namespace = if key.namespace.is_empty() {
        dest_ns
    } else {
        &key.namespace
    };
    format!("{app}:{}/{}:{namespace}/{}", key.group, key.kind, key.name)
}

fn parse_tracking_id(id: &str, key: &ResourceKey) -> Option<TrackedBy> {
    let (app, rest) = id.split_once(':')?;
    if app.is_empty() {
        return None;
    }
    let self_referencing = rest
        .split_once(':')
        .and_then(|(gk, nn)| Some((gk.split_once('/')?, nn.split_once('/')?)))
        .is_some_and(|((group, kind), (namespace, name))| {
            // Cluster-scoped objects carry their Application's destination namespace: any
            // namespace matches them, as in Argo CD's isSelfReferencedObj.
            group == key.group
                && kind == key.kind
                && (namespace == key.namespace || key.namespace.is_empty())
                && name == key.name
        });
    Some(TrackedBy {
        app: app.to_string(),
        self_referencing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn annotation_tracking_reads_the_app_and_checks_self_reference() {
        let key = ResourceKey::new("apps", "Deployment", "payments", "payments-api");
        let id = tracking_id("payments-api", &key, "elsewhere");
        assert_eq!(id, "payments-api:apps/Deployment:payments/payments-api");
        let t = Tracking::default();
        let by = t
            .tracked_by(&key, Some(&map(&[(TRACKING_ID, &id)])), None)
            .unwrap();
        assert_eq!(
            by,
            TrackedBy {
                app: "payments-api".into(),
                self_referencing: true
            }
        );

        let copied = ResourceKey::new("apps", "Deployment", "payments", "payments-api-canary");
        let by = t
            .tracked_by(&copied, Some(&map(&[(TRACKING_ID, &id)])), None)
            .unwrap();
        assert!(!by.self_referencing);
        // The label alone does not track under annotation tracking.
        assert_eq!(
            t.tracked_by(&key, None, Some(&map(&[(DEFAULT_INSTANCE_LABEL, "x")]))),
            None
        );
    }

    #[test]
    fn core_and_cluster_scoped_ids() {
        let cm = ResourceKey::new("", "ConfigMap", "payments", "settings");
        assert_eq!(
            tracking_id("app", &cm, "elsewhere"),
            "app:/ConfigMap:payments/settings"
        );
        // What Argo CD v3.6.1's UnstructuredToAppInstanceValue gives a Namespace of an Application
        // whose destination namespace is `payments`.
        let ns = ResourceKey::new("", "Namespace", "", "payments");
        let id = tracking_id("team_app", &ns, "payments");
        assert_eq!(id, "team_app:/Namespace:payments/payments");
        assert_eq!(tracking_id("a", &ns, ""), "a:/Namespace:/payments");
        for written in [
            id.as_str(),
            "team_app:/Namespace:/payments",
            "team_app:/Namespace:other/payments",
        ] {
            let by = Tracking::default()
                .tracked_by(&ns, Some(&map(&[(TRACKING_ID, written)])), None)
                .unwrap();
            assert_eq!(by.app, "team_app");
            assert!(by.self_referencing, "{written}");
        }
        let copied = Tracking::default()
            .tracked_by(
                &ns,
                Some(&map(&[(TRACKING_ID, "team_app:/Namespace:payments/other")])),
                None,
            )
            .unwrap();
        assert!(!copied.self_referencing);
    }

    #[test]
    fn label_tracking_uses_the_configured_key() {
        let t = Tracking {
            method: TrackingMethod::parse("label").unwrap(),
            instance_label: "team/app".into(),
        };
        let key = ResourceKey::new("", "Service", "web", "web");
        let by = t
            .tracked_by(&key, None, Some(&map(&[("team/app", "web")])))
            .unwrap();
        assert_eq!(by.app, "web");
        assert_eq!(
            t.tracked_by(&key, None, Some(&map(&[(DEFAULT_INSTANCE_LABEL, "web")]))),
            None
        );
        assert_eq!(
            TrackingMethod::parse("annotation+label"),
            Some(TrackingMethod::AnnotationAndLabel)
        );
        assert_eq!(TrackingMethod::parse("labels"), None);
    }
}
