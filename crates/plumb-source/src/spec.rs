//! Reading plumb-model's source spec, whose optional fields are `Option` so that manifests
//! round-trip exactly; here an absent field takes Argo CD's meaning (empty, false).

/// The string, or `""` when absent.
pub(crate) fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or_default()
}

/// The list, or empty when absent.
pub(crate) fn v<T>(o: &Option<Vec<T>>) -> &[T] {
    o.as_deref().unwrap_or_default()
}

/// The flag, or false when absent.
pub(crate) fn b(o: Option<bool>) -> bool {
    o.unwrap_or(false)
}
