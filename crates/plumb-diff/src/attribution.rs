//! Drift attribution: for each differing field, the field manager that last wrote it in live
//! (from `managedFields`), its operation and time. A field gone from live is attributed to the
//! most recent writer inside its nearest remaining parent, and said to be so: the API server
//! records no manager for a removal. A field inside an atomic list or map (recorded as one leaf)
//! belongs to the manager of that leaf. Printed after each diff block as
//! `# <path>: last written by <manager> (<Operation>) at <time>`.

use crate::managed_fields::{ManagedEntry, last_writer};
use crate::result::{Attribution, FieldChange};

/// Fills `attribution` on each change from the live object's managedFields.
pub(crate) fn attribute(changes: &mut [FieldChange], managed: &[ManagedEntry]) {
    for change in changes {
        change.attribution = last_writer(managed, &change.path).map(|(e, exact)| {
            // A field still in live inside a list (or map) its manager owns whole: that manager
            // wrote it, though managedFields names only the list (`f:containers: {}` in a custom
            // resource whose schema declares no list keys).
            let exact = exact || (change.live.is_some() && e.owns_whole_value_around(&change.path));
            Attribution {
                manager: e.manager.clone(),
                operation: e.operation.clone(),
                time: e.time.clone(),
                exact,
            }
        });
    }
}

/// The comment line for one attributed change.
pub(crate) fn comment_line(change: &FieldChange) -> Option<String> {
    let a = change.attribution.as_ref()?;
    Some(comment_text(&change.path.to_string(), a))
}

/// The comment line for the change at `path` (as printed) last written as `a` says.
pub(crate) fn comment_text(path: &str, a: &Attribution) -> String {
    let at = if a.time.is_empty() {
        String::new()
    } else {
        format!(" at {}", a.time)
    };
    if a.exact {
        return format!(
            "# {path}: last written by {} ({}){at}",
            a.manager, a.operation
        );
    }
    // The field is gone from live. The API server records no field manager for a removal (a
    // `kubectl patch` that only removes leaves no managedFields entry), so name what is known:
    // who last wrote the nearest parent that is still there.
    format!(
        "# {path}: not in live; the removal was not recorded by any field manager (parent last written by {} ({}){at})",
        a.manager, a.operation
    )
}
