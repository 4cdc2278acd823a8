//! Resource actions, as Argo CD runs them (`util/lua/lua.go`, `docs/operator-manual/resource_actions.md`):
//! a `discovery.lua` script says which actions an object offers (`name → {disabled, iconClass,
//! displayName, params}`), and each action's `action.lua` returns what to change: the modified
//! object (a patch of the object the action ran on) or Argo's newer list
//! `[{operation = "patch" | "create", resource = <object>}]`.
//!
//! Scripts come, in Argo's lookup order, from the settings (`resource.customizations.actions.<group>_<kind>`,
//! or the `actions` field of the legacy `resource.customizations` map), then from directories laid
//! out like Argo's `resource_customizations` (`<dir>/<group>/<kind>/actions/discovery.lua` and
//! `<dir>/<group>/<kind>/actions/<action>/action.lua`; core kinds `<dir>/<kind>/actions/...`; the
//! first directory that has the kind wins), then Plumb's own built-ins ([`builtin`]). A settings
//! entry replaces the rest unless it sets `mergeBuiltinActions: true`; a directory's kind replaces
//! Plumb's built-ins for that kind. Directories are read beneath their root
//! ([`crate::customizations_dir`]). All run in the health scripts' sandbox with the same limits
//! (safe libraries only, as Argo's API server runs actions; `require("os")` gives the safe `os`).
//!
//! The engine never talks to a cluster. It refuses a `patch` of any object other than the one the
//! action ran on; what a `create` may make is the caller's decision (the project's rules).

mod builtin;
mod clean;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plumb_model::settings::{self, ACTIONS_PREFIX, LEGACY_CUSTOMIZATIONS, Settings};
use serde::{Deserialize, Serialize};
use serde_json::Value;

// The controller builds an action's patch with it; kept here so its callers need no change.
pub use plumb_model::go::merge_patch::merge_patch;

use crate::customizations_dir::{CustomizationsDir, DirError};
use crate::lua::{LuaLimits, LuaScript, lua_to_json, run_script};

/// One action an object offers (Argo's `ResourceAction`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAction {
    /// The action's name (`restart`).
    #[serde(default)]
    pub name: String,
    /// Offered but not runnable now (`resume` of a CronJob that is not suspended).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// The UI's icon, kept for Argo compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_class: Option<String>,
    /// The UI's label, kept for Argo compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Parameters the action takes (`[{name}]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Value>,
}

/// What an action does to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Change the object the action ran on (a merge patch of the difference).
    Patch,
    /// Create a new object.
    Create,
}

/// One object an action changes or creates.
#[derive(Debug, Clone, PartialEq)]
pub struct ImpactedResource {
    /// Patch or create.
    pub operation: Operation,
    /// The whole object as the action wants it.
    pub resource: Value,
}

/// Why actions could not be listed or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// A settings entry is not the YAML Argo documents.
    #[error("settings key {key}: {message}")]
    Settings {
        /// The settings key (and entry).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A customizations directory could not be read (or a script in it was refused).
    #[error("customizations directory: {0}")]
    Directory(#[from] DirError),
    /// A script failed, hit a limit or returned something unusable.
    #[error("{origin}: {message}")]
    Script {
        /// Where the script came from.
        origin: String,
        /// The error.
        message: String,
    },
    /// The object offers no action of that name.
    #[error("action '{action}' is not available for {kind} {name}")]
    NotAvailable {
        /// The action asked for.
        action: String,
        /// `group/Kind` (or `Kind`).
        kind: String,
        /// `namespace/name` (or `name`).
        name: String,
    },
    /// The action is offered but disabled now.
    #[error("action '{action}' is disabled for {kind} {name}")]
    Disabled {
        /// The action asked for.
        action: String,
        /// `group/Kind` (or `Kind`).
        kind: String,
        /// `namespace/name` (or `name`).
        name: String,
    },
}

/// The actions of one group/kind from one source.
#[derive(Debug, Clone)]
struct KindActions {
    discovery: Option<LuaScript>,
    definitions: Vec<(String, LuaScript)>,
    merge_builtin: bool,
}

/// Every action source, indexed once from the settings.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    overrides: BTreeMap<String, KindActions>,
    /// From the customizations directories, the first directory's entry per kind.
    directories: BTreeMap<String, KindActions>,
    limits: LuaLimits,
}

/// The file names of Argo's layout.
const ACTIONS_DIR: &str = "actions";
const DISCOVERY_FILE: &str = "discovery.lua";
const ACTION_FILE: &str = "action.lua";

