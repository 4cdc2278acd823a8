//! Field paths inside an object, as Plumb prints them:
//! `spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot`.
//!
//! A list element is named by its merge key when the list has one (`[name=x]`), else by its
//! index (`[0]`). The same path type addresses managedFields entries, ignore rules and
//! attribution, so they agree on what "the same field" is.

use std::fmt;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Segment {
    /// A map key.
    Key(String),
    /// A list element named by its merge key field and that field's value (as JSON text for
    /// non-strings).
    Keyed {
        /// The merge key field (`name`, `containerPort`...).
        field: String,
        /// Its value, as printed.
        value: String,
    },
    /// A list element without a merge key.
    Index(usize),
}

/// A path from the object root to one field.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The path with one more step.
    pub fn child(&self, seg: Segment) -> Self {
        let mut v = self.0.clone();
        v.push(seg);
        Self(v)
    }

    /// The shape of the path for merge-key lookups: keys joined by `.`, list steps as `[]`
    /// (`spec.template.spec.containers[].env`).
    pub fn shape(&self) -> String {
        let mut out = String::new();
        for seg in &self.0 {
            match seg {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Keyed { .. } | Segment::Index(_) => out.push_str("[]"),
            }
        }
        out
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for seg in &self.0 {
            match seg {
                Segment::Key(k) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Segment::Keyed { field, value } => write!(f, "[{field}={value}]")?,
                Segment::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// The text a merge key value is printed with inside `[field=value]`.
pub(crate) fn key_value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_shape() {
        let p = FieldPath(vec![
            Segment::Key("spec".into()),
            Segment::Key("containers".into()),
            Segment::Keyed {
                field: "name".into(),
                value: "payments-api".into(),
            },
            Segment::Key("ports".into()),
            Segment::Index(0),
            Segment::Key("containerPort".into()),
        ]);
        assert_eq!(
            p.to_string(),
            "spec.containers[name=payments-api].ports[0].containerPort"
        );
        assert_eq!(p.shape(), "spec.containers[].ports[].containerPort");
    }
}
