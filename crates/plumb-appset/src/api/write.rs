//! Reading and writing ApplicationSets as Argo's `ApplicationSetService` does: create, the
//! idempotent re-create, upsert (spec, labels, annotations and finalizers; labels and
//! annotations merged), delete.

use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use plumb_model::applicationset::ApplicationSet;

use super::{ApiError, to_set};

fn encode(set: &ApplicationSet) -> Result<DynamicObject, ApiError> {
    let mut value = serde_json::to_value(set)
        .map_err(|e| ApiError::Invalid(format!("encoding ApplicationSet {}: {e}", set.name())))?;
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            plumb_model::application::API_VERSION.into(),
        );
        map.insert("kind".into(), plumb_model::applicationset::KIND.into());
    }
    serde_json::from_value(value)
        .map_err(|e| ApiError::Invalid(format!("encoding ApplicationSet {}: {e}", set.name())))
}

/// The ApplicationSet `name` of `api`'s namespace, if it exists.
pub async fn get(api: &Api<DynamicObject>, name: &str) -> Result<Option<ApplicationSet>, ApiError> {
    let found = api
        .get_opt(name)
        .await
        .map_err(|e| ApiError::kube(format!("reading ApplicationSet {name}"), e))?;
    found.as_ref().map(to_set).transpose()
}

/// Argo's "act idempotent if existing spec matches new spec": spec, labels, annotations and
/// finalizers equal (an empty map is no map).
pub fn same_spec(existing: &ApplicationSet, new: &ApplicationSet) -> bool {
    fn map<T: Clone>(
        m: &Option<std::collections::BTreeMap<String, T>>,
    ) -> Option<Vec<(String, T)>> {
        m.as_ref()
            .filter(|m| !m.is_empty())
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
    let (a, b) = (&existing.metadata, &new.metadata);
    existing.spec == new.spec
        && map(&a.labels) == map(&b.labels)
        && map(&a.annotations) == map(&b.annotations)
        && a.finalizers.as_ref().filter(|f| !f.is_empty())
            == b.finalizers.as_ref().filter(|f| !f.is_empty())
}

/// Creates `set` (its status dropped).
pub async fn create(
    api: &Api<DynamicObject>,
    set: &ApplicationSet,
) -> Result<ApplicationSet, ApiError> {
    let mut set = set.clone();
    set.status = None;
    let created = api
        .create(&PostParams::default(), &encode(&set)?)
        .await
        .map_err(|e| ApiError::kube(format!("creating ApplicationSet {}", set.name()), e))?;
    to_set(&created)
}

/// Replaces the spec and finalizers of `existing` with `new`'s, with labels and annotations
/// merged (`merge`, as Argo's upsert) or replaced; retried on conflicts as Argo retries.
pub async fn update(
    api: &Api<DynamicObject>,
    existing: ApplicationSet,
    new: &ApplicationSet,
    merge: bool,
) -> Result<ApplicationSet, ApiError> {
    let name = new.name().to_string();
    let mut current = existing;
    for _ in 0..10 {
        current.spec = new.spec.clone();
        let meta = &mut current.metadata;
        if merge {
            for (mine, theirs) in [
                (&mut meta.labels, &new.metadata.labels),
                (&mut meta.annotations, &new.metadata.annotations),
            ] {
                if let Some(theirs) = theirs {
                    mine.get_or_insert_with(Default::default)
                        .extend(theirs.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        } else {
            meta.labels = new.metadata.labels.clone();
            meta.annotations = new.metadata.annotations.clone();
        }
        meta.finalizers = new.metadata.finalizers.clone();
        match api
            .replace(&name, &PostParams::default(), &encode(&current)?)
            .await
        {
            Ok(updated) => return to_set(&updated),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                current = get(api, &name).await?.ok_or_else(|| {
                    ApiError::NotFound(format!("ApplicationSet {name} was deleted while updating"))
                })?;
            }
            Err(e) => return Err(ApiError::kube(format!("updating ApplicationSet {name}"), e)),
        }
    }
    Err(ApiError::Conflict(
        "Failed to update ApplicationSets. Too many conflicts".into(),
    ))
}

/// Deletes the ApplicationSet `name` (its Applications go with it through their
/// ownerReferences, unless the set preserves them).
pub async fn delete(api: &Api<DynamicObject>, name: &str) -> Result<(), ApiError> {
    api.delete(name, &DeleteParams::default())
        .await
        .map_err(|e| ApiError::kube(format!("deleting ApplicationSet {name}"), e))?;
    Ok(())
}
