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

/// Replaces known secret values with `***` (after stripping URL credentials).
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
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
        Self { secrets }
    }

    /// `text` with URL credentials stripped and every known secret replaced by `***`.
    pub fn clean(&self, text: &str) -> String {
        let mut out = strip_url_credentials(text);
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "***");
            }
        }
        out
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
}
