//! Which health script applies to an object, in Argo CD's order (`util/lua/lua.go:
//! GetHealthScript`):
//!
//! 1. an exact `<group>/<kind>` entry from the settings (`resource.customizations.health.<group>_<kind>`
//!    keys, or the legacy `resource.customizations` YAML map), with that entry's `useOpenLibs`;
//! 2. a glob entry of the legacy map (`*.aws.crossplane.io/*`), first match in key order;
//! 3. `<dir>/<group>/<kind>/health.lua` in a directory laid out like Argo's
//!    `resource_customizations` (core kinds: `<dir>/<kind>/health.lua`), directories in the order
//!    given, open libraries on as for Argo's bundled scripts;
//! 4. a wildcard directory of those (`_` stands for `*`: `_.crossplane.io/_`), first in path order;
//! 5. Plumb's own scripts ([`super::builtin`]), last, so every user source wins over them.
//!
//! Argo iterates a Go map at step 2, so its pick among several matching globs is random; Plumb
//! takes the first in key order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plumb_model::settings::{
    self, HEALTH_PREFIX, LEGACY_CUSTOMIZATIONS, Settings, USE_OPEN_LIBS_PREFIX,
};
use serde_json::Value;

use super::LuaScript;
use crate::customizations_dir::CustomizationsDir;
use crate::error::{Error, Result};

const SCRIPT_FILE: &str = "health.lua";

/// One settings entry: a health script and whether it gets the open libraries.
#[derive(Debug, Default)]
struct Override {
    health_lua: Option<String>,
    open_libs: bool,
    origin: String,
}

/// Scripts from one `resource_customizations`-style directory.
#[derive(Debug, Default)]
struct Directory {
    exact: BTreeMap<String, LuaScript>,
    /// (group pattern, kind pattern, script), sorted by path.
    wildcards: Vec<(String, String, LuaScript)>,
}

/// Every script source, indexed once.
#[derive(Debug, Default)]
pub(crate) struct ScriptSources {
    exact: BTreeMap<String, LuaScript>,
    globs: Vec<(String, LuaScript)>,
    dirs: Vec<Directory>,
    builtin: Builtin,
}

/// Plumb's own scripts, indexed once per process.
#[derive(Debug)]
struct Builtin {
    exact: BTreeMap<String, LuaScript>,
    /// Scripts for every kind of a group.
    groups: BTreeMap<String, LuaScript>,
}

impl Default for Builtin {
    fn default() -> Self {
        static INDEX: std::sync::OnceLock<(
            BTreeMap<String, LuaScript>,
            BTreeMap<String, LuaScript>,
        )> = std::sync::OnceLock::new();
        let (exact, groups) = INDEX.get_or_init(|| {
            let (mut exact, mut groups) = (BTreeMap::new(), BTreeMap::new());
            for (group, kind, source) in super::builtin::SCRIPTS {
                let key = override_key(group, kind);
                let script = LuaScript::new(*source, false, format!("plumb built-in {key}"));
                if *kind == "*" {
                    groups.insert(group.to_string(), script);
                } else {
                    exact.insert(key, script);
                }
            }
            (exact, groups)
        });
        Builtin {
            exact: exact.clone(),
            groups: groups.clone(),
        }
    }
}

impl Builtin {
    fn find(&self, group: &str, key: &str) -> Option<&LuaScript> {
        self.exact.get(key).or_else(|| self.groups.get(group))
    }
}

