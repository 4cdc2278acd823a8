//! `KUBECTL_EXTERNAL_DIFF`, honoured as kubectl does (`kubectl diff`): the variable is split on
//! spaces; the first word is the program and later words are kept only if they match
//! `^[a-zA-Z0-9-=]+$` (kubectl's guard against shell tricks). The live and desired YAML are
//! written into two temporary directories (`LIVE-*` and `MERGED-*`), each holding one file named
//! `<group>.<version>.<Kind>.<namespace>.<name>` (`v1.Service.ns.name` for the core group),
//! and the program runs with the two directories as its last arguments. Its output is copied
//! through and its exit status is ignored (a diff program exits 1 when files differ).

use std::io::Write;
use std::path::Path;
use std::process::Command;

use plumb_model::ResourceKey;

use crate::error::{Error, Result};

/// A parsed `KUBECTL_EXTERNAL_DIFF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalDiff {
    /// The program.
    pub program: String,
    /// Its extra arguments (filtered as kubectl filters them).
    pub args: Vec<String>,
}

impl ExternalDiff {
    /// Parses the variable's value; `None` when it is empty.
    pub fn parse(value: &str) -> Option<Self> {
        let mut words = value.split(' ').filter(|w| !w.is_empty());
        let program = words.next()?.to_string();
        let args = words
            .filter(|w| {
                w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '=')
            })
            .map(str::to_string)
            .collect();
        Some(Self { program, args })
    }

    /// Runs the program on one object's live and desired YAML, writing its output to `out`.
    pub(crate) fn run(
        &self,
        key: &ResourceKey,
        version: &str,
        live: &str,
        desired: &str,
        out: &mut dyn Write,
    ) -> Result<()> {
        let io = |source| Error::ExternalDiff {
            program: self.program.clone(),
            source,
        };
        let tmp = tempfile::tempdir().map_err(io)?;
        let live_dir = tmp.path().join("LIVE");
        let merged_dir = tmp.path().join("MERGED");
        let name = file_name(key, version);
        write_file(&live_dir, &name, live).map_err(io)?;
        write_file(&merged_dir, &name, desired).map_err(io)?;
        let output = Command::new(&self.program)
            .args(&self.args)
            .arg(&live_dir)
            .arg(&merged_dir)
            .output()
            .map_err(io)?;
        out.write_all(&output.stdout).map_err(io)?;
        std::io::stderr().write_all(&output.stderr).map_err(io)?;
        Ok(())
    }
}

fn write_file(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(name), text)
}

/// kubectl diff's file name for an object.
pub(crate) fn file_name(key: &ResourceKey, version: &str) -> String {
    let group = if key.group.is_empty() {
        String::new()
    } else {
        format!("{}.", key.group)
    };
    format!(
        "{group}{version}.{}.{}.{}",
        key.kind, key.namespace, key.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_like_kubectl() {
        let e = ExternalDiff::parse("colordiff -N -u --label=x $(rm) ;ls").unwrap();
        assert_eq!(e.program, "colordiff");
        assert_eq!(e.args, ["-N", "-u", "--label=x"]);
        assert!(ExternalDiff::parse("").is_none());
    }

    #[test]
    fn file_names() {
        assert_eq!(
            file_name(&ResourceKey::new("apps", "Deployment", "ns", "a"), "v1"),
            "apps.v1.Deployment.ns.a"
        );
        assert_eq!(
            file_name(&ResourceKey::new("", "Service", "ns", "a"), "v1"),
            "v1.Service.ns.a"
        );
    }
}
