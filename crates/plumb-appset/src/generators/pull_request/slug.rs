//! `gosimple/slug`'s `Make` as Argo's pullRequest generator configures it (`MaxLength = 50`,
//! `CustomSub = {"_": "-"}`), for `branch_slug` and `target_branch_slug`. Own code because the
//! exact steps (substitutions, transliteration, lower case, smart truncation at a dash) decide
//! Application names, which must match Argo's.

/// The slug of `text`, at most 50 characters.
pub(crate) fn make(text: &str) -> String {
    const MAX: usize = 50;
    // CustomSub first, then the English rune substitutions.
    let text = text
        .trim()
        .replace('_', "-")
        .replace('&', "and")
        .replace('@', "at");
    // unidecode: every non-ASCII character to its closest ASCII spelling.
    let text = deunicode::deunicode(&text).to_lowercase();
    let mut slug = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '-'
        };
        if c == '-' && slug.ends_with('-') {
            continue;
        }
        slug.push(c);
    }
    let slug = slug.trim_matches(|c| c == '-' || c == '_');
    smart_truncate(slug, MAX).to_owned()
}

/// Cut at the last `-` at or before `max`, or at `max` when there is none.
fn smart_truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let bytes = text.as_bytes();
    (0..=max)
        .rev()
        .find(|&i| bytes[i] == b'-')
        .map_or(&text[..max], |i| &text[..i])
}

#[cfg(test)]
mod tests {
    use super::make;

    /// Expected values printed by gosimple/slug v1.15.0 (Argo's) with Argo's two settings.
    #[test]
    fn as_gosimple_slug_with_argos_settings() {
        assert_eq!(make("日本語-branch"), "ri-ben-yu-branch");
        assert_eq!(make("a_-_b"), "a-b");
        assert_eq!(make("release/v1.2.3"), "release-v1-2-3");
        assert_eq!(make("feature/add_login"), "feature-add-login");
        assert_eq!(
            make("  Fix: Crash & Burn @ Home!  "),
            "fix-crash-and-burn-at-home"
        );
        assert_eq!(make("main"), "main");
        assert_eq!(make("Über-Straße"), "uber-strasse");
        assert_eq!(make("--a--b--"), "a-b");
        let long = "feature/this-is-a-very-long-branch-name-that-goes-on-and-on";
        let s = make(long);
        assert_eq!(s, "feature-this-is-a-very-long-branch-name-that-goes");
        assert!(s.len() <= 50);
        assert_eq!(make(&"x".repeat(80)), "x".repeat(50));
    }
}