/// Argo's override key: `<group>/<kind>`, or just `<kind>` for the core group.
pub(crate) fn override_key(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

impl ScriptSources {
    /// Reads the health entries of the settings and indexes the directories.
    pub(crate) fn load(settings: &Settings, dirs: &[PathBuf]) -> Result<Self> {
        let mut overrides = legacy_overrides(settings)?;
        for (suffix, script) in settings.with_prefix(HEALTH_PREFIX) {
            let (group, kind) = settings::split_group_kind_suffix(suffix);
            let entry = overrides.entry(override_key(&group, &kind)).or_default();
            entry.health_lua = Some(script.to_string());
            entry.origin = format!("argocd-cm {HEALTH_PREFIX}{suffix}");
        }
        for (suffix, value) in settings.with_prefix(USE_OPEN_LIBS_PREFIX) {
            let (group, kind) = settings::split_group_kind_suffix(suffix);
            let key = format!("{USE_OPEN_LIBS_PREFIX}{suffix}");
            let open = parse_bool(value).ok_or_else(|| Error::InvalidSetting {
                key: key.clone(),
                value: value.to_string(),
                expected: "true or false",
            })?;
            overrides
                .entry(override_key(&group, &kind))
                .or_default()
                .open_libs = open;
        }

        let mut sources = ScriptSources::default();
        for (key, o) in overrides {
            let Some(source) = o.health_lua.filter(|s| !s.trim().is_empty()) else {
                continue;
            };
            let script = LuaScript::new(source, o.open_libs, o.origin);
            if key.contains(['*', '?']) {
                sources.globs.push((key, script));
            } else {
                sources.exact.insert(key, script);
            }
        }
        for dir in dirs {
            sources.dirs.push(load_directory(dir)?);
        }
        Ok(sources)
    }

    /// The script for an object's group and kind, if any source has one.
    pub(crate) fn find(&self, group: &str, kind: &str) -> Option<&LuaScript> {
        let key = override_key(group, kind);
        if let Some(script) = self.exact.get(&key) {
            return Some(script);
        }
        if let Some((_, script)) = self
            .globs
            .iter()
            .find(|(pattern, _)| glob_match(pattern, &key))
        {
            return Some(script);
        }
        if let Some(script) = self.dirs.iter().find_map(|d| d.exact.get(&key)) {
            return Some(script);
        }
        if group.is_empty() {
            return self.builtin.find(group, &key);
        }
        self.dirs
            .iter()
            .find_map(|d| {
                d.wildcards
                    .iter()
                    .find(|(g, k, _)| glob_match(g, group) && glob_match(k, kind))
                    .map(|(_, _, script)| script)
            })
            .or_else(|| self.builtin.find(group, &key))
    }
}

/// Entries of the legacy `resource.customizations` YAML map (`health.lua`,
/// `health.lua.useOpenLibs`; the other fields belong to other engines).
fn legacy_overrides(settings: &Settings) -> Result<BTreeMap<String, Override>> {
    let mut out = BTreeMap::new();
    let Some(text) = settings.get(LEGACY_CUSTOMIZATIONS) else {
        return Ok(out);
    };
    if text.trim().is_empty() {
        return Ok(out);
    }
    let map: BTreeMap<String, Value> =
        serde_saphyr::from_str(text).map_err(|source| Error::LegacyCustomizations {
            key: LEGACY_CUSTOMIZATIONS,
            source: Box::new(source),
        })?;
    for (key, entry) in map {
        let health_lua = entry
            .get("health.lua")
            .and_then(Value::as_str)
            .map(str::to_string);
        let open_libs = match entry.get("health.lua.useOpenLibs").cloned() {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(Value::String(s)) if parse_bool(&s).is_some() => parse_bool(&s).unwrap_or(false),
            Some(other) => {
                return Err(Error::InvalidSetting {
                    key: format!("{LEGACY_CUSTOMIZATIONS}: {key}: health.lua.useOpenLibs"),
                    value: other.to_string(),
                    expected: "true or false",
                });
            }
        };
        let origin = format!("argocd-cm {LEGACY_CUSTOMIZATIONS} {key}");
        out.insert(
            key,
            Override {
                health_lua,
                open_libs,
                origin,
            },
        );
    }
    Ok(out)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" | "" => Some(false),
        _ => None,
    }
}

/// Indexes `<dir>/<group>/<kind>/health.lua` and `<dir>/<kind>/health.lua`, read beneath the
/// directory ([`CustomizationsDir`]).
fn load_directory(root: &Path) -> Result<Directory> {
    let dir = CustomizationsDir::open(root)?;
    let mut out = Directory::default();
    for group in dir.subdirs(Path::new(""))? {
        let group_rel = PathBuf::from(&group);
        if let Some(script) = read_script(&dir, &group_rel.join(SCRIPT_FILE))? {
            out.exact.insert(group.clone(), script);
        }
        for kind in dir.subdirs(&group_rel)? {
            let Some(script) = read_script(&dir, &group_rel.join(&kind).join(SCRIPT_FILE))? else {
                continue;
            };
            if group.contains('_') || kind.contains('_') {
                out.wildcards
                    .push((group.replace('_', "*"), kind.replace('_', "*"), script));
            } else {
                out.exact.insert(format!("{group}/{kind}"), script);
            }
        }
    }
    Ok(out)
}

fn read_script(dir: &CustomizationsDir, rel: &Path) -> Result<Option<LuaScript>> {
    Ok(dir
        .read_script(rel)?
        .map(|source| LuaScript::new(source, true, dir.path(rel).display().to_string())))
}

/// Glob match with `*` (any run, `/` included) and `?` (one character), as Argo's `util/glob`.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(
            "*.aws.crossplane.io/*",
            "ec2.aws.crossplane.io/Instance"
        ));
        assert!(glob_match(
            "ec2.aws.crossplane.io/*",
            "ec2.aws.crossplane.io/VPC"
        ));
        assert!(!glob_match(
            "ec2.aws.crossplane.io/*",
            "s3.aws.crossplane.io/Bucket"
        ));
        assert!(glob_match("*", "apps/Deployment"));
        assert!(glob_match("apps/Deploymen?", "apps/Deployment"));
        assert!(!glob_match("apps/Deploymen?", "apps/Deploymentx"));
        assert!(glob_match("*.crossplane.io", "pkg.crossplane.io"));
        assert!(!glob_match("*.crossplane.io", "crossplane.io"));
    }

    #[test]
    fn keys_for_core_and_grouped_kinds() {
        assert_eq!(
            override_key("", "PersistentVolumeClaim"),
            "PersistentVolumeClaim"
        );
        assert_eq!(
            override_key("cert-manager.io", "Certificate"),
            "cert-manager.io/Certificate"
        );
    }
}
