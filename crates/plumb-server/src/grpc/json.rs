//! Plumb's JSON (Argo's REST shapes: Go's encoding/json of the gogo-generated types) to and from
//! protobuf messages, through the descriptors. Own code because no crate speaks this mapping:
//! it is not proto3's canonical JSON. Keys are the proto field names (gogo's json tags), 64-bit
//! integers are numbers, bytes are base64, and the k8s types with their own JSON form are
//! special cases: `metav1.Time`/`MicroTime` (RFC 3339 string, not `{seconds, nanos}`),
//! `IntOrString` (a number or a string), `Quantity` (a string), `RawExtension` and
//! apiextensions `JSON` (inline JSON, not bytes).

use base64::Engine as _;
use prost_reflect::{DynamicMessage, Kind, MapKey, MessageDescriptor, ReflectMessage as _, Value};
use serde_json::{Map, Value as Json};

const TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime";
const INT_OR_STRING: &str = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "k8s.io.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "k8s.io.apimachinery.pkg.runtime.RawExtension";
const EXT_JSON: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON";
const RESOURCE_OVERRIDE: &str =
    "github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1.ResourceOverride";

/// A value that does not fit the message: where (dotted field path) and why.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub(crate) struct Mismatch {
    pub(crate) path: String,
    pub(crate) why: String,
}

fn mismatch(path: &str, why: impl Into<String>) -> Mismatch {
    Mismatch {
        path: if path.is_empty() {
            "(message)".into()
        } else {
            path.into()
        },
        why: why.into(),
    }
}

/// A message as Plumb's JSON: set fields only, map keys sorted. Argo's Go client sends the
/// non-nullable (gogo) fields of proto2 messages even when empty, so an empty string, a zero
/// time and a message left empty by that are left out, as Go's `omitempty` and `null` times
/// leave them out of Argo's JSON (a message set on purpose, such as `automated`, still carries
/// its `false` flags, which stay).
pub(crate) fn to_json(msg: &DynamicMessage) -> Json {
    if let Some(special) = special_to_json(msg) {
        return special;
    }
    let mut out = Map::new();
    for (field, value) in msg.fields() {
        let json = value_to_json(&field.kind(), value);
        let empty_object = json.as_object().is_some_and(Map::is_empty);
        if json.is_null() || json.as_str() == Some("") || empty_object {
            continue;
        }
        out.insert(field.name().to_string(), json);
    }
    Json::Object(out)
}

fn value_to_json(kind: &Kind, value: &Value) -> Json {
    match value {
        Value::Bool(b) => Json::Bool(*b),
        Value::I32(n) => Json::from(*n),
        Value::I64(n) => Json::from(*n),
        Value::U32(n) => Json::from(*n),
        Value::U64(n) => Json::from(*n),
        Value::F32(n) => {
            serde_json::Number::from_f64(f64::from(*n)).map_or(Json::Null, Json::Number)
        }
        Value::F64(n) => serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.clone()),
        Value::Bytes(b) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::EnumNumber(n) => match kind.as_enum().and_then(|e| e.get_value(*n)) {
            Some(v) => Json::String(v.name().to_string()),
            None => Json::from(*n),
        },
        Value::Message(m) => to_json(m),
        Value::List(items) => Json::Array(items.iter().map(|v| value_to_json(kind, v)).collect()),
        Value::Map(entries) => {
            let value_kind = kind
                .as_message()
                .map(|e| e.map_entry_value_field().kind())
                .unwrap_or_else(|| kind.clone());
            let mut sorted: Vec<(String, &Value)> =
                entries.iter().map(|(k, v)| (map_key_text(k), v)).collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(
                sorted
                    .into_iter()
                    .map(|(k, v)| (k, value_to_json(&value_kind, v)))
                    .collect(),
            )
        }
    }
}

fn map_key_text(key: &MapKey) -> String {
    match key {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
        MapKey::String(s) => s.clone(),
    }
}

fn int_field(msg: &DynamicMessage, name: &str) -> i64 {
    match msg.get_field_by_name(name).as_deref() {
        Some(Value::I64(n)) => *n,
        Some(Value::I32(n)) => i64::from(*n),
        _ => 0,
    }
}

