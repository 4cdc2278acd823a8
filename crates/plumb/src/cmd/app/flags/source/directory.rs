//! The directory flags of `app create` and `app set`: recursion and include/exclude globs.

use clap::Args;
use plumb_model::application::{ApplicationSource, DirectorySource};

/// `--directory-*`.
#[derive(Debug, Clone, Default, Args)]
pub struct DirectoryArgs {
    /// Recurse directory.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub directory_recurse: Option<bool>,
    /// Set glob expression used to exclude files from application source path.
    #[arg(long, value_name = "GLOB")]
    pub directory_exclude: Option<String>,
    /// Set glob expression used to include files from application source path.
    #[arg(long, value_name = "GLOB")]
    pub directory_include: Option<String>,
}

impl DirectoryArgs {
    /// Whether any of these flags was given.
    pub fn any(&self) -> bool {
        self.directory_recurse.is_some()
            || self.directory_exclude.is_some()
            || self.directory_include.is_some()
    }

    /// Applies the flags in pflag's order (exclude, include, recurse).
    pub fn apply(&self, source: &mut ApplicationSource) {
        if let Some(glob) = &self.directory_exclude {
            directory(source).exclude = Some(glob.clone());
        }
        if let Some(glob) = &self.directory_include {
            directory(source).include = Some(glob.clone());
        }
        if let Some(recurse) = self.directory_recurse {
            directory(source).recurse = Some(recurse);
        }
    }
}

/// The source's directory block, added when missing.
pub fn directory(source: &mut ApplicationSource) -> &mut DirectorySource {
    source
        .directory
        .get_or_insert_with(DirectorySource::default)
}
