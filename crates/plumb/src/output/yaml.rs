//! `-o yaml`: the object(s) as Argo prints them (`sigs.k8s.io/yaml`: through JSON, keys sorted),
//! written by plumb-yaml's go-yaml compatible emitter.

use serde::Serialize;

/// One object, or a list of objects, as YAML.
pub fn render<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(plumb_yaml::to_yaml_string(&serde_json::to_value(value)?))
}
