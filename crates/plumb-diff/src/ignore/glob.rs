//! The globs rules match groups and kinds with.

/// Argo's glob (`util/glob`): `*` any run of characters, `?` one character; everything else
/// literal. An empty pattern matches only the empty string (the core group).
pub(crate) fn matches_glob(text: &str, pattern: &str) -> bool {
    fn go(t: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|i| go(&t[i..], rest)),
            Some(('?', rest)) => !t.is_empty() && go(&t[1..], rest),
            Some((c, rest)) => t.first() == Some(c) && go(&t[1..], rest),
        }
    }
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    go(&t, &p)
}
