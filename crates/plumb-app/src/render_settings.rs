//! The renderer configured from the settings ConfigMap, one way for the controller and the API
//! server (so `plumb server`'s manifests, diffs and comparisons render exactly what the
//! controller renders): the render limits of `plumb.render.*`, the plugins directory of
//! `plumb.plugins.dir`, and argocd-cm's `kustomize.buildOptions`.

use std::path::PathBuf;

use plumb_model::Settings;
use plumb_source::{Limits, Renderer};

/// argocd-cm's extra `kustomize build` flags (Argo's `kustomize.buildOptions`).
pub const KUSTOMIZE_BUILD_OPTIONS: &str = "kustomize.buildOptions";

/// What the process was started with, which the settings refine.
#[derive(Debug, Clone, Default)]
pub struct RenderDefaults {
    /// The limits before the settings' `plumb.render.*` keys.
    pub limits: Limits,
    /// `--plugin-dir`, used unless the settings' `plumb.plugins.dir` names one.
    pub plugins_dir: Option<PathBuf>,
}

/// Gives `renderer` what `settings` ask for on top of `defaults`. A limit the settings spell
/// wrong keeps the default (the controller reports the bad key when it reads the settings).
pub fn apply(renderer: &Renderer, settings: &Settings, defaults: &RenderDefaults) {
    renderer.set_limits(limits(settings, defaults));
    renderer.set_plugins_dir(plugins_dir(settings, defaults));
    renderer.set_kustomize_build_options(settings.get(KUSTOMIZE_BUILD_OPTIONS));
}

/// The render limits: the defaults with the settings' `plumb.render.*` keys.
pub fn limits(settings: &Settings, defaults: &RenderDefaults) -> Limits {
    let base = defaults.limits.clone();
    base.clone().with_settings(settings).unwrap_or(base)
}

/// The directory config management plugins are read from: the settings' `plumb.plugins.dir`,
/// else the default.
pub fn plugins_dir(settings: &Settings, defaults: &RenderDefaults) -> Option<PathBuf> {
    settings
        .get(plumb_model::settings::PLUGINS_DIR)
        .filter(|d| !d.trim().is_empty())
        .map(|d| PathBuf::from(d.trim()))
        .or_else(|| defaults.plugins_dir.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_refine_the_defaults() {
        let defaults = RenderDefaults {
            limits: Limits::default(),
            plugins_dir: Some(PathBuf::from("/opt/plugins")),
        };
        let none = Settings::default();
        assert_eq!(
            plugins_dir(&none, &defaults),
            Some(PathBuf::from("/opt/plugins"))
        );
        let set = Settings::from_data(
            [(
                plumb_model::settings::PLUGINS_DIR.to_string(),
                " /srv/p ".to_string(),
            )]
            .into_iter()
            .collect(),
        );
        assert_eq!(plugins_dir(&set, &defaults), Some(PathBuf::from("/srv/p")));
    }
}
