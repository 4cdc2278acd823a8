//! `plumb completion bash|zsh|fish`: shell completion scripts generated from the command-line
//! definition by clap's own generator (`clap_complete`), so they never drift from the flags.

use anyhow::Result;
use clap::{Args, ValueEnum};
use clap_complete::Shell;

use crate::exit::Outcome;

/// The shells `plumb completion` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
}

/// `plumb completion`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Bash, for this session\n  source <(plumb completion bash)\n\n  # Zsh, installed\n  plumb completion zsh > \"${fpath[1]}/_plumb\"\n\n  # Fish\n  plumb completion fish > ~/.config/fish/completions/plumb.fish"
)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: CompletionShell,
}

/// The completion script for `cli` in one shell.
pub fn script(shell: CompletionShell, cli: &mut clap::Command) -> String {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, cli, "plumb", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `plumb completion`: the script on stdout.
pub fn run(args: CompletionArgs, mut cli: clap::Command) -> Result<Outcome> {
    print!("{}", script(args.shell, &mut cli));
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn scripts_know_the_new_verbs_and_flags() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let text = script(shell, &mut crate::Cli::command());
            for word in [
                "patch-resource",
                "delete-resource",
                "actions",
                "helm-set",
                "kustomize-image",
                "completion",
            ] {
                assert!(text.contains(word), "{shell:?} lacks {word}");
            }
        }
        let bash = script(CompletionShell::Bash, &mut crate::Cli::command());
        assert!(bash.starts_with("_plumb() {"), "{}", &bash[..40]);
        assert!(bash.contains("complete -F _plumb"));
    }
}
