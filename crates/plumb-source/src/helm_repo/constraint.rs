//! Chart versions and version constraints, read as Argo CD reads `targetRevision` for a chart.
//!
//! Argo CD (`util/versions`) and Helm use Masterminds/semver v3, whose constraint language differs
//! from Cargo's (`semver::VersionReq`): comparators are separated by spaces or commas, `||` joins
//! alternatives, `1.2 - 1.4` is a range, `x`/`X`/`*` are wildcards, versions may start with `v`
//! or omit minor and patch, and a pre-release only satisfies a comparator that itself names a
//! pre-release (`>=1.0.0-0`). So the language is parsed here; versions and their precedence come
//! from the `semver` crate.

use std::cmp::Ordering;

use semver::Version;

/// A version as Masterminds' `NewVersion` accepts it: optional `v`, one to three numbers, then
/// an optional pre-release and build metadata. `None` when it is not one.
pub(crate) fn parse_version(text: &str) -> Option<Version> {
    let text = text.trim();
    let text = text.strip_prefix(['v', 'V']).unwrap_or(text);
    let (core, rest) = match text.find(['-', '+']) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        nums[i] = p.parse().ok()?;
    }
    Version::parse(&format!("{}.{}.{}{rest}", nums[0], nums[1], nums[2])).ok()
}

/// Semantic-version precedence (build metadata ignored), as `Version::GreaterThan` compares.
pub(crate) fn precedence(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

/// A parsed constraint: alternatives (`||`), each a conjunction of comparators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Constraint {
    any_of: Vec<Vec<Comparator>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    version: Version,
    /// How many of major, minor, patch were given as numbers (the rest were absent or wildcards).
    given: usize,
    /// True when the comparator was written with a pre-release part.
    pre: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    Tilde,
    Caret,
}

impl Constraint {
    /// Parses Masterminds' constraint syntax; `Err` says what could not be read.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut any_of = Vec::new();
        for alt in text.split("||") {
            let alt = alt.trim();
            if alt.is_empty() {
                return Err(format!("{text:?}: empty alternative"));
            }
            any_of.push(parse_conjunction(alt)?);
        }
        Ok(Self { any_of })
    }

    /// Whether `v` satisfies the constraint.
    pub(crate) fn matches(&self, v: &Version) -> bool {
        self.any_of
            .iter()
            .any(|all| all.iter().all(|c| c.matches(v)))
    }
}

fn parse_conjunction(text: &str) -> Result<Vec<Comparator>, String> {
    // Tokens separated by commas or spaces; an operator may stand apart from its version
    // (`>= 1.2`), and `a - b` is a hyphen range.
    let tokens: Vec<&str> = text
        .split([',', ' ', '\t'])
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut tok = tokens[i].to_owned();
        if tokens.get(i + 1) == Some(&"-") {
            let hi = tokens
                .get(i + 2)
                .ok_or_else(|| format!("{text:?}: hyphen range without an upper bound"))?;
            out.push(comparator(&format!(">={tok}"))?);
            out.push(comparator(&format!("<={hi}"))?);
            i += 3;
            continue;
        }
        if tok.chars().all(|c| "=<>!~^".contains(c)) {
            let next = tokens
                .get(i + 1)
                .ok_or_else(|| format!("{text:?}: operator {tok} without a version"))?;
            tok.push_str(next);
            i += 1;
        }
        out.push(comparator(&tok)?);
        i += 1;
    }
    if out.is_empty() {
        return Err(format!("{text:?}: no comparator"));
    }
    Ok(out)
}

fn comparator(text: &str) -> Result<Comparator, String> {
    let split = text
        .find(|c: char| !"=<>!~^".contains(c))
        .unwrap_or(text.len());
    let (op, rest) = text.split_at(split);
    let op = match op {
        "" | "=" => Op::Eq,
        "!=" => Op::Ne,
        ">" => Op::Gt,
        ">=" | "=>" => Op::Ge,
        "<" => Op::Lt,
        "<=" | "=<" => Op::Le,
        "~" | "~>" => Op::Tilde,
        "^" => Op::Caret,
        other => return Err(format!("{text:?}: unknown operator {other:?}")),
    };
    let rest = rest.strip_prefix(['v', 'V']).unwrap_or(rest);
    let (core, tail) = match rest.find(['-', '+']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if core.is_empty() || parts.len() > 3 {
        return Err(format!("{text:?}: not a version"));
    }
    let mut nums = [0u64; 3];
    let mut given = 0;
    for (i, p) in parts.iter().enumerate() {
        if matches!(*p, "x" | "X" | "*") {
            break;
        }
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{text:?}: {p:?} is not a version number"));
        }
        nums[i] = p
            .parse()
            .map_err(|_| format!("{text:?}: {p:?} is too large"))?;
        given = i + 1;
    }
    let version = Version::parse(&format!("{}.{}.{}{tail}", nums[0], nums[1], nums[2]))
        .map_err(|e| format!("{text:?}: {e}"))?;
    Ok(Comparator {
        op,
        pre: !version.pre.is_empty(),
        version,
        given,
    })
}

