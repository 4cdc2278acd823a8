//! `kustomize.buildOptions` of argocd-cm: extra arguments of every `kustomize build`, split on
//! white space as Argo CD splits them (`strings.Fields`).
//!
//! Only options that keep Plumb's trust boundary are taken: `--load-restrictor` (Plumb checks
//! every path a kustomization names to stay in the checkout before kustomize runs, and kustomize
//! sees nothing else in its sandbox, so `LoadRestrictionsNone` reaches only the repository's own
//! files), `--stack-trace`, and the Helm capability flags. Options that run programs
//! (`--enable-helm`, `--enable-exec`, `--enable-alpha-plugins`, `--helm-command`), reach the
//! network or the host (`--network`, `--mount`, `--env`, `--as-current-user`) or write files
//! (`--output`) are refused, as is anything else: the render fails naming the setting.

use crate::error::{Error, Result};

/// The argocd-cm key.
pub const BUILD_OPTIONS_KEY: &str = "kustomize.buildOptions";

/// Options taken with a value (`--flag value` or `--flag=value`), and the values allowed
/// (`None`: any value).
const WITH_VALUE: [(&str, Option<&[&str]>); 4] = [
    (
        "--load-restrictor",
        Some(&["LoadRestrictionsNone", "LoadRestrictionsRootOnly"]),
    ),
    (
        "--load_restrictor",
        Some(&["LoadRestrictionsNone", "LoadRestrictionsRootOnly"]),
    ),
    ("--helm-kube-version", None),
    ("--helm-api-versions", None),
];
/// Options without a value.
const FLAGS: [&str; 1] = ["--stack-trace"];

/// The arguments of `text`, or why they are refused.
pub fn parse_build_options(text: &str) -> Result<Vec<String>> {
    let refuse = |expected: &'static str| Error::InvalidSetting {
        key: BUILD_OPTIONS_KEY,
        value: text.to_owned(),
        expected,
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (word, None),
        };
        if FLAGS.contains(&name) && inline.is_none() {
            out.push(word.to_owned());
            i += 1;
            continue;
        }
        let Some((_, allowed)) = WITH_VALUE.iter().find(|(n, _)| *n == name) else {
            return Err(refuse(
                "a list of options Plumb applies (--load-restrictor, --stack-trace, \
                 --helm-kube-version, --helm-api-versions; options that run programs, reach the \
                 network or write files are refused)",
            ));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                *words
                    .get(i)
                    .ok_or_else(|| refuse("options with their values"))?
            }
        };
        if allowed.is_some_and(|a| !a.contains(&value)) {
            return Err(refuse(
                "--load-restrictor LoadRestrictionsNone or LoadRestrictionsRootOnly",
            ));
        }
        out.push(format!("{name}={value}"));
        i += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_argo_and_keeps_the_boundary() {
        assert_eq!(
            parse_build_options("  --load-restrictor LoadRestrictionsNone\t--stack-trace ")
                .unwrap(),
            ["--load-restrictor=LoadRestrictionsNone", "--stack-trace"]
        );
        assert_eq!(parse_build_options("").unwrap(), Vec::<String>::new());
        for bad in [
            "--enable-helm",
            "--enable-exec",
            "--enable-alpha-plugins",
            "--load-restrictor",
            "--load-restrictor Anything",
            "--helm-command /bin/sh",
            "--network",
            "--mount type=bind,src=/,dst=/x",
            "-e SECRET",
            "-o /tmp/x",
            "--stack-trace=false",
            "build /etc",
        ] {
            let err = parse_build_options(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("setting kustomize.buildOptions"),
                "{bad}: {err}"
            );
        }
    }
}
