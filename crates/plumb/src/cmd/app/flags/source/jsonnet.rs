//! The Jsonnet flags of `app create` and `app set`: top-level arguments, external variables and
//! library paths, kept in the directory block.

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::{ApplicationSource, JsonnetSource, JsonnetVar};

use super::directory::directory;

/// `--jsonnet-*`.
#[derive(Debug, Clone, Default, Args)]
pub struct JsonnetArgs {
    /// Jsonnet top level string arguments.
    #[arg(long = "jsonnet-tla-str", value_name = "NAME=VALUE")]
    pub jsonnet_tla_str: Vec<String>,
    /// Jsonnet top level code arguments.
    #[arg(long = "jsonnet-tla-code", value_name = "NAME=CODE")]
    pub jsonnet_tla_code: Vec<String>,
    /// Jsonnet string ext var.
    #[arg(long = "jsonnet-ext-var-str", value_name = "NAME=VALUE")]
    pub jsonnet_ext_var_str: Vec<String>,
    /// Jsonnet ext var.
    #[arg(long = "jsonnet-ext-var-code", value_name = "NAME=CODE")]
    pub jsonnet_ext_var_code: Vec<String>,
    /// Additional jsonnet libs (prefixed by repoRoot).
    #[arg(long = "jsonnet-libs", value_name = "PATH")]
    pub jsonnet_libs: Vec<String>,
}

impl JsonnetArgs {
    /// Whether any of these flags was given.
    pub fn any(&self) -> bool {
        !self.jsonnet_tla_str.is_empty()
            || !self.jsonnet_tla_code.is_empty()
            || !self.jsonnet_ext_var_str.is_empty()
            || !self.jsonnet_ext_var_code.is_empty()
            || !self.jsonnet_libs.is_empty()
    }

    /// Applies the flags in pflag's order (ext vars, libs, top-level arguments).
    pub fn apply(&self, source: &mut ApplicationSource) -> Result<()> {
        for (vars, code) in [
            (&self.jsonnet_ext_var_code, true),
            (&self.jsonnet_ext_var_str, false),
        ] {
            for text in vars {
                let var = jsonnet_var(text, code)?;
                jsonnet(source)
                    .ext_vars
                    .get_or_insert_with(Vec::new)
                    .push(var);
            }
        }
        if !self.jsonnet_libs.is_empty() {
            jsonnet(source)
                .libs
                .get_or_insert_with(Vec::new)
                .extend(self.jsonnet_libs.iter().cloned());
        }
        for (vars, code) in [
            (&self.jsonnet_tla_code, true),
            (&self.jsonnet_tla_str, false),
        ] {
            for text in vars {
                let var = jsonnet_var(text, code)?;
                jsonnet(source).tlas.get_or_insert_with(Vec::new).push(var);
            }
        }
        Ok(())
    }
}

fn jsonnet(source: &mut ApplicationSource) -> &mut JsonnetSource {
    directory(source)
        .jsonnet
        .get_or_insert_with(JsonnetSource::default)
}

fn jsonnet_var(text: &str, code: bool) -> Result<JsonnetVar> {
    let Some((name, value)) = text.split_once('=') else {
        bail!("Expected jsonnet variable of the form: name=value. Received: {text}");
    };
    Ok(JsonnetVar {
        name: name.to_string(),
        value: value.to_string(),
        code: Some(code),
    })
}