impl Comparator {
    fn matches(&self, v: &Version) -> bool {
        // Masterminds: a pre-release satisfies only comparators that ask for pre-releases.
        if !v.pre.is_empty() && !self.pre {
            return false;
        }
        let c = &self.version;
        let cmp = precedence(v, c);
        match self.op {
            Op::Eq => self.in_wildcard_range(v),
            Op::Ne => !self.in_wildcard_range(v),
            Op::Gt => match self.given {
                0 => false,
                1 => v.major > c.major,
                2 => (v.major, v.minor) > (c.major, c.minor),
                _ => cmp == Ordering::Greater,
            },
            Op::Ge => cmp != Ordering::Less,
            Op::Lt => cmp == Ordering::Less,
            Op::Le => match self.given {
                0 => true,
                1 => v.major <= c.major,
                2 => (v.major, v.minor) <= (c.major, c.minor),
                _ => cmp != Ordering::Greater,
            },
            Op::Tilde => {
                cmp != Ordering::Less
                    && v.major == c.major
                    && (self.given < 2 || v.minor == c.minor)
            }
            Op::Caret => {
                if cmp == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.given < 2 {
                    v.major == c.major
                } else if c.minor > 0 || self.given < 3 {
                    v.major == 0 && v.minor == c.minor
                } else {
                    v.major == 0 && v.minor == 0 && v.patch == c.patch
                }
            }
        }
    }

    /// `=` with wildcards: `1.2.*` is `>=1.2.0 <1.3.0`, `*` is everything; else equality.
    fn in_wildcard_range(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.given {
            0 => true,
            1 => v.major == c.major,
            2 => v.major == c.major && v.minor == c.minor,
            _ => precedence(v, c) == Ordering::Equal,
        }
    }
}

/// The highest of `versions` (as written in the index) that satisfies `constraint`, skipping
/// strings that are not versions (as Argo CD's `MaxVersion` does).
pub(crate) fn max_satisfying<'a>(
    constraint: &Constraint,
    versions: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(&str, Version)> = None;
    for text in versions {
        let Some(v) = parse_version(text) else {
            continue;
        };
        if !constraint.matches(&v) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(_, b)| precedence(&v, b) == Ordering::Greater)
        {
            best = Some((text, v));
        }
    }
    best.map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &[&str] = &[
        "0.9.0",
        "1.0.0",
        "1.2.0",
        "1.2.3",
        "1.2.10",
        "1.3.0-rc.1",
        "1.3.0",
        "v1.4.0",
        "2.0.0-beta.2",
        "2.0.0",
        "2.1.0+build.7",
        "not-a-version",
        "3.0.0-alpha",
    ];

    fn max(c: &str) -> Option<&'static str> {
        max_satisfying(&Constraint::parse(c).unwrap(), INDEX.iter().copied())
    }

    #[test]
    fn argo_tracking_strategies_resolve_as_documented() {
        // Argo CD docs, "Tracking and Deployment Strategies": pin, patches, minors, latest.
        assert_eq!(max("1.2.3"), Some("1.2.3"));
        assert_eq!(max("1.2.*"), Some("1.2.10"));
        assert_eq!(max(">=1.2.0 <1.3.0"), Some("1.2.10"));
        assert_eq!(max("1.*"), Some("v1.4.0"));
        assert_eq!(max(">=1.0.0 <2.0.0"), Some("v1.4.0"));
        assert_eq!(max(">=1.0, <2"), Some("v1.4.0"));
        assert_eq!(max("*"), Some("2.1.0+build.7"));
        // Pre-releases only when the constraint names one.
        assert_eq!(max("*-0"), Some("3.0.0-alpha"));
        assert_eq!(max(">=0.0.0-0"), Some("3.0.0-alpha"));
        // ... and every comparator of the conjunction must name one (Masterminds v3).
        assert_eq!(max(">=2.0.0-0 <2.0.0"), None);
        assert_eq!(max(">=2.0.0-0, <2.0.0-rc"), Some("2.0.0-beta.2"));
        assert_eq!(max("1.3.x"), Some("1.3.0"));
    }

    #[test]
    fn operators_follow_masterminds() {
        assert_eq!(max("~1.2"), Some("1.2.10"));
        assert_eq!(max("~1.2.3"), Some("1.2.10"));
        assert_eq!(max("^1.2"), Some("v1.4.0"));
        assert_eq!(max("^0.9"), Some("0.9.0"));
        assert_eq!(max("<1.2"), Some("1.0.0"));
        assert_eq!(max("<=1.2"), Some("1.2.10"));
        assert_eq!(max(">1.3"), Some("2.1.0+build.7"));
        assert_eq!(max("1.0 - 1.2.3"), Some("1.2.3"));
        assert_eq!(max("<1 || 1.3.*"), Some("1.3.0"));
        assert_eq!(max("!=2.1.0, >=2"), Some("2.0.0"));
        assert_eq!(max(">= 1.2, < 1.3"), Some("1.2.10"));
        assert_eq!(max("5.*"), None);
    }

    #[test]
    fn bad_constraints_are_reported() {
        for bad in ["", "||", ">=", "1.2.3.4", "abc", "1.a", "1 -"] {
            assert!(Constraint::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn versions_are_read_leniently_like_newversion() {
        assert_eq!(parse_version("v1.2").unwrap(), Version::new(1, 2, 0));
        assert_eq!(parse_version("3").unwrap(), Version::new(3, 0, 0));
        assert!(parse_version("1.2.3-rc.1").is_some());
        assert!(parse_version("1.2.*").is_none());
        assert!(parse_version("latest").is_none());
    }
}
