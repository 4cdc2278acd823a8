//! Keeping credentials out of errors and logs.
//!
//! Repository URLs may carry `user:password@`; tool output and Git errors may echo either. Every
//! string that leaves this crate in an error passes through [`strip_url_credentials`] or a
//! [`Redactor`] holding the secrets in play.

/// Removes the `user:password@` part of every URL in `text`.
///
/// ```
/// use plumb_source::strip_url_credentials;
/// let s = strip_url_credentials("fetch https://bob:hunter2@git.example.com/a.git failed");
/// assert_eq!(s, "fetch https://git.example.com/a.git failed");
/// ```
pub fn strip_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        let end = tail.find(|c: char| c.is_whitespace() || c == '/' || c == '"' || c == '\'');
        let authority = &tail[..end.unwrap_or(tail.len())];
        match authority.rfind('@') {
            Some(at) => rest = &tail[at + 1..],
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Replaces known secret values with `***` (after stripping URL credentials), and, when given
/// the roots of a render ([`Redactor::with_paths`]), absolute paths: a path inside a root
/// becomes the name it has there, any other absolute path `<path>`, so cache paths (and the
/// salted hashes in them) never reach an Application's conditions.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
    /// (root, what it is shown as), longest root first.
    paths: Vec<(String, String)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor hiding `secrets` (empty strings are ignored).
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(Into::into)
            .filter(|s| !s.is_empty())
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self {
            secrets,
            paths: Vec::new(),
        }
    }

    /// The same redactor, also rewriting absolute paths: one inside a root given here is shown
    /// relative to it, prefixed by its label (`""`: the repository root itself), any other as
    /// `<path>`.
    pub(crate) fn with_paths<I>(mut self, roots: I) -> Self
    where
        I: IntoIterator<Item = (std::path::PathBuf, String)>,
    {
        self.paths.extend(
            roots
                .into_iter()
                .map(|(root, label)| (root.display().to_string(), label))
                .filter(|(root, _)| root.len() > 1),
        );
        self.paths
            .sort_by_key(|(root, _)| std::cmp::Reverse(root.len()));
        self
    }

    /// `text` with URL credentials stripped and every known secret replaced by `***`.
    pub fn clean(&self, text: &str) -> String {
        let mut out = strip_url_credentials(text);
        if !self.paths.is_empty() {
            out = self.clean_paths(&out);
        }
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "***");
            }
        }
        out
    }
}

impl Redactor {
    /// Rewrites every absolute path of `text` (see [`Redactor::with_paths`]).
    fn clean_paths(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut prev: Option<char> = None;
        while let Some(pos) = rest.find('/') {
            let before = &rest[..pos];
            let starts_path = before
                .chars()
                .next_back()
                .or(prev)
                .is_none_or(|c| !(c.is_alphanumeric() || "._-~+@$%*".contains(c)));
            out.push_str(before);
            let tail = &rest[pos..];
            let end = tail
                .find(|c: char| c.is_whitespace() || "'\"`()[]{},;:<>|".contains(c))
                .unwrap_or(tail.len());
            let token = &tail[..end];
            // `https://host/x` holds no path to hide; `file:///x` does.
            let url_authority = token.starts_with("//") && !token.starts_with("///");
            if starts_path && !url_authority {
                let slashes = if token.starts_with("///") { "//" } else { "" };
                out.push_str(slashes);
                out.push_str(&self.shown_as(&token[slashes.len()..]));
            } else {
                out.push_str(token);
            }
            prev = token.chars().next_back().or(prev);
            rest = &tail[end..];
        }
        out.push_str(rest);
        out
    }

    /// How one absolute path is shown: relative to the longest root holding it, else `<path>`.
    fn shown_as(&self, path: &str) -> String {
        for (root, label) in &self.paths {
            let Some(inside) = path.strip_prefix(root.as_str()) else {
                continue;
            };
            if !(inside.is_empty() || inside.starts_with('/')) {
                continue;
            }
            let inside = inside.trim_start_matches('/');
            return match (label.is_empty(), inside.is_empty()) {
                (true, true) => ".".to_owned(),
                (true, false) => inside.to_owned(),
                (false, true) => label.clone(),
                (false, false) => format!("{label}/{inside}"),
            };
        }
        "<path>".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_userinfo_from_every_url_and_keeps_the_rest() {
        let text = "a https://u:p@h1/x and ssh://git@h2:22/y, file:///tmp/r, http://h3/z@v";
        assert_eq!(
            strip_url_credentials(text),
            "a https://h1/x and ssh://h2:22/y, file:///tmp/r, http://h3/z@v"
        );
        assert_eq!(strip_url_credentials("no url"), "no url");
    }

    #[test]
    fn redactor_hides_secrets_that_appear_without_a_url() {
        let r = Redactor::new(["tok", "token-123", ""]);
        assert_eq!(
            r.clean("auth with token-123 failed (tok)"),
            "auth with *** failed (***)"
        );
        assert_eq!(format!("{r:?}"), "Redactor(2 secrets)");
    }

    #[test]
    fn paths_inside_the_checkout_become_relative_and_others_vanish() {
        let r = Redactor::new(["pw"]).with_paths([
            ("/var/cache/plumb/git/trees/9f2c".into(), String::new()),
            (
                "/var/cache/plumb/tmp/r1/remote/0".into(),
                "https://git.acme.io/team/base".to_owned(),
            ),
        ]);
        let text = "Error: accumulating resources from 'missing.yaml': evalsymlink failure on \
                    '/var/cache/plumb/git/trees/9f2c/k/missing.yaml' : lstat \
                    /var/cache/plumb/git/trees/9f2cd/x: no such file; clone \
                    file:///var/cache/plumb/git/repos/77ab.git//app (pw) in \
                    /var/cache/plumb/tmp/r1/remote/0/app, see https://kubectl.docs.kubernetes.io/x";
        assert_eq!(
            r.clean(text),
            "Error: accumulating resources from 'missing.yaml': evalsymlink failure on \
             'k/missing.yaml' : lstat <path>: no such file; clone file://<path> (***) in \
             https://git.acme.io/team/base/app, see https://kubectl.docs.kubernetes.io/x"
        );
        assert_eq!(r.clean("at /var/cache/plumb/git/trees/9f2c."), "at <path>");
        assert_eq!(r.clean("a/b and x=/etc/passwd"), "a/b and x=<path>");
    }
}
