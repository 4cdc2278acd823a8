//! Argo CD's `ConfigManagementPlugin` file (`plugin.yaml`), read as its cmp-server reads it
//! (`cmpserver/plugin/config.go`): our own types, because the format is Argo's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The annotation by which a plugin asks for network access (Argo CD has no such field: its
/// sidecars always have the pod's network). Argo CD ignores it, so one file serves both.
pub const NETWORK_ANNOTATION: &str = "plumb.dev/network";

/// One `ConfigManagementPlugin` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginFile {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: PluginMetadata,
    #[serde(default)]
    pub spec: PluginSpec,
}

/// `metadata`: the name, and annotations (only [`NETWORK_ANNOTATION`] is read).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PluginMetadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `spec`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginSpec {
    /// Appended to the name (`<name>-<version>`) when set.
    #[serde(default)]
    pub version: String,
    /// Run before `generate`, in the same directory.
    #[serde(default)]
    pub init: Option<PluginCommand>,
    /// Prints the manifests (YAML or JSON) on standard output.
    #[serde(default)]
    pub generate: PluginCommand,
    /// When this plugin applies to a source that does not name it.
    #[serde(default)]
    pub discover: Option<Discover>,
    #[serde(default)]
    pub parameters: Option<Parameters>,
    /// Argo CD: keep the repository's file modes in the sidecar's copy. Plumb runs plugins in the
    /// checkout, whose modes are always Git's (executable or not), so this changes nothing.
    #[serde(default)]
    pub preserve_file_mode: bool,
    /// Argo CD: let the sidecar fetch with the repository's Git credentials. Plumb never gives a
    /// plugin credentials; the field is read and ignored (with a warning when true).
    #[serde(default)]
    pub provide_git_creds: bool,
    /// Argo CD: do not run two generates on one repository at once. Plumb's checkouts are
    /// read-only and per commit, so concurrent runs cannot disturb each other.
    #[serde(default)]
    pub lock_repo: bool,
}

/// `command` + `args`, run without a shell (as Go's `exec.Command`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PluginCommand {
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub args: Vec<String>,
}

impl PluginCommand {
    /// The whole command line.
    pub fn argv(&self) -> Vec<String> {
        self.command.iter().chain(&self.args).cloned().collect()
    }
}

/// `spec.discover`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discover {
    /// A glob relative to the source directory (Go's `filepath.Glob`: `*` stays in one directory).
    #[serde(default)]
    pub file_name: String,
    #[serde(default)]
    pub find: Find,
}

impl Discover {
    /// True when discovery is configured at all (Argo: a plugin without it is used only by name).
    pub fn is_enabled(&self) -> bool {
        !self.file_name.is_empty()
            || !self.find.glob.is_empty()
            || !self.find.command.command.is_empty()
    }
}

/// `spec.discover.find`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Find {
    /// A glob relative to the source directory in which `**` crosses directories.
    #[serde(default)]
    pub glob: String,
    /// A command run in the source directory; any output means "this plugin applies".
    #[serde(default, flatten)]
    pub command: PluginCommand,
}

/// `spec.parameters`: what the plugin announces (for user interfaces), not what it receives.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Parameters {
    /// Announcements written in the file, passed on as they are.
    #[serde(default, rename = "static")]
    pub static_: Vec<serde_json::Value>,
    /// A command printing a JSON array of more announcements.
    #[serde(default)]
    pub dynamic: Option<PluginCommand>,
}

/// Why a plugin file cannot be used.
pub(crate) fn validate(p: &PluginFile) -> Result<(), String> {
    if p.api_version != "argoproj.io/v1alpha1" || p.kind != "ConfigManagementPlugin" {
        return Err(format!(
            "apiVersion/kind is {}/{}, expected argoproj.io/v1alpha1/ConfigManagementPlugin",
            p.api_version, p.kind
        ));
    }
    if !valid_name(&p.metadata.name) {
        return Err(format!(
            "metadata.name {:?} is not a name (letters, digits, '-', '_', '.', not starting with '.')",
            p.metadata.name
        ));
    }
    if !p.spec.version.is_empty() && !valid_name(&p.spec.version) {
        return Err(format!(
            "spec.version {:?} is not a version (letters, digits, '-', '_', '.')",
            p.spec.version
        ));
    }
    if p.spec.generate.command.is_empty() {
        return Err("spec.generate.command is empty".into());
    }
    Ok(())
}

/// A plugin name is never a path: no `/`, no `..`, nothing but a plain word.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
