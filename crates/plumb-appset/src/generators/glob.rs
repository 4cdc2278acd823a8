//! The three path-pattern dialects of Argo's git generator.
//!
//! Own code because Argo's results depend on each dialect's exact rules: Go's `path.Match` for
//! directories, `git ls-files` pathspecs for files by default (a `*` crosses `/`; a pattern
//! without wildcards also names everything below a directory), and `bmatcuk/doublestar` for
//! files with `applicationsetcontroller.enable.new.git.file.globbing`. Matching is linear in
//! practice (one backtrack point per segment, a table for `**`), whatever the pattern.

/// A malformed pattern (Argo logs it and treats it as matching nothing).
#[derive(Debug, PartialEq, Eq)]
pub struct BadPattern;

/// Go's `path.Match(pattern, name)`.
pub fn path_match(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let pats: Vec<&str> = pattern.split('/').collect();
    let names: Vec<&str> = name.split('/').collect();
    // Go checks the whole pattern even after a mismatch.
    for p in &pats {
        segment_match(p, "", '^')?;
    }
    if pats.len() != names.len() {
        return Ok(false);
    }
    for (p, n) in pats.iter().zip(&names) {
        if !segment_match(p, n, '^')? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `git ls-files -- PATHSPEC` lists `file` (a path relative to the root): a literal
/// match, a directory prefix of it up to the first wildcard, or `wildmatch` without
/// `WM_PATHNAME` (wildcards cross `/`).
pub fn pathspec_match(spec: &str, file: &str) -> Result<bool, BadPattern> {
    let literal_len = spec
        .find(|c| matches!(c, '*' | '?' | '[' | '\\'))
        .unwrap_or(spec.len());
    if literal_len == spec.len() {
        let dir = spec.trim_end_matches('/');
        return Ok(file == spec
            || dir.is_empty()
            || (file.starts_with(dir) && file.as_bytes().get(dir.len()) == Some(&b'/')));
    }
    if !file.starts_with(&spec[..literal_len]) {
        return Ok(false);
    }
    segment_match(spec, file, '!')
}

/// `doublestar.Match(pattern, name)`: `**` as a whole component matches any number of
/// components, `{a,b}` alternatives, `[!x]` or `[^x]` negation; other wildcards stay within
/// one component.
pub fn doublestar_match(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    for alt in expand_braces(pattern)? {
        let pats: Vec<&str> = alt.split('/').collect();
        let names: Vec<&str> = name.split('/').collect();
        if components_match(&pats, &names)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// At most this many alternatives from `{a,b}` groups (a hostile pattern cannot explode).
const MAX_ALTERNATIVES: usize = 256;

fn expand_braces(pattern: &str) -> Result<Vec<String>, BadPattern> {
    let Some(open) = pattern.find('{') else {
        return Ok(vec![pattern.to_owned()]);
    };
    let mut depth = 0;
    let mut close = None;
    let mut splits = Vec::new();
    for (i, c) in pattern[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => splits.push(open + i),
            _ => {}
        }
    }
    let close = close.ok_or(BadPattern)?;
    let mut bounds = vec![open];
    bounds.extend(splits);
    bounds.push(close);
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let choice = &pattern[w[0] + 1..w[1]];
        for expanded in expand_braces(&format!("{head}{choice}{tail}"))? {
            out.push(expanded);
            if out.len() > MAX_ALTERNATIVES {
                return Err(BadPattern);
            }
        }
    }
    Ok(out)
}

fn components_match(pats: &[&str], names: &[&str]) -> Result<bool, BadPattern> {
    // ok[i][j]: pats[i..] matches names[j..].
    let (p, n) = (pats.len(), names.len());
    let mut ok = vec![vec![false; n + 1]; p + 1];
    ok[p][n] = true;
    for i in (0..p).rev() {
        for j in (0..=n).rev() {
            ok[i][j] = if pats[i] == "**" {
                ok[i + 1][j] || (j < n && ok[i][j + 1])
            } else {
                j < n && ok[i + 1][j + 1] && segment_match(pats[i], names[j], '!')?
            };
        }
    }
    Ok(ok[0][0])
}

/// Matches one pattern against one string with `*`, `?`, classes and `\` escapes; `negate` is
/// the class negation character besides `^` (`!` for git and doublestar). Slashes are plain
/// characters here: callers split where a dialect stops wildcards at `/`.
fn segment_match(pattern: &str, name: &str, negate: char) -> Result<bool, BadPattern> {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    // Validate first so a mismatch never hides a malformed pattern.
    let mut i = 0;
    while i < p.len() {
        i = match p[i] {
            '\\' if i + 1 >= p.len() => return Err(BadPattern),
            '\\' => i + 2,
            '[' => class_end(&p, i)?,
            _ => i + 1,
        };
    }
    let (mut pi, mut si) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                backtrack = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => {
                let end = class_end(&p, pi)?;
                class_matches(&p[pi + 1..end - 1], s[si], negate).then_some(end)
            }
            Some('\\') => (p[pi + 1] == s[si]).then_some(pi + 2),
            Some(c) => (*c == s[si]).then_some(pi + 1),
            None => None,
        };
        match (step, backtrack) {
            (Some(next), _) => {
                pi = next;
                si += 1;
            }
            (None, Some((bp, bs))) => {
                backtrack = Some((bp, bs + 1));
                pi = bp + 1;
                si = bs + 1;
            }
            (None, None) => return Ok(false),
        }
    }
    Ok(p[pi..].iter().all(|c| *c == '*'))
}

