//! The server-side strategy's own step: the dry-run result is the prediction, except that
//! changes the dry-run made to fields Plumb's field manager does not own are reverted to live
//! (mutating webhooks answer dry-runs too, and would otherwise show as permanent drift; Argo
//! does the same unless `IncludeMutationWebhook=true`).

use plumb_model::{FIELD_MANAGER, GroupKind};
use serde_json::Value;

use crate::changes::{field_changes, set_at};
use crate::managed_fields::ManagedEntry;

/// Reverts predicted fields that differ from live and that `plumb-controller` does not own
/// in the dry-run result's managedFields (`predicted_managed`). Returns how many were reverted.
pub(crate) fn revert_unowned(
    gk: &GroupKind,
    predicted_managed: &[ManagedEntry],
    live: &Value,
    predicted: &mut Value,
) -> usize {
    let ours: Vec<&ManagedEntry> = predicted_managed
        .iter()
        .filter(|e| e.manager == FIELD_MANAGER)
        .collect();
    if ours.is_empty() {
        // Without ownership data nothing can be told apart; keep the dry-run as it is.
        return 0;
    }
    let mut reverted = 0;
    for change in field_changes(gk, live, predicted) {
        let owned = ours.iter().any(|e| {
            // Owned if Plumb owns the field or any parent of it up to a list element.
            (1..=change.path.0.len())
                .rev()
                .any(|n| e.owns(&crate::path::FieldPath(change.path.0[..n].to_vec())))
        });
        if !owned && set_at(predicted, &change.path, change.live.clone()) {
            reverted += 1;
        }
    }
    reverted
}
