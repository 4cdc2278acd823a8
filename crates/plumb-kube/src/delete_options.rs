//! The delete options of Argo CD's `DeleteResource` (API server and CLI share them).

use kube::api::{DeleteParams, PropagationPolicy};

/// Foreground by default, `orphan` leaves the dependents, `force` deletes at once in the
/// background (grace period 0).
pub fn resource_delete_params(force: bool, orphan: bool) -> DeleteParams {
    let propagation_policy = if orphan {
        PropagationPolicy::Orphan
    } else if force {
        PropagationPolicy::Background
    } else {
        PropagationPolicy::Foreground
    };
    DeleteParams {
        propagation_policy: Some(propagation_policy),
        grace_period_seconds: (force && !orphan).then_some(0),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_delete_options() {
        let p = resource_delete_params(false, false);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Foreground)
        ));
        assert_eq!(p.grace_period_seconds, None);
        let p = resource_delete_params(true, false);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Background)
        ));
        assert_eq!(p.grace_period_seconds, Some(0));
        let p = resource_delete_params(true, true);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Orphan)
        ));
        assert_eq!(p.grace_period_seconds, None);
        let p = resource_delete_params(false, true);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Orphan)
        ));
    }
}