/// Reads `<kind dir>/actions`: its `discovery.lua` and each `<action>/action.lua`.
fn load_kind_actions(dir: &CustomizationsDir, actions: &Path) -> Result<KindActions, DirError> {
    let script = |rel: &Path, source: String| {
        LuaScript::new(source, false, dir.path(rel).display().to_string())
    };
    let discovery_rel = actions.join(DISCOVERY_FILE);
    let discovery = dir
        .read_script(&discovery_rel)?
        .filter(|s| !s.trim().is_empty())
        .map(|s| script(&discovery_rel, s));
    let mut definitions = Vec::new();
    for name in dir.subdirs(actions)? {
        let rel = actions.join(&name).join(ACTION_FILE);
        if let Some(source) = dir.read_script(&rel)? {
            definitions.push((name, script(&rel, source)));
        }
    }
    Ok(KindActions {
        discovery,
        definitions,
        merge_builtin: false,
    })
}

/// Indexes the actions of one directory by `<group>/<kind>` (core kinds: `<kind>`).
fn load_directory(root: &Path) -> Result<BTreeMap<String, KindActions>, DirError> {
    let dir = CustomizationsDir::open(root)?;
    let mut out = BTreeMap::new();
    for top in dir.subdirs(Path::new(""))? {
        let top_rel = PathBuf::from(&top);
        // A core kind (`ConfigMap/actions`), or a group whose kinds are below it.
        let core_actions = top_rel.join(ACTIONS_DIR);
        if dir.is_dir(&core_actions)? {
            out.insert(top.clone(), load_kind_actions(&dir, &core_actions)?);
        }
        for kind in dir.subdirs(&top_rel)? {
            if kind == ACTIONS_DIR {
                continue;
            }
            let actions = top_rel.join(&kind).join(ACTIONS_DIR);
            if dir.is_dir(&actions)? {
                out.insert(key_of(&top, &kind), load_kind_actions(&dir, &actions)?);
            }
        }
    }
    Ok(out)
}

/// The YAML of one `actions` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionsYaml {
    #[serde(rename = "discovery.lua", default)]
    discovery: Option<String>,
    #[serde(default)]
    definitions: Vec<DefinitionYaml>,
    #[serde(rename = "mergeBuiltinActions", default)]
    merge_builtin: bool,
}

#[derive(Debug, Deserialize)]
struct DefinitionYaml {
    name: String,
    #[serde(rename = "action.lua", default)]
    action: String,
}

fn key_of(group: &str, kind: &str) -> String {
    crate::lua::scripts::override_key(group, kind)
}

fn parse_entry(text: &str, origin: &str) -> Result<KindActions, ActionError> {
    let yaml: ActionsYaml = serde_saphyr::from_str(text).map_err(|e| ActionError::Settings {
        key: origin.to_string(),
        message: format!(
            "not Argo's actions YAML (discovery.lua, definitions, mergeBuiltinActions): {e}"
        ),
    })?;
    let discovery = yaml
        .discovery
        .filter(|s| !s.trim().is_empty())
        .map(|s| LuaScript::new(s, false, format!("{origin} discovery.lua")));
    let definitions = yaml
        .definitions
        .into_iter()
        .map(|d| {
            let script = LuaScript::new(
                d.action,
                false,
                format!("{origin} definitions[{}] action.lua", d.name),
            );
            (d.name, script)
        })
        .collect();
    Ok(KindActions {
        discovery,
        definitions,
        merge_builtin: yaml.merge_builtin,
    })
}

/// The group and kind of an object (`apps/v1` → `apps`).
fn group_kind(obj: &Value) -> (String, String) {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api_version
        .rsplit_once('/')
        .map(|(g, _)| g)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    (group.to_string(), kind.to_string())
}

