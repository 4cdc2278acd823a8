//! `plumb admin lint-ignores`: audits ignore rules (settings and Applications) for rules that
//! would hide images, securityContext and privilege settings, RBAC or webhook configurations,
//! and for rules that do not compile. Exit 0 when clean, 1 when a sensitive rule is found, 2
//! when a rule or file is invalid.

use std::path::PathBuf;

use clap::Args;
use plumb_diff::{DiffSettings, IgnoreOptions, IgnoreRules, sensitive_findings};

use crate::cmd::diff::{read_rules, read_settings};
use crate::exit::Outcome;

/// Audit ignoreDifferences rules for ones that would hide sensitive fields.
///
/// Reads the settings ConfigMap (resource.customizations.ignoreDifferences.*, the legacy
/// resource.customizations map) and any Application manifests given, and lists every rule that
/// would hide container images, securityContext or privilege settings, RBAC rules or subjects,
/// or webhook configurations. Such rules are refused at diff time unless
/// plumb.ignoreDifferences.allowSensitive is "true".
#[derive(Debug, Args)]
pub struct LintIgnoresArgs {
    /// Settings ConfigMap YAML with argocd-cm keys.
    #[arg(long, value_name = "FILE")]
    settings: PathBuf,

    /// Application manifests whose spec.ignoreDifferences to audit too.
    #[arg(value_name = "APPLICATION.yaml")]
    applications: Vec<PathBuf>,
}

/// Runs `plumb admin lint-ignores`.
pub fn run(args: LintIgnoresArgs) -> anyhow::Result<Outcome> {
    let settings = read_settings(&args.settings)?;
    let diff_settings = DiffSettings::from_settings(&settings)?;
    let mut rules = diff_settings.rules.clone();
    for app in &args.applications {
        rules.extend(read_rules(app)?);
    }
    let mut invalid = 0;
    for rule in &rules {
        let opts = IgnoreOptions {
            allow_sensitive: true,
            ..Default::default()
        };
        if let Err(e) = IgnoreRules::compile(vec![rule.clone()], opts) {
            println!("invalid: {e}");
            invalid += 1;
        }
    }
    let findings = sensitive_findings(&rules);
    for f in &findings {
        println!("sensitive: {f}");
    }
    let allowed = if diff_settings.allow_sensitive {
        " (allowed: plumb.ignoreDifferences.allowSensitive is \"true\")"
    } else {
        ""
    };
    println!(
        "{} rule(s) checked, {} sensitive{allowed}, {} invalid",
        rules.len(),
        findings.len(),
        invalid
    );
    Ok(if invalid > 0 {
        Outcome::Error
    } else if findings.is_empty() {
        Outcome::Success
    } else {
        Outcome::Negative
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: LintIgnoresArgs,
    }

    #[test]
    fn test_settings_and_applications() {
        let cli = Cli::try_parse_from(["x", "--settings", "cm.yaml", "a.yaml", "b.yaml"]).unwrap();
        assert_eq!(cli.args.settings, PathBuf::from("cm.yaml"));
        assert_eq!(cli.args.applications.len(), 2);
        assert!(
            Cli::try_parse_from(["x", "a.yaml"]).is_err(),
            "--settings is required"
        );
    }
}
