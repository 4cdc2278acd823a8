//! Argo's `IsZero` of a source-type block, which drops a block a flag emptied.

/// Argo's `IsZero` of the Helm and Kustomize blocks: nothing set.
pub fn is_zero<T: serde::Serialize>(block: &T) -> bool {
    serde_json::to_value(block).is_ok_and(|v| v.as_object().is_none_or(|m| m.is_empty()))
}