fn object_name(obj: &Value) -> String {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    match obj.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

fn builtin(group: &str, kind: &str) -> Option<KindActions> {
    builtin::ACTIONS
        .iter()
        .find(|(g, k, _, _)| *g == group && *k == kind)
        .map(|(g, k, discovery, definitions)| {
            let key = key_of(g, k);
            KindActions {
                discovery: Some(LuaScript::new(
                    *discovery,
                    false,
                    format!("plumb built-in {key} discovery.lua"),
                )),
                definitions: definitions
                    .iter()
                    .map(|(name, source)| {
                        (
                            name.to_string(),
                            LuaScript::new(
                                *source,
                                false,
                                format!("plumb built-in {key} action {name}"),
                            ),
                        )
                    })
                    .collect(),
                merge_builtin: false,
            }
        })
}

impl Actions {
    /// Reads the action entries of the settings (`resource.customizations.actions.<group>_<kind>`
    /// keys win over the legacy map's `actions` field for the same kind).
    pub fn from_settings(settings: &Settings) -> Result<Self, ActionError> {
        let mut overrides = BTreeMap::new();
        if let Some(text) = settings
            .get(LEGACY_CUSTOMIZATIONS)
            .filter(|t| !t.trim().is_empty())
        {
            let map: BTreeMap<String, Value> =
                serde_saphyr::from_str(text).map_err(|e| ActionError::Settings {
                    key: LEGACY_CUSTOMIZATIONS.to_string(),
                    message: format!("not a YAML map of <group>/<kind> to customizations: {e}"),
                })?;
            for (key, entry) in map {
                let origin = format!("argocd-cm {LEGACY_CUSTOMIZATIONS} {key} actions");
                match entry.get("actions") {
                    None | Some(Value::Null) => {}
                    Some(Value::String(text)) => {
                        overrides.insert(key, parse_entry(text, &origin)?);
                    }
                    Some(_) => {
                        return Err(ActionError::Settings {
                            key: origin,
                            message: "expected a string holding the actions YAML".to_string(),
                        });
                    }
                }
            }
        }
        for (suffix, text) in settings.with_prefix(ACTIONS_PREFIX) {
            let (group, kind) = settings::split_group_kind_suffix(suffix);
            let origin = format!("argocd-cm {ACTIONS_PREFIX}{suffix}");
            overrides.insert(key_of(&group, &kind), parse_entry(text, &origin)?);
        }
        Ok(Self {
            overrides,
            directories: BTreeMap::new(),
            limits: LuaLimits::default(),
        })
    }

    /// Adds the actions of directories laid out like Argo's `resource_customizations`
    /// (`--customizations`), in order: for a kind several have, the first wins.
    pub fn with_directories(mut self, dirs: &[PathBuf]) -> Result<Self, ActionError> {
        for dir in dirs {
            for (key, actions) in load_directory(dir)? {
                self.directories.entry(key).or_insert(actions);
            }
        }
        Ok(self)
    }

    /// Uses other limits than the health scripts' defaults (tests).
    pub fn with_limits(mut self, limits: LuaLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The sources for a kind, in Argo's order: the settings entry, then (when there is no entry
    /// or it merges them) the scripts Argo calls built-in: a directory's, or else Plumb's own.
    fn sources(&self, group: &str, kind: &str) -> Vec<KindActions> {
        let mut out = Vec::new();
        let key = key_of(group, kind);
        let overridden = self.overrides.get(&key);
        if let Some(o) = overridden {
            out.push(o.clone());
        }
        if overridden.is_none_or(|o| o.merge_builtin) {
            if let Some(d) = self.directories.get(&key) {
                out.push(d.clone());
            } else if let Some(b) = builtin(group, kind) {
                out.push(b);
            }
        }
        out
    }

    /// The actions an object offers, sorted by name (later sources win for the same name, as in
    /// Argo, where the built-ins come last).
    pub fn discover(&self, obj: &Value) -> Result<Vec<ResourceAction>, ActionError> {
        let (group, kind) = group_kind(obj);
        let mut found = BTreeMap::new();
        for source in self.sources(&group, &kind) {
            let Some(script) = &source.discovery else {
                continue;
            };
            let value = run_script(script, &[("obj", obj)], &self.limits, table_to_json).map_err(
                |message| ActionError::Script {
                    origin: script.origin().to_string(),
                    message,
                },
            )?;
            let map = match value {
                Value::Object(map) => map,
                Value::Array(a) if a.is_empty() => Default::default(),
                _ => {
                    return Err(ActionError::Script {
                        origin: script.origin().to_string(),
                        message: "expected a table of action name to action".to_string(),
                    });
                }
            };
            for (name, spec) in map {
                let mut action: ResourceAction = match &spec {
                    Value::Object(_) => {
                        serde_json::from_value(spec.clone()).map_err(|e| ActionError::Script {
                            origin: script.origin().to_string(),
                            message: format!("action '{name}': {e}"),
                        })?
                    }
                    _ => ResourceAction::default(),
                };
                action.name = name.clone();
                found.insert(name, action);
            }
        }
        Ok(found.into_values().collect())
    }

    /// Runs one action on an object: what to patch or create. The action must be offered by
    /// discovery and not disabled; `params` become the global `actionParams` (name → value).
    pub fn run(
        &self,
        obj: &Value,
        action: &str,
        params: &BTreeMap<String, String>,
    ) -> Result<Vec<ImpactedResource>, ActionError> {
        let (group, kind) = group_kind(obj);
        let script = self.offered_script(obj, &group, &kind, action)?;
        // Argo always sets `actionParams`, an empty table when the action got none.
        let params_value = Value::Object(
            params
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        );
        let globals: Vec<(&str, &Value)> = vec![("obj", obj), ("actionParams", &params_value)];
        let script_error = |message: String| ActionError::Script {
            origin: script.origin().to_string(),
            message,
        };
        let value =
            run_script(&script, &globals, &self.limits, table_to_json).map_err(script_error)?;
        let impacted = impacted_resources(value).map_err(script_error)?;
        impacted
            .into_iter()
            .map(|r| own_patch(r, obj, &group, &kind).map_err(script_error))
            .collect()
    }

    /// The script of `action` for `obj`, which discovery must offer and not disable.
    fn offered_script(
        &self,
        obj: &Value,
        group: &str,
        kind: &str,
        action: &str,
    ) -> Result<LuaScript, ActionError> {
        let not_available = || ActionError::NotAvailable {
            action: action.to_string(),
            kind: key_of(group, kind),
            name: object_name(obj),
        };
        let offered = self.discover(obj)?;
        let Some(found) = offered.iter().find(|a| a.name == action) else {
            return Err(not_available());
        };
        if found.disabled {
            return Err(ActionError::Disabled {
                action: action.to_string(),
                kind: key_of(group, kind),
                name: object_name(obj),
            });
        }
        self.sources(group, kind)
            .into_iter()
            .find_map(|s| {
                s.definitions
                    .into_iter()
                    .find(|(name, _)| name == action)
                    .map(|(_, script)| script)
            })
            .ok_or_else(not_available)
    }
}

/// What an action script returned, as operations: a list of them, or the object to patch.
fn impacted_resources(value: Value) -> Result<Vec<ImpactedResource>, String> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| impacted_from(item, i))
            .collect::<Result<Vec<_>, String>>(),
        Value::Object(_) => Ok(vec![ImpactedResource {
            operation: Operation::Patch,
            resource: value,
        }]),
        _ => Err("expected the object or a list of operations".into()),
    }
}

