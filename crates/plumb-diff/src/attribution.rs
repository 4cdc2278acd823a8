//! Drift attribution: for each differing field, the field manager that last wrote it in live
//! (from `managedFields`), its operation and time. A field gone from live is attributed to the
//! most recent writer inside its nearest remaining parent. Printed after each diff block as
//! `# <path>: last written by <manager> (<Operation>) at <time>`.

use crate::managed_fields::{ManagedEntry, last_writer};
use crate::result::{Attribution, FieldChange};

/// Fills `attribution` on each change from the live object's managedFields.
pub(crate) fn attribute(changes: &mut [FieldChange], managed: &[ManagedEntry]) {
    for change in changes {
        change.attribution = last_writer(managed, &change.path).map(|(e, exact)| Attribution {
            manager: e.manager.clone(),
            operation: e.operation.clone(),
            time: e.time.clone(),
            exact,
        });
    }
}

/// The comment line for one attributed change.
pub(crate) fn comment_line(change: &FieldChange) -> Option<String> {
    let a = change.attribution.as_ref()?;
    let at = if a.time.is_empty() {
        String::new()
    } else {
        format!(" at {}", a.time)
    };
    Some(format!(
        "# {}: last written by {} ({}){at}",
        change.path, a.manager, a.operation
    ))
}
