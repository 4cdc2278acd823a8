//! Reading ApplicationSet files (`create`, `generate`, `diff`): YAML or JSON, one or more
//! documents, `-` for stdin; bounded in size, every error naming the file and document.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use plumb_model::applicationset::{ApplicationSet, KIND};
use serde_json::Value;

/// Bytes one file may have: far above any real ApplicationSet, far below what hurts.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One ApplicationSet of a file: typed, and as written (for checks on keys the model drops).
#[derive(Debug, Clone)]
pub struct SetFile {
    /// The typed set.
    pub set: ApplicationSet,
    /// The document as written.
    pub raw: Value,
    /// `file` or `file (document N)`.
    pub origin: String,
}

fn read_text(path: &Path) -> Result<(String, String)> {
    let (mut reader, origin): (Box<dyn Read>, String) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin()), "stdin".into())
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        (Box::new(f), path.display().to_string())
    };
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {origin}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        bail!("{origin}: larger than {MAX_FILE_BYTES} bytes; not an ApplicationSet file");
    }
    let text = String::from_utf8(bytes).with_context(|| format!("{origin}: not UTF-8 text"))?;
    Ok((text, origin))
}

/// The ApplicationSets of `path` (documents of other kinds refused, naming them).
pub fn read_sets(path: &Path) -> Result<Vec<SetFile>> {
    let (text, origin) = read_text(path)?;
    parse_sets(&text, &origin)
}

/// The ApplicationSets of `text` read from `origin`.
pub fn parse_sets(text: &str, origin: &str) -> Result<Vec<SetFile>> {
    let docs =
        plumb_yaml::read_documents(text, origin).with_context(|| format!("parsing {origin}"))?;
    let many = docs.len() > 1;
    let mut sets = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        let where_ = if many {
            format!("{origin} (document {})", i + 1)
        } else {
            origin.to_string()
        };
        if doc.value.is_null() {
            continue;
        }
        let kind = doc
            .value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if kind != KIND {
            bail!("{where_}: kind {kind:?} is not an ApplicationSet");
        }
        let set: ApplicationSet = serde_json::from_value(doc.value.clone())
            .with_context(|| format!("{where_}: not a valid ApplicationSet"))?;
        if set.name().is_empty() {
            bail!("{where_}: the ApplicationSet does not have metadata.name set");
        }
        sets.push(SetFile {
            set,
            raw: doc.value,
            origin: where_,
        });
    }
    if sets.is_empty() {
        bail!("No ApplicationSets found while parsing {origin}");
    }
    Ok(sets)
}

/// The single ApplicationSet of `path` (`generate`, `diff`), in `default_ns` when it names none.
pub fn read_one(path: &Path, default_ns: &str) -> Result<SetFile> {
    let mut sets = read_sets(path)?;
    if sets.len() != 1 {
        bail!(
            "{}: input file must contain one ApplicationSet, found {}",
            path.display(),
            sets.len()
        );
    }
    let mut one = sets.remove(0);
    if one.set.namespace().is_empty() {
        one.set.metadata.namespace = Some(default_ns.to_string());
        one.raw["metadata"]["namespace"] = default_ns.into();
    }
    Ok(one)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_and_wrong_files_are_refused_with_their_name() {
        let err = |t: &str| format!("{:#}", parse_sets(t, "f.yaml").unwrap_err());
        assert!(
            err("kind: Application\nmetadata: {name: a}\n")
                .contains("f.yaml: kind \"Application\"")
        );
        assert!(err("").contains("No ApplicationSets found"));
        assert!(err("kind: ApplicationSet\nmetadata: {}\nspec: {}\n").contains("metadata.name"));
        assert!(
            err("kind: ApplicationSet\nmetadata: {name: a}\nspec: {generators: 3}\n")
                .contains("f.yaml: not a valid ApplicationSet")
        );
        let two = "kind: ApplicationSet\nmetadata: {name: a}\nspec: {}\n---\nkind: Secret\n";
        assert!(err(two).contains("f.yaml (document 2)"));
        let bomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
        assert!(parse_sets(bomb, "bomb.yaml").is_err());
    }

    #[test]
    fn oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, vec![b'#'; MAX_FILE_BYTES as usize + 10]).unwrap();
        let err = format!("{:#}", read_sets(&path).unwrap_err());
        assert!(err.contains("larger than"), "{err}");
    }
}