fn string_field(msg: &DynamicMessage, name: &str) -> String {
    match msg.get_field_by_name(name).as_deref() {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The k8s types whose JSON is not their fields.
fn special_to_json(msg: &DynamicMessage) -> Option<Json> {
    let name = msg.descriptor().full_name().to_string();
    Some(match name.as_str() {
        TIME | MICRO_TIME => {
            let seconds = int_field(msg, "seconds");
            let nanos = int_field(msg, "nanos");
            if seconds == 0 && nanos == 0 {
                // Go's zero time, which Argo's JSON spells null.
                return Some(Json::Null);
            }
            let ts = jiff::Timestamp::new(seconds, i32::try_from(nanos).unwrap_or(0)).ok()?;
            Json::String(if name == TIME {
                ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
            } else {
                ts.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
            })
        }
        INT_OR_STRING => match int_field(msg, "type") {
            1 => Json::String(string_field(msg, "strVal")),
            _ => Json::from(int_field(msg, "intVal")),
        },
        QUANTITY => Json::String(string_field(msg, "string")),
        RAW_EXTENSION | EXT_JSON => match msg.get_field_by_name("raw").as_deref() {
            Some(Value::Bytes(b)) if !b.is_empty() => {
                serde_json::from_slice(b).unwrap_or(Json::Null)
            }
            _ => Json::Null,
        },
        _ => return None,
    })
}

/// Plumb's JSON as a message of `desc`; keys the message lacks are skipped (logged), values of
/// the wrong type are a [`Mismatch`] naming the field.
pub(crate) fn from_json(desc: &MessageDescriptor, json: &Json) -> Result<DynamicMessage, Mismatch> {
    message_from_json(desc, json, "")
}

fn message_from_json(
    desc: &MessageDescriptor,
    json: &Json,
    path: &str,
) -> Result<DynamicMessage, Mismatch> {
    if desc.full_name() == RESOURCE_OVERRIDE {
        let fields = resource_override_fields(json, path)?;
        return message_fields_from_json(desc, &fields, path);
    }
    message_fields_from_json(desc, json, path)
}

/// Argo's `ResourceOverride` JSON is its `rawResourceOverride` (custom MarshalJSON): `health.lua`,
/// `health.lua.useOpenLibs`, and the ignore rules as YAML text; as the message's fields.
fn resource_override_fields(json: &Json, path: &str) -> Result<Json, Mismatch> {
    let Json::Object(raw) = json else {
        return Err(mismatch(path, "expected an object"));
    };
    let mut out = Map::new();
    for (key, value) in raw {
        let key = match key.as_str() {
            "health.lua" => "healthLua",
            "health.lua.useOpenLibs" => "useOpenLibs",
            other => other,
        };
        let value = match (key, value) {
            ("ignoreDifferences" | "ignoreResourceUpdates", Json::String(yaml)) => {
                let here = format!("{path}.{key}");
                let docs = plumb_yaml::read_documents(yaml, &here)
                    .map_err(|e| mismatch(&here, format!("not YAML: {e}")))?;
                docs.into_iter()
                    .next()
                    .map(|d| d.value)
                    .unwrap_or(Json::Null)
            }
            (_, v) => v.clone(),
        };
        out.insert(key.to_string(), value);
    }
    Ok(Json::Object(out))
}

fn message_fields_from_json(
    desc: &MessageDescriptor,
    json: &Json,
    path: &str,
) -> Result<DynamicMessage, Mismatch> {
    let mut msg = DynamicMessage::new(desc.clone());
    if special_from_json(&mut msg, json, path)? {
        return Ok(msg);
    }
    let Json::Object(object) = json else {
        return Err(mismatch(path, "expected an object"));
    };
    for (key, value) in object {
        // Case aside, Go's json tag can differ from the proto name (`jsonPointers` of
        // `OverrideIgnoreDiff` is `jSONPointers` in the .proto).
        let Some(field) = desc
            .get_field_by_name(key)
            .or_else(|| desc.get_field_by_json_name(key))
            .or_else(|| desc.fields().find(|f| f.name().eq_ignore_ascii_case(key)))
        else {
            tracing::debug!(
                message = desc.full_name(),
                key,
                "JSON key not in Argo's message"
            );
            continue;
        };
        if value.is_null() {
            continue;
        }
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let kind = field.kind();
        let converted = if field.is_map() {
            map_from_json(&kind, value, &here)?
        } else if field.is_list() {
            let Json::Array(items) = value else {
                return Err(mismatch(&here, "expected an array"));
            };
            let items: Result<Vec<Value>, Mismatch> = items
                .iter()
                .enumerate()
                .map(|(i, v)| single_from_json(&kind, v, &format!("{here}[{i}]")))
                .collect();
            Value::List(items?)
        } else {
            single_from_json(&kind, value, &here)?
        };
        msg.set_field(&field, converted);
    }
    Ok(msg)
}

fn map_from_json(kind: &Kind, value: &Json, path: &str) -> Result<Value, Mismatch> {
    let Json::Object(object) = value else {
        return Err(mismatch(path, "expected an object (a map)"));
    };
    let entry = kind
        .as_message()
        .ok_or_else(|| mismatch(path, "map without an entry type"))?;
    let key_kind = entry.map_entry_key_field().kind();
    let value_kind = entry.map_entry_value_field().kind();
    let mut out = std::collections::HashMap::new();
    for (k, v) in object {
        let here = format!("{path}[{k}]");
        let key = match key_kind {
            Kind::String => MapKey::String(k.clone()),
            Kind::Bool => MapKey::Bool(k == "true"),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => MapKey::I32(
                k.parse()
                    .map_err(|_| mismatch(&here, "expected an int32 key"))?,
            ),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => MapKey::I64(
                k.parse()
                    .map_err(|_| mismatch(&here, "expected an int64 key"))?,
            ),
            _ => return Err(mismatch(&here, "unsupported map key type")),
        };
        if v.is_null() {
            continue;
        }
        out.insert(key, single_from_json(&value_kind, v, &here)?);
    }
    Ok(Value::Map(out))
}

fn number<T: TryFrom<i64> + std::str::FromStr>(json: &Json, path: &str) -> Result<T, Mismatch> {
    let wrong = || mismatch(path, format!("expected an integer, got {json}"));
    match json {
        Json::Number(n) => n
            .as_i64()
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(wrong),
        // 64-bit integers as strings (proto3 JSON's form) are accepted too.
        Json::String(s) => s.parse().map_err(|_| wrong()),
        _ => Err(wrong()),
    }
}

fn single_from_json(kind: &Kind, json: &Json, path: &str) -> Result<Value, Mismatch> {
    Ok(match kind {
        Kind::String => match json {
            Json::String(s) => Value::String(s.clone()),
            other => return Err(mismatch(path, format!("expected a string, got {other}"))),
        },
        Kind::Bool => Value::Bool(
            json.as_bool()
                .ok_or_else(|| mismatch(path, format!("expected a boolean, got {json}")))?,
        ),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(number(json, path)?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(number(json, path)?),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(number(json, path)?),
        Kind::Uint64 | Kind::Fixed64 => {
            match json {
                Json::Number(n) => Value::U64(n.as_u64().ok_or_else(|| {
                    mismatch(path, format!("expected an unsigned integer, got {n}"))
                })?),
                other => Value::U64(
                    number::<i64>(other, path)?
                        .try_into()
                        .map_err(|_| mismatch(path, "expected an unsigned integer"))?,
                ),
            }
        }
        Kind::Float | Kind::Double => {
            let n = json
                .as_f64()
                .ok_or_else(|| mismatch(path, format!("expected a number, got {json}")))?;
            if matches!(kind, Kind::Float) {
                #[allow(clippy::cast_possible_truncation)]
                Value::F32(n as f32)
            } else {
                Value::F64(n)
            }
        }
        Kind::Bytes => match json {
            Json::String(s) => Value::Bytes(
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| mismatch(path, format!("expected base64: {e}")))?
                    .into(),
            ),
            other => return Err(mismatch(path, format!("expected base64 text, got {other}"))),
        },
        Kind::Enum(e) => match json {
            Json::String(s) => {
                Value::EnumNumber(e.get_value_by_name(s).map(|v| v.number()).ok_or_else(|| {
                    mismatch(path, format!("unknown value {s:?} of {}", e.name()))
                })?)
            }
            other => Value::EnumNumber(number(other, path)?),
        },
        Kind::Message(m) => Value::Message(message_from_json(m, json, path)?),
    })
}

/// Fills the k8s types whose JSON is not their fields; `false` when `msg` is not one.
fn special_from_json(msg: &mut DynamicMessage, json: &Json, path: &str) -> Result<bool, Mismatch> {
    let name = msg.descriptor().full_name().to_string();
    match (name.as_str(), json) {
        (TIME | MICRO_TIME, Json::String(s)) => {
            let ts: jiff::Timestamp = s
                .parse()
                .map_err(|e| mismatch(path, format!("expected an RFC 3339 time: {e}")))?;
            msg.set_field_by_name("seconds", Value::I64(ts.as_second()));
            if ts.subsec_nanosecond() != 0 {
                msg.set_field_by_name("nanos", Value::I32(ts.subsec_nanosecond()));
            }
        }
        (TIME | MICRO_TIME, _) => return Err(mismatch(path, "expected an RFC 3339 time")),
        (INT_OR_STRING, Json::String(s)) => {
            msg.set_field_by_name("type", Value::I64(1));
            msg.set_field_by_name("strVal", Value::String(s.clone()));
        }
        (INT_OR_STRING, Json::Number(_)) => {
            msg.set_field_by_name("type", Value::I64(0));
            msg.set_field_by_name("intVal", Value::I32(number(json, path)?));
        }
        (INT_OR_STRING, _) => return Err(mismatch(path, "expected a number or a string")),
        (QUANTITY, Json::String(s)) => msg.set_field_by_name("string", Value::String(s.clone())),
        (QUANTITY, Json::Number(n)) => {
            msg.set_field_by_name("string", Value::String(n.to_string()))
        }
        (QUANTITY, _) => return Err(mismatch(path, "expected a quantity")),
        (RAW_EXTENSION | EXT_JSON, other) => {
            let raw = serde_json::to_vec(other).map_err(|e| mismatch(path, e.to_string()))?;
            msg.set_field_by_name("raw", Value::Bytes(raw.into()));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use prost_reflect::DescriptorPool;
    use serde_json::json;

    use super::*;

    fn message(name: &str) -> MessageDescriptor {
        DescriptorPool::decode(super::super::contract::BYTES)
            .expect("contract")
            .get_message_by_name(name)
            .expect(name)
    }

    const V1: &str = "github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1";

    #[test]
    fn k8s_types_keep_their_json_form_both_ways() {
        let app = json!({
            "metadata": {"name": "a", "creationTimestamp": "2026-01-02T03:04:05Z",
                         "labels": {"b": "2", "a": "1"}, "generation": 3},
            "spec": {"source": {"repoURL": "https://x", "helm": {"valuesObject": {"k": [1, "v"]}}},
                     "syncPolicy": {"retry": {"limit": 5}}},
            "status": {"operationState": {"startedAt": "2026-01-02T03:04:05Z", "phase": "Running"}}
        });
        let msg = from_json(&message(&format!("{V1}.Application")), &app).expect("converts");
        assert_eq!(to_json(&msg), app);
        // Unknown keys (Plumb's additions) are not Argo's: left out; nulls are absent.
        let extra = json!({"metadata": {"name": "a", "uid": null}, "plumbOnly": 1});
        let msg = from_json(&message(&format!("{V1}.Application")), &extra).expect("converts");
        assert_eq!(to_json(&msg), json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn resource_overrides_are_argos_raw_form() {
        let settings = json!({"resourceOverrides": {"apps/Deployment": {
            "health.lua": "return {}", "health.lua.useOpenLibs": true, "actions": "discovery.lua: x",
            "ignoreDifferences": "jsonPointers:\n- /spec/replicas\njqPathExpressions:\n- .a\n",
            "knownTypeFields": [{"field": "spec", "type": "core/v1/PodSpec"}]}}});
        let msg = from_json(&message("cluster.Settings"), &settings).expect("converts");
        assert_eq!(
            to_json(&msg)["resourceOverrides"]["apps/Deployment"],
            json!({"healthLua": "return {}", "useOpenLibs": true, "actions": "discovery.lua: x",
                   "ignoreDifferences": {"jSONPointers": ["/spec/replicas"], "jqPathExpressions": [".a"]},
                   "knownTypeFields": [{"field": "spec", "type": "core/v1/PodSpec"}]})
        );
    }

    #[test]
    fn int_or_string_is_a_number_or_a_string() {
        let desc = message("k8s.io.apimachinery.pkg.util.intstr.IntOrString");
        for v in [json!(8080), json!("http")] {
            assert_eq!(to_json(&from_json(&desc, &v).expect("converts")), v);
        }
        assert!(from_json(&desc, &json!(true)).is_err());
    }

    #[test]
    fn wrong_types_name_the_field() {
        let app = json!({"metadata": {"name": 7}});
        let err = from_json(&message(&format!("{V1}.Application")), &app).unwrap_err();
        assert_eq!(err.to_string(), "metadata.name: expected a string, got 7");
        let app = json!({"metadata": {"creationTimestamp": "yesterday"}});
        let err = from_json(&message(&format!("{V1}.Application")), &app).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("metadata.creationTimestamp: expected an RFC 3339 time"),
            "{err}"
        );
        let list = json!({"items": {"not": "a list"}});
        let err = from_json(&message(&format!("{V1}.ApplicationList")), &list).unwrap_err();
        assert_eq!(err.to_string(), "items: expected an array");
    }
}
