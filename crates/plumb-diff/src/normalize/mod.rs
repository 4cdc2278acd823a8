//! Normalizers: what never counts as drift, applied to both sides before anything is compared.
//!
//! In order: server-managed metadata is dropped ([`SERVER_FIELDS`]); `status` is dropped per
//! `resource.compareoptions` `ignoreResourceStatusField`; empty `labels`/`annotations` maps are
//! dropped (Argo strips them too); Secret `stringData` is folded into `data` and a `null` value
//! reads as `""`; for built-in kinds an empty list reads as `null` and `null` fields are dropped
//! just before the comparison ([`settle_nulls`], `empty`), and with
//! `ignoreAggregatedRoles` an aggregated role's `rules`; integral floats become integers so `1`
//! equals `1.0`. Plumb's tracking annotation (and label, with label
//! tracking) is copied from live onto the desired side, as Argo does, so it shows on both sides
//! and never as a difference. Ignore rules run after this (`ignore`).

mod empty;
mod secret;

use plumb_model::GroupKind;
use plumb_model::annotations::TRACKING_ID;
use serde_json::{Map, Number, Value};

/// `metadata` fields the API server owns.
pub const SERVER_FIELDS: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
];

/// `resource.compareoptions` `ignoreResourceStatusField`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StatusField {
    /// `status` never counts (Argo's default since 3.0).
    #[default]
    All,
    /// `status` of CustomResourceDefinition objects does not count.
    Crd,
    /// `status` counts like any field (`none`, `off`, `false`).
    None,
}

impl StatusField {
    /// Reads the setting's value (`all`, `crd`, `none`/`off`/`false`).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Some(Self::All),
            "crd" => Some(Self::Crd),
            "none" | "off" | "false" => Some(Self::None),
            _ => None,
        }
    }
}

/// What the normalizers need to know.
#[derive(Debug, Clone, Default)]
pub struct NormalizeOptions {
    /// Which `status` fields to drop.
    pub status: StatusField,
    /// The label used for tracking, when label tracking is on (`app.kubernetes.io/instance`).
    pub tracking_label: Option<String>,
    /// `resource.compareoptions` `ignoreAggregatedRoles`: an aggregated Role's or ClusterRole's
    /// `rules` do not count.
    pub ignore_aggregated_roles: bool,
}

/// Normalizes one object in place (used on desired, live, last-applied and predicted objects).
pub fn normalize(obj: &mut Value, opts: &NormalizeOptions) {
    let gk = GroupKind::of(obj);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for f in SERVER_FIELDS {
            meta.remove(*f);
        }
        for f in ["labels", "annotations"] {
            if meta
                .get(f)
                .is_some_and(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
            {
                meta.remove(f);
            }
        }
    }
    let drop_status = match opts.status {
        StatusField::All => true,
        StatusField::Crd => {
            gk.group == "apiextensions.k8s.io" && gk.kind == "CustomResourceDefinition"
        }
        StatusField::None => false,
    };
    if drop_status && let Some(map) = obj.as_object_mut() {
        map.remove("status");
    }
    if gk.group.is_empty() && gk.kind == "Secret" {
        secret::fold_string_data(obj);
    }
    if opts.ignore_aggregated_roles
        && gk.group == "rbac.authorization.k8s.io"
        && (gk.kind == "ClusterRole" || gk.kind == "Role")
    {
        empty::drop_aggregated_rules(obj);
    }
    if empty::is_builtin_group(&gk.group) {
        empty::empty_lists_to_null(obj);
    }
    integral_floats_to_ints(obj);
}

/// For built-in kinds, drops `null` fields of an object about to be compared (after the merge,
/// where a `null` in desired has done its work of deleting the field).
pub fn settle_nulls(gk: &GroupKind, obj: &mut Value) {
    if empty::is_builtin_group(&gk.group) {
        empty::drop_null_fields(obj);
    }
}

