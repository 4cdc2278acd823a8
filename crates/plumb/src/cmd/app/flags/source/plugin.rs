//! The config management plugin flags of `app create`, `app set` and `app unset`: the plugin's
//! name and its env entries.

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::{ApplicationSource, EnvEntry, PluginSource};

/// `--config-management-plugin` and `--plugin-env`.
#[derive(Debug, Clone, Default, Args)]
pub struct PluginArgs {
    /// Config management plugin name.
    #[arg(long, value_name = "NAME")]
    pub config_management_plugin: Option<String>,
    /// Additional plugin envs (NAME=VALUE).
    #[arg(long = "plugin-env", value_name = "NAME=VALUE")]
    pub plugin_envs: Vec<String>,
}

impl PluginArgs {
    /// Whether any of these flags was given.
    pub fn any(&self) -> bool {
        self.config_management_plugin.is_some() || !self.plugin_envs.is_empty()
    }

    /// `--config-management-plugin`: a plugin block holding only the name.
    pub fn apply_name(&self, source: &mut ApplicationSource) {
        if let Some(name) = &self.config_management_plugin {
            source.plugin = Some(PluginSource {
                name: Some(name.clone()),
                ..Default::default()
            });
        }
    }

    /// `--plugin-env`: replaces the entry of the same name, else appends.
    pub fn apply_env(&self, source: &mut ApplicationSource) -> Result<()> {
        if self.plugin_envs.is_empty() {
            return Ok(());
        }
        let plugin = source.plugin.get_or_insert_with(PluginSource::default);
        for text in &self.plugin_envs {
            let Some((name, value)) = text.split_once('=').filter(|(n, _)| !n.is_empty()) else {
                bail!("Expected env entry of the form: param=value. Received: {text}");
            };
            let env = plugin.env.get_or_insert_with(Vec::new);
            let entry = EnvEntry {
                name: name.to_string(),
                value: value.to_string(),
            };
            match env.iter_mut().find(|e| e.name == name) {
                Some(existing) => *existing = entry,
                None => env.push(entry),
            }
        }
        Ok(())
    }
}

/// The plugin flag of `app unset`.
#[derive(Debug, Clone, Default, Args)]
pub struct PluginUnsetArgs {
    /// Unset plugin env variables (e.g --plugin-env name).
    #[arg(long = "plugin-env", value_name = "NAME")]
    pub plugin_envs: Vec<String>,
}

impl PluginUnsetArgs {
    /// Removes the named env entries; `None` when no plugin flag was given, else whether any was
    /// removed.
    pub fn unset(&self, plugin: &mut PluginSource) -> Option<bool> {
        if self.plugin_envs.is_empty() {
            return None;
        }
        let mut updated = false;
        if let Some(env) = plugin.env.as_mut() {
            for name in &self.plugin_envs {
                if let Some(i) = env.iter().position(|e| &e.name == name) {
                    env.remove(i);
                    updated = true;
                }
            }
        }
        Some(updated)
    }
}