/// A patch must be of the object the action ran on; its result is cleaned against it.
fn own_patch(
    mut r: ImpactedResource,
    obj: &Value,
    group: &str,
    kind: &str,
) -> Result<ImpactedResource, String> {
    if r.operation == Operation::Patch {
        if !same_object(&r.resource, obj) {
            return Err(format!(
                "the action returned a patch of {} {}, not of the {} {} it ran on; an action may only patch its own object",
                describe_kind(&r.resource),
                object_name(&r.resource),
                key_of(group, kind),
                object_name(obj),
            ));
        }
        r.resource = clean::clean_returned(r.resource, obj);
    }
    Ok(r)
}

fn describe_kind(obj: &Value) -> String {
    let (g, k) = group_kind(obj);
    key_of(&g, &k)
}

/// Same group, kind, namespace and name.
fn same_object(a: &Value, b: &Value) -> bool {
    group_kind(a) == group_kind(b)
        && a.pointer("/metadata/name") == b.pointer("/metadata/name")
        && a.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            == b.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
}

fn impacted_from(item: Value, index: usize) -> Result<ImpactedResource, String> {
    let operation = match item.get("operation").and_then(Value::as_str) {
        Some("patch") => Operation::Patch,
        Some("create") => Operation::Create,
        Some(other) => {
            return Err(format!(
                "entry {index}: unsupported operation '{other}' (patch or create)"
            ));
        }
        None => return Err(format!("entry {index}: no operation (patch or create)")),
    };
    let resource = match item.get("resource") {
        Some(r @ Value::Object(_)) => r.clone(),
        _ => return Err(format!("entry {index}: no resource object")),
    };
    Ok(ImpactedResource {
        operation,
        resource,
    })
}

/// The script's result must be a table, as Argo requires.
fn table_to_json(value: mlua::Value) -> Result<Value, String> {
    match value {
        mlua::Value::Table(_) => lua_to_json(value),
        other => {
            let type_name = match other {
                mlua::Value::Integer(_) | mlua::Value::Number(_) => "number",
                ref v => v.type_name(),
            };
            Err(format!(
                "expect table output from Lua script, not {type_name}"
            ))
        }
    }
}