/// Copies the tracking annotation (and label) of `live` onto `desired`, or drops them from
/// `desired` when live has none, so they never show as a difference.
pub fn align_tracking(desired: &mut Value, live: &Value, opts: &NormalizeOptions) {
    align_meta_key(desired, live, "annotations", TRACKING_ID);
    if let Some(label) = &opts.tracking_label {
        align_meta_key(desired, live, "labels", label);
    }
}

fn align_meta_key(desired: &mut Value, live: &Value, map_name: &str, key: &str) {
    let live_value = live
        .get("metadata")
        .and_then(|m| m.get(map_name))
        .and_then(|m| m.get(key))
        .cloned();
    let Some(meta) = desired.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match live_value {
        Some(v) => {
            let map = meta
                .entry(map_name)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(map) = map.as_object_mut() {
                map.insert(key.to_string(), v);
            }
        }
        None => {
            if let Some(map) = meta.get_mut(map_name).and_then(Value::as_object_mut) {
                map.remove(key);
                if map.is_empty() {
                    meta.remove(map_name);
                }
            }
        }
    }
}

/// `1.0` and `1` are the same number to Kubernetes; serde_json says they differ.
pub(crate) fn integral_floats_to_ints(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                // Exact below 2^53.
                #[allow(clippy::cast_possible_truncation)]
                let i = f as i64;
                *n = Number::from(i);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_ints),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_ints),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_fields_and_status_dropped() {
        let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "uid": "u",
            "resourceVersion": "9", "generation": 2, "creationTimestamp": "2026-07-20T10:00:00Z",
            "managedFields": [], "selfLink": "/x", "labels": {}, "annotations": null}, "status": {"x": 1}});
        normalize(&mut o, &NormalizeOptions::default());
        assert_eq!(
            o,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        );
    }

    #[test]
    fn status_modes() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "status": {"a": 1}});
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": {"a": 1}});
        let opts = NormalizeOptions {
            status: StatusField::Crd,
            ..Default::default()
        };
        let (mut c, mut d) = (crd.clone(), deploy.clone());
        normalize(&mut c, &opts);
        normalize(&mut d, &opts);
        assert!(c.get("status").is_none());
        assert!(d.get("status").is_some());
        let opts = NormalizeOptions {
            status: StatusField::None,
            ..Default::default()
        };
        let mut c = crd.clone();
        normalize(&mut c, &opts);
        assert!(c.get("status").is_some());
        assert_eq!(StatusField::parse("off"), Some(StatusField::None));
        assert_eq!(StatusField::parse("bogus"), None);
    }

    #[test]
    fn numbers_by_value() {
        let mut a = json!({"spec": {"replicas": 3.0, "ratio": 0.5, "list": [1.0]}});
        normalize(&mut a, &NormalizeOptions::default());
        assert_eq!(
            a,
            json!({"spec": {"replicas": 3, "ratio": 0.5, "list": [1]}})
        );
        assert!(a["spec"]["replicas"].is_i64());
    }

    #[test]
    fn tracking_annotation_and_label_follow_live() {
        let live = json!({"metadata": {"annotations": {TRACKING_ID: "app:apps/Deployment:ns/a"}, "labels": {"app.kubernetes.io/instance": "app"}}});
        let mut desired = json!({"metadata": {"name": "a"}});
        let opts = NormalizeOptions {
            tracking_label: Some("app.kubernetes.io/instance".into()),
            ..Default::default()
        };
        align_tracking(&mut desired, &live, &opts);
        assert_eq!(
            desired["metadata"]["annotations"][TRACKING_ID],
            "app:apps/Deployment:ns/a"
        );
        assert_eq!(
            desired["metadata"]["labels"]["app.kubernetes.io/instance"],
            "app"
        );
        let mut desired = json!({"metadata": {"annotations": {TRACKING_ID: "other"}}});
        align_tracking(&mut desired, &json!({"metadata": {}}), &opts);
        assert_eq!(desired, json!({"metadata": {}}));
    }
}
