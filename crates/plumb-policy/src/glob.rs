//! Argo CD's glob matching for project and window selectors: `*` matches any run of characters,
//! everything else literally.

/// Whether `text` matches `pattern`.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_runs_and_the_rest_is_literal() {
        assert!(glob("*", ""));
        assert!(glob("pay*api", "payments-api"));
        assert!(!glob("pay*api", "payments"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
    }
}
