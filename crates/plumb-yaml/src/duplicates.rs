//! Duplicate mapping keys, accepted as Argo CD (`sigs.k8s.io/yaml`, go-yaml v2) and kubectl
//! accept them: the last value wins. Each one is reported as a [`DuplicateKey`] so callers can
//! say so; a value silently replaced by a later one is a classic copy-paste mistake.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A key that appeared twice in one mapping; the later value was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The file (or other source) the text came from.
    pub source_name: String,
    /// 1-based line of the later occurrence in the whole stream (for JSON: the line of the
    /// document that holds it).
    pub line: usize,
    /// The repeated key.
    pub key: String,
}

impl std::fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: duplicate key {:?}: the last value is used (as kubectl and Argo CD do)",
            self.source_name, self.line, self.key
        )
    }
}

/// A value read from YAML or JSON with the duplicate keys found in it: (key, 1-based line within
/// the chunk handed to the YAML reader; 0 when unknown, as for JSON).
pub(crate) struct Tracked {
    pub(crate) value: Value,
    pub(crate) duplicates: Vec<(String, usize)>,
}

impl<'de> Deserialize<'de> for Tracked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TrackedVisitor)
    }
}

impl Tracked {
    fn plain(value: Value) -> Self {
        Self {
            value,
            duplicates: Vec::new(),
        }
    }
}

struct TrackedVisitor;

impl<'de> Visitor<'de> for TrackedVisitor {
    type Value = Tracked;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::Number(v.into())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::Number(v.into())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Tracked, E> {
        Ok(Tracked::plain(
            Number::from_f64(v).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_str<E>(self, v: &str) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Tracked, E> {
        Ok(Tracked::plain(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tracked, D::Error> {
        Tracked::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tracked, A::Error> {
        let mut items = Vec::new();
        let mut duplicates = Vec::new();
        while let Some(t) = seq.next_element::<Tracked>()? {
            items.push(t.value);
            duplicates.extend(t.duplicates);
        }
        Ok(Tracked {
            value: Value::Array(items),
            duplicates,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tracked, A::Error> {
        let mut out = Map::new();
        let mut duplicates = Vec::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            let t: Tracked = map.next_value()?;
            duplicates.extend(t.duplicates);
            let line = usize::try_from(key.referenced.line()).unwrap_or(0);
            if out.insert(key.value.clone(), t.value).is_some() {
                duplicates.push((key.value, line));
            }
        }
        Ok(Tracked {
            value: Value::Object(out),
            duplicates,
        })
    }
}
