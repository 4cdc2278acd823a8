//! The three pattern languages an AppProject is written in, as Argo CD reads them:
//!
//! - [`glob`]: `gobwas/glob` (Argo's `util/glob.Match`), for `sourceRepos`, `destinations` and
//!   `sourceNamespaces`: `*` (any run of non-separator characters), `**` (any run), `?`,
//!   `[abc]`, `[a-z]`, `[!abc]`, `{alt1,alt2}` and `\` escapes. Separators are passed by the
//!   caller (`/` for repository URLs, none elsewhere).
//! - [`filepath`]: Go's `filepath.Match`, for the group and kind of the resource lists: `*` and
//!   `?` never match `/`, classes negate with `^`, braces are literal.
//! - [`regex`]: `/.../` entries of `sourceNamespaces` (Argo's `util/regex.Match`, unanchored).
//!
//! A pattern that does not compile matches nothing, as in Argo (which logs a warning).

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A literal character.
    Lit(char),
    /// `?`: one non-separator character.
    One,
    /// `*`: any run of non-separator characters.
    Star,
    /// `**` (gobwas only): any run of characters.
    Super,
    /// `[...]`: one character in (or, negated, not in) the ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    /// `{a,b}` (gobwas only): any of the alternatives.
    Alt(Vec<Vec<Tok>>),
}

/// Which syntax a pattern is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Gobwas,
    Filepath,
}

/// Whether `text` matches the gobwas `pattern`, where `*` and `?` do not cross `separators`.
pub(crate) fn glob(pattern: &str, text: &str, separators: &[char]) -> bool {
    match parse(pattern, Dialect::Gobwas) {
        Some(toks) => matches(&toks, &text.chars().collect::<Vec<_>>(), separators),
        None => false,
    }
}

/// Whether `text` matches the gobwas `pattern`, or `None` when the pattern does not compile
/// (Argo's `glob.MatchWithError`, where such a pattern is an error rather than no match).
pub(crate) fn glob_checked(pattern: &str, text: &str, separators: &[char]) -> Option<bool> {
    parse(pattern, Dialect::Gobwas)
        .map(|toks| matches(&toks, &text.chars().collect::<Vec<_>>(), separators))
}

/// Whether `pattern` is a gobwas glob (Argo's `glob.Compile` accepts it).
pub(crate) fn compiles(pattern: &str) -> bool {
    parse(pattern, Dialect::Gobwas).is_some()
}

/// Whether `text` matches the Go `filepath.Match` `pattern`.
pub(crate) fn filepath(pattern: &str, text: &str) -> bool {
    match parse(pattern, Dialect::Filepath) {
        Some(toks) => matches(&toks, &text.chars().collect::<Vec<_>>(), &['/']),
        None => false,
    }
}

/// Whether the regular expression `pattern` matches anywhere in `text`.
///
/// Argo uses .NET-style `regexp2`; Rust's `regex` has no look-around or back-references, so a
/// pattern using them does not compile here and matches nothing.
pub(crate) fn regex(pattern: &str, text: &str) -> bool {
    regex::Regex::new(pattern).is_ok_and(|re| re.is_match(text))
}

fn parse(pattern: &str, dialect: Dialect) -> Option<Vec<Tok>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pos = 0;
    let toks = parse_seq(&chars, &mut pos, dialect, false)?;
    (pos == chars.len()).then_some(toks)
}

