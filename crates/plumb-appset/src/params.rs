//! Parameter sets: what generators produce and templates consume.

/// One parameter set. With `goTemplate: true` values keep their JSON shape (`{{.path.basename}}`);
/// with `{{param}}` substitution Argo flattens nested values to dotted keys (`{{path.basename}}`).
pub type Params = serde_json::Map<String, serde_json::Value>;