/// Index just past the `]` closing the class opened at `start`.
fn class_end(p: &[char], start: usize) -> Result<usize, BadPattern> {
    let mut i = start + 1;
    if matches!(p.get(i), Some('^' | '!')) {
        i += 1;
    }
    let first = i;
    while i < p.len() {
        match p[i] {
            ']' if i > first => return Ok(i + 1),
            '\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(BadPattern)
}

fn class_matches(class: &[char], c: char, negate: char) -> bool {
    let (negated, body) = match class.first() {
        Some(&n) if n == '^' || n == negate => (true, &class[1..]),
        _ => (false, class),
    };
    let mut i = 0;
    let mut hit = false;
    while i < body.len() {
        let lo = if body[i] == '\\' && i + 1 < body.len() {
            i += 1;
            body[i]
        } else {
            body[i]
        };
        if i + 2 < body.len() && body[i + 1] == '-' {
            let hi = body[i + 2];
            hit |= lo <= c && c <= hi;
            i += 3;
        } else {
            hit |= lo == c;
            i += 1;
        }
    }
    hit != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_match() {
        assert_eq!(path_match("apps/*", "apps/guestbook"), Ok(true));
        assert_eq!(path_match("apps/*", "apps/a/b"), Ok(false));
        assert_eq!(path_match("cluster-addons/*", "cluster-addons"), Ok(false));
        assert_eq!(path_match("a/[^x]b", "a/yb"), Ok(true));
        assert_eq!(path_match("a/[^x]b", "a/xb"), Ok(false));
        assert_eq!(path_match("a/?", "a/b"), Ok(true));
        assert_eq!(path_match("a/[", "a/b"), Err(BadPattern));
        assert_eq!(path_match("*x*y*z", "axbyczz"), Ok(true));
    }

    #[test]
    fn git_pathspec_is_greedy() {
        assert_eq!(
            pathspec_match(
                "cluster-charts/*/*/values.yaml",
                "cluster-charts/c1/mychart/charts/sub/values.yaml"
            ),
            Ok(true)
        );
        assert_eq!(
            pathspec_match("some-path/*.yaml", "some-path/a/b/c.yaml"),
            Ok(true)
        );
        assert_eq!(pathspec_match("apps", "apps/x/config.json"), Ok(true));
        assert_eq!(pathspec_match("apps", "apps2/config.json"), Ok(false));
        assert_eq!(
            pathspec_match(
                "cluster-config/**/config.json",
                "cluster-config/config.json"
            ),
            Ok(false)
        );
        assert_eq!(
            pathspec_match(
                "cluster-config/**/config.json",
                "cluster-config/eng/dev/config.json"
            ),
            Ok(true)
        );
    }

    #[test]
    fn doublestar_components() {
        assert_eq!(
            doublestar_match(
                "cluster-charts/*/*/values.yaml",
                "cluster-charts/c1/mychart/charts/sub/values.yaml"
            ),
            Ok(false)
        );
        assert_eq!(
            doublestar_match(
                "cluster-charts/*/*/values.yaml",
                "cluster-charts/c1/mychart/values.yaml"
            ),
            Ok(true)
        );
        assert_eq!(
            doublestar_match(
                "cluster-config/**/config.json",
                "cluster-config/config.json"
            ),
            Ok(true)
        );
        assert_eq!(
            doublestar_match("**/config.{json,yaml}", "a/b/config.yaml"),
            Ok(true)
        );
        assert_eq!(doublestar_match("a/[!x].json", "a/y.json"), Ok(true));
        assert_eq!(doublestar_match("a/{b", "a/b"), Err(BadPattern));
    }

    #[test]
    fn hostile_patterns_stay_fast() {
        let name = "a".repeat(5000);
        let pat = format!("{}b", "*a".repeat(200));
        assert_eq!(segment_match(&pat, &name, '!'), Ok(false));
        let many = "{a,b}".repeat(20);
        assert_eq!(doublestar_match(&many, "ab"), Err(BadPattern));
    }
}
