//! A generator's template override merged over `spec.template` as Argo's
//! `mergeGeneratorTemplate` does with `mergo.Merge(override, base)` (no `WithOverride`): the base
//! fills whatever the override leaves empty, field by field and map key by map key (own code:
//! mergo's notion of "empty" is what users rely on).
//!
//! Empty, as in Go: absent, `null`, `""`, `false`, `0`, an empty list. Lists and `valuesObject`
//! (a `runtime.RawExtension`, bytes to mergo) are taken whole, never merged element by element.
//! Consequence kept from Argo: an override cannot turn a base `true` into `false`.

use plumb_model::applicationset::{ApplicationSetTemplate, ApplicationSetTemplateMeta};
use serde_json::Value;

/// The template for one generator: its override, filled from `base`.
pub(crate) fn generator_template(
    over: Option<&ApplicationSetTemplate>,
    base: &ApplicationSetTemplate,
) -> ApplicationSetTemplate {
    let Some(over) = over else {
        return base.clone();
    };
    let mut spec = over.spec.clone();
    fill(&mut spec, &base.spec, "");
    ApplicationSetTemplate {
        metadata: fill_metadata(&over.metadata, &base.metadata),
        spec,
    }
}

fn fill_metadata(
    over: &ApplicationSetTemplateMeta,
    base: &ApplicationSetTemplateMeta,
) -> ApplicationSetTemplateMeta {
    let text = |o: &Option<String>, b: &Option<String>| match o {
        Some(s) if !s.is_empty() => o.clone(),
        _ => b.clone(),
    };
    let map = |o: &Option<std::collections::BTreeMap<String, String>>,
               b: &Option<std::collections::BTreeMap<String, String>>| {
        let mut out = o.clone().unwrap_or_default();
        for (k, v) in b.iter().flatten() {
            let entry = out.entry(k.clone()).or_default();
            if entry.is_empty() {
                entry.clone_from(v);
            }
        }
        (o.is_some() || b.is_some()).then_some(out)
    };
    ApplicationSetTemplateMeta {
        name: text(&over.name, &base.name),
        namespace: text(&over.namespace, &base.namespace),
        labels: map(&over.labels, &base.labels),
        annotations: map(&over.annotations, &base.annotations),
        finalizers: match &over.finalizers {
            Some(f) if !f.is_empty() => over.finalizers.clone(),
            _ => base.finalizers.clone(),
        },
    }
}

/// Fills the empty parts of `dst` from `src`; `key` is `dst`'s key in its parent.
fn fill(dst: &mut Value, src: &Value, key: &str) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) if key != "valuesObject" => {
            for (k, sv) in s {
                match d.get_mut(k) {
                    Some(dv) => fill(dv, sv, k),
                    None => {
                        d.insert(k.clone(), sv.clone());
                    }
                }
            }
        }
        (dst, src) => {
            if is_empty(dst) && !is_empty(src) {
                *dst = src.clone();
            }
        }
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(v: Value) -> ApplicationSetTemplate {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_override_wins_where_set_and_the_base_fills_the_rest() {
        // Argo's applicationset/examples/template-override: the list generator's template names
        // a different path; everything else comes from spec.template.
        let base = template(json!({
            "metadata": {"name": "{{cluster}}-guestbook", "labels": {"a": "1", "b": ""}},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://github.com/infra-team/cluster-deployments.git",
                                "targetRevision": "HEAD", "path": "guestbook/{{cluster}}"},
                     "destination": {"server": "{{url}}", "namespace": "guestbook"},
                     "syncPolicy": {"automated": {"prune": true}},
                     "info": [{"name": "a", "value": "b"}]}
        }));
        let over = template(json!({
            "metadata": {"labels": {"b": "2"}},
            "spec": {"project": "", "source": {"path": "{{cluster}}-override"},
                     "syncPolicy": {"automated": {"prune": false}},
                     "info": [{"name": "c", "value": "d"}]}
        }));
        let merged = generator_template(Some(&over), &base);
        assert_eq!(
            merged.metadata.name.as_deref(),
            Some("{{cluster}}-guestbook")
        );
        let labels = merged.metadata.labels.unwrap_or_default();
        assert_eq!(labels.get("a").map(String::as_str), Some("1"));
        assert_eq!(labels.get("b").map(String::as_str), Some("2"));
        assert_eq!(
            merged.spec,
            json!({"project": "default",
                   "source": {"repoURL": "https://github.com/infra-team/cluster-deployments.git",
                              "targetRevision": "HEAD", "path": "{{cluster}}-override"},
                   "destination": {"server": "{{url}}", "namespace": "guestbook"},
                   "syncPolicy": {"automated": {"prune": true}},
                   "info": [{"name": "c", "value": "d"}]})
        );
    }

    #[test]
    fn values_object_is_taken_whole() {
        let base =
            template(json!({"spec": {"source": {"helm": {"valuesObject": {"a": 1, "b": 2}}}}}));
        let over = template(json!({"spec": {"source": {"helm": {"valuesObject": {"c": 3}}}}}));
        let merged = generator_template(Some(&over), &base);
        assert_eq!(
            merged.spec["source"]["helm"]["valuesObject"],
            json!({"c": 3})
        );
    }
}