// Parses until the end, or (inside braces) until a top-level `,` or `}`, which is left unread.
fn parse_seq(chars: &[char], pos: &mut usize, dialect: Dialect, in_alt: bool) -> Option<Vec<Tok>> {
    let mut toks = Vec::new();
    while let Some(&c) = chars.get(*pos) {
        match c {
            ',' | '}' if in_alt => break,
            '\\' => {
                let next = *chars.get(*pos + 1)?;
                toks.push(Tok::Lit(next));
                *pos += 2;
            }
            '*' => {
                let mut run = 0;
                while chars.get(*pos) == Some(&'*') {
                    run += 1;
                    *pos += 1;
                }
                toks.push(if run > 1 && dialect == Dialect::Gobwas {
                    Tok::Super
                } else {
                    Tok::Star
                });
            }
            '?' => {
                toks.push(Tok::One);
                *pos += 1;
            }
            '[' => {
                *pos += 1;
                toks.push(parse_class(chars, pos, dialect)?);
            }
            '{' if dialect == Dialect::Gobwas => {
                *pos += 1;
                let mut alts = Vec::new();
                loop {
                    alts.push(parse_seq(chars, pos, dialect, true)?);
                    match chars.get(*pos) {
                        Some(',') => *pos += 1,
                        Some('}') => {
                            *pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                toks.push(Tok::Alt(alts));
            }
            _ => {
                toks.push(Tok::Lit(c));
                *pos += 1;
            }
        }
    }
    Some(toks)
}

// After `[`: optional negation, then ranges up to `]`; an empty class does not compile.
fn parse_class(chars: &[char], pos: &mut usize, dialect: Dialect) -> Option<Tok> {
    let negation = match dialect {
        Dialect::Gobwas => '!',
        Dialect::Filepath => '^',
    };
    let negated = chars.get(*pos) == Some(&negation);
    if negated {
        *pos += 1;
    }
    let mut ranges = Vec::new();
    loop {
        let c = *chars.get(*pos)?;
        if c == ']' && !ranges.is_empty() {
            *pos += 1;
            return Some(Tok::Class { negated, ranges });
        }
        let lo = class_char(chars, pos)?;
        let hi = if chars.get(*pos) == Some(&'-') && chars.get(*pos + 1).is_some_and(|&c| c != ']')
        {
            *pos += 1;
            class_char(chars, pos)?
        } else {
            lo
        };
        if hi < lo {
            return None;
        }
        ranges.push((lo, hi));
    }
}

fn class_char(chars: &[char], pos: &mut usize) -> Option<char> {
    let c = *chars.get(*pos)?;
    if c == '\\' {
        let next = *chars.get(*pos + 1)?;
        *pos += 2;
        Some(next)
    } else {
        *pos += 1;
        Some(c)
    }
}

fn matches(toks: &[Tok], text: &[char], seps: &[char]) -> bool {
    Matcher {
        seps,
        failed: std::collections::HashSet::new(),
        keep: Vec::new(),
    }
    .run(toks, text)
}

/// Backtracking with the states that failed remembered: without it a hostile pattern of many
/// stars (`*a*a*a…*b`) takes exponential time; with it each (pattern suffix, text suffix) is
/// tried once and does constant work, so matching is O(pattern × text).
struct Matcher<'s> {
    seps: &'s [char],
    /// (token slice address, its length, text suffix length) known not to match.
    failed: std::collections::HashSet<(usize, usize, usize)>,
    /// Sequences built for alternatives, kept so that no later sequence reuses their address
    /// while `failed` may name it.
    keep: Vec<Vec<Tok>>,
}

impl Matcher<'_> {
    fn run(&mut self, toks: &[Tok], text: &[char]) -> bool {
        let key = (toks.as_ptr() as usize, toks.len(), text.len());
        if self.failed.contains(&key) {
            return false;
        }
        let matched = self.step(toks, text);
        if !matched {
            self.failed.insert(key);
        }
        matched
    }

    fn step(&mut self, toks: &[Tok], text: &[char]) -> bool {
        let seps = self.seps;
        let Some((tok, rest)) = toks.split_first() else {
            return text.is_empty();
        };
        match tok {
            Tok::Lit(c) => text.first() == Some(c) && self.run(rest, &text[1..]),
            Tok::One => {
                text.first().is_some_and(|c| !seps.contains(c)) && self.run(rest, &text[1..])
            }
            Tok::Class { negated, ranges } => {
                text.first().is_some_and(|c| {
                    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(c)) != *negated
                }) && self.run(rest, &text[1..])
            }
            // One character at a time, the star kept: each (pattern, text) state then does
            // constant work, so a match is O(pattern × text) however many stars there are.
            Tok::Star => {
                self.run(rest, text)
                    || (text.first().is_some_and(|c| !seps.contains(c))
                        && self.run(toks, &text[1..]))
            }
            Tok::Super => self.run(rest, text) || (!text.is_empty() && self.run(toks, &text[1..])),
            Tok::Alt(alts) => alts.iter().any(|alt| {
                let mut seq = alt.clone();
                seq.extend_from_slice(rest);
                let matched = self.run(&seq, text);
                self.keep.push(seq);
                matched
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forty stars against a thousand characters: each state does constant work (a loop over
    /// the text per star state made this minutes in a debug build).
    #[test]
    fn star_heavy_patterns_against_long_text_end_without_a_match() {
        let pattern = format!("{}b", "*a".repeat(40));
        let text = "a".repeat(1000);
        for _ in 0..20 {
            assert!(!glob(&pattern, &text, &[]));
            assert!(!glob(&pattern.replace('*', "**"), &text, &['/']));
            assert!(!filepath(&pattern, &text));
        }
        assert!(glob(&pattern, &format!("{text}b"), &[]));
    }

    #[test]
    fn gobwas_stars_stop_at_separators_and_double_stars_do_not() {
        let repo = "https://github.com/argoproj/argocd-example-apps";
        assert!(glob("https://github.com/argoproj/*", repo, &['/']));
        assert!(!glob("https://github.com/*", repo, &['/']));
        assert!(glob("https://github.com/**", repo, &['/']));
        assert!(glob("https://github.com/*/*", repo, &['/']));
        // Without separators a star crosses slashes.
        assert!(glob("https://github.com/*", repo, &[]));
        assert!(glob("*", "", &[]));
        assert!(!glob("*", "a/b", &['/']));
    }

    #[test]
    fn gobwas_single_characters_classes_and_alternatives() {
        assert!(glob("team-?", "team-a", &[]));
        assert!(!glob("team-?", "team-ab", &[]));
        assert!(!glob("a?b", "a/b", &['/']));
        assert!(glob("payments-[a-c]", "payments-b", &[]));
        assert!(!glob("payments-[a-c]", "payments-d", &[]));
        assert!(glob("payments-[!a-c]", "payments-d", &[]));
        assert!(glob("{prod,staging}-*", "staging-eu", &[]));
        assert!(glob("{prod,stag{ing,e}}", "stage", &[]));
        assert!(!glob("{prod,staging}-*", "dev-eu", &[]));
        assert!(glob(r"literal\*", "literal*", &[]));
        assert!(!glob(r"literal\*", "literally", &[]));
    }

    #[test]
    fn malformed_patterns_match_nothing() {
        for p in ["team-[a", "{prod,staging", "trailing\\", "[]", "[z-a]"] {
            assert!(!glob(p, p, &[]), "{p}");
            assert!(!glob(p, "team-a", &[]), "{p}");
        }
        assert!(!filepath("[", "["));
        assert!(!regex("(unclosed", "(unclosed"));
    }

    #[test]
    fn filepath_dialect_negates_with_caret_and_keeps_braces_literal() {
        assert!(filepath("*", "Deployment"));
        assert!(filepath("", ""));
        assert!(!filepath("", "apps"));
        assert!(filepath("*.k8s.io", "networking.k8s.io"));
        assert!(filepath("[^S]*", "ConfigMap"));
        assert!(!filepath("[^S]*", "Secret"));
        assert!(filepath("{a,b}", "{a,b}"));
        assert!(!filepath("{a,b}", "a"));
        assert!(filepath("**", "apps"));
        assert!(!filepath("*", "a/b"));
    }

    #[test]
    fn regex_is_unanchored() {
        assert!(regex("^team-[0-9]+$", "team-42"));
        assert!(regex("team", "my-team-ns"));
        assert!(!regex("^team$", "my-team"));
    }
}
