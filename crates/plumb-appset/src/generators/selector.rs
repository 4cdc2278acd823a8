//! `selector` on a generator: Kubernetes label-selector semantics over the flattened
//! parameters (Argo's `Transform` flattens each parameter set and matches it as a label set).

use std::collections::BTreeMap;

use plumb_model::applicationset::LabelSelector;

use super::values::flatten;
use crate::error::GeneratorError;
use crate::params::Params;

/// A parsed selector, checked once per generator.
pub struct Selector<'a> {
    labels: Vec<(&'a str, &'a str)>,
    exprs: Vec<(&'a str, Op, &'a [String])>,
}

#[derive(Clone, Copy)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl<'a> Selector<'a> {
    /// Parses `selector`, refusing unknown operators and `In`/`NotIn` without values as
    /// Kubernetes does.
    pub fn parse(selector: &'a LabelSelector) -> Result<Self, GeneratorError> {
        let labels = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut exprs = Vec::new();
        for req in selector.match_expressions.iter().flatten() {
            let key = req.key.as_deref().unwrap_or_default();
            let values = req.values.as_deref().unwrap_or_default();
            let op = match req.operator.as_deref().unwrap_or_default() {
                "In" => Op::In,
                "NotIn" => Op::NotIn,
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                other => {
                    return Err(GeneratorError::Invalid(format!(
                        "error parsing label selector: {other:?} is not a valid label selector operator"
                    )));
                }
            };
            if matches!(op, Op::In | Op::NotIn) && values.is_empty() {
                return Err(GeneratorError::Invalid(format!(
                    "error parsing label selector: {key}: for 'in', 'notin' operators, values set can't be empty"
                )));
            }
            if matches!(op, Op::Exists | Op::DoesNotExist) && !values.is_empty() {
                return Err(GeneratorError::Invalid(format!(
                    "error parsing label selector: {key}: values set must be empty for exists and does not exist"
                )));
            }
            exprs.push((key, op, values));
        }
        Ok(Self { labels, exprs })
    }

    /// True when the flattened `params` satisfy every requirement.
    pub fn matches(&self, params: &Params) -> bool {
        let flat: BTreeMap<String, String> = flatten(params).into_iter().collect();
        let labels_ok = self
            .labels
            .iter()
            .all(|(k, v)| flat.get(*k).is_some_and(|have| have == v));
        labels_ok
            && self.exprs.iter().all(|(k, op, values)| {
                let have = flat.get(*k);
                match op {
                    Op::In => have.is_some_and(|h| values.iter().any(|v| v == h)),
                    Op::NotIn => have.is_none_or(|h| values.iter().all(|v| v != h)),
                    Op::Exists => have.is_some(),
                    Op::DoesNotExist => have.is_none(),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use plumb_model::applicationset::LabelSelectorRequirement;
    use serde_json::json;

    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: Some(key.into()),
            operator: Some(op.into()),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn nested_params_match_by_dotted_key() {
        let sel = LabelSelector {
            match_labels: Some([("metadata.labels.env".to_owned(), "prod".to_owned())].into()),
            match_expressions: Some(vec![
                req("path.basename", "In", &["a", "b"]),
                req("missing", "NotIn", &["x"]),
                req("values.n", "In", &["3"]),
            ]),
        };
        let s = Selector::parse(&sel).unwrap();
        let p = json!({"metadata": {"labels": {"env": "prod"}}, "path": {"basename": "a"}, "values": {"n": 3}});
        assert!(s.matches(p.as_object().unwrap()));
        let q = json!({"metadata": {"labels": {"env": "dev"}}, "path": {"basename": "a"}});
        assert!(!s.matches(q.as_object().unwrap()));
    }

    #[test]
    fn bad_operator_is_refused() {
        let sel = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![req("a", "Near", &["x"])]),
        };
        assert!(Selector::parse(&sel).is_err());
    }
}
