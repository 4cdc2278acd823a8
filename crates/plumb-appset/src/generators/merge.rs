//! `merge`: the first generator's parameter sets, each overlaid with the later generators' sets
//! that agree on `mergeKeys` (Argo's `MergeGenerator`). Output keeps the first generator's order
//! (Argo's is a Go map's: random).

use std::collections::{BTreeMap, HashMap};

use plumb_model::applicationset::{ApplicationSet, MergeGenerator};
use serde_json::Value;

use super::matrix::deep_merge;
use super::values::Mode;
use super::{ParamSet, transform};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// The merged parameter sets.
pub async fn generate(
    spec: &MergeGenerator,
    set: &ApplicationSet,
    ctx: &Context,
    depth: usize,
) -> Result<Vec<Params>, GeneratorError> {
    let gens = spec.generators.as_deref().unwrap_or_default();
    if gens.len() < 2 {
        return Err(GeneratorError::Invalid(
            "found less than two generators, Merge requires two or more".to_owned(),
        ));
    }
    let keys = spec.merge_keys.as_deref().unwrap_or_default();
    if keys.is_empty() {
        return Err(GeneratorError::Invalid(
            "no merge keys were specified, Merge requires at least one".to_owned(),
        ));
    }
    let mut all = Vec::with_capacity(gens.len());
    for (i, generator) in gens.iter().enumerate() {
        let sets = transform(generator, set, ctx, None, depth).await.map_err(|e| {
            GeneratorError::Invalid(format!(
                "error getting param sets from generators: error getting params from generator {} of {}: \
                 child generator returned an error on parameter generation: {e}",
                i + 1,
                gens.len()
            ))
        })?;
        all.push(
            sets.into_iter()
                .map(|ParamSet { params, .. }| params)
                .collect::<Vec<_>>(),
        );
    }
    let mut iter = all.into_iter();
    let mut base = iter.next().unwrap_or_default();
    index(keys, &base)?;
    let go = Mode::of(set).go_template;
    for later in iter {
        let by_key = index(keys, &later)?;
        for params in &mut base {
            if let Some(over) = by_key.get(&merge_key(keys, params)) {
                if go {
                    deep_merge(params, over);
                } else {
                    params.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
    }
    Ok(base)
}

/// The sets by their merge key, refusing two sets with the same key.
fn index<'a>(
    keys: &[String],
    sets: &'a [Params],
) -> Result<HashMap<String, &'a Params>, GeneratorError> {
    let mut out = HashMap::with_capacity(sets.len());
    for params in sets {
        let key = merge_key(keys, params);
        if out.contains_key(&key) {
            return Err(GeneratorError::Invalid(format!(
                "error getting param sets by merge key: the parameters from a generator were not unique \
                 by the given mergeKeys, Merge requires all param sets to be unique. Duplicate key was {key}"
            )));
        }
        out.insert(key, params);
    }
    Ok(out)
}

/// Argo's key: the JSON of `{mergeKey: value}` (keys sorted, a missing value `null`).
fn merge_key(keys: &[String], params: &Params) -> String {
    let map: BTreeMap<&str, &Value> = keys
        .iter()
        .map(|k| (k.as_str(), params.get(k).unwrap_or(&Value::Null)))
        .collect();
    serde_json::to_string(&map).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_key_is_argo_json() {
        let p = json!({"server": "https://a", "name": "x"})
            .as_object()
            .cloned()
            .unwrap();
        let keys = ["server".to_owned(), "values.x".to_owned()];
        assert_eq!(
            merge_key(&keys, &p),
            r#"{"server":"https://a","values.x":null}"#
        );
        let dup = vec![p.clone(), p];
        let err = index(&keys, &dup).unwrap_err().to_string();
        assert!(
            err.contains("Duplicate key was {\"server\":\"https://a\",\"values.x\":null}"),
            "{err}"
        );
    }
}
