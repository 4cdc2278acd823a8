//! Kubernetes YAML for Plumb: read as kubectl reads it, written as Go's `sigs.k8s.io/yaml` writes it.
//!
//! [`read_documents`] splits a stream on `---` lines the way kubectl's YAML reader does and reads
//! each document with YAML 1.1 rules (`yes`/`on` booleans, `0755` octal, merge keys), refusing
//! alias bombs. A duplicate key is accepted as kubectl and Argo CD accept it (the last value wins)
//! and reported ([`DuplicateKey`]). [`to_yaml_string`] is the other direction: byte-for-byte the
//! output of go-yaml v2 `yaml.Marshal` on a JSON object (sorted keys, indentless sequences,
//! go-yaml's quoting and 80-column folding), which is what Argo CD's diff text is made from.
//!
//! ```
//! let docs = plumb_yaml::read_documents("a: yes\n---\nb: 0755\n", "x.yaml").unwrap();
//! assert_eq!(docs[0].value["a"], true);
//! assert_eq!(docs[1].value["b"], 493);
//! assert_eq!(docs[1].line, 3);
//! let text = plumb_yaml::to_yaml_string(&serde_json::json!({"b": "on", "a": [1, {"x": ""}]}));
//! assert_eq!(text, "a:\n- 1\n- x: \"\"\nb: \"on\"\n");
//! ```

mod duplicates;
mod emit;
mod error;
mod read;

pub use duplicates::DuplicateKey;
pub use emit::to_yaml_string;
pub use error::{Error, Result};
pub use read::{Document, MAX_DEPTH, flatten_lists, read_documents, read_documents_reporting};
