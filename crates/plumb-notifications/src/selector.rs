//! Kubernetes label selectors in their string form (`env=prod,tier!=db,region in (eu,us),!canary`),
//! as the `selector` of a default subscription is written (`labels.Parse` in apimachinery).
//! Own code: the few lines of the grammar, where kube-rs only has the structured form.

use std::collections::BTreeMap;

/// A parsed selector; the empty one matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Selector {
    /// Parses the string form; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in split_top(text)? {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(format!("empty requirement in {text:?}"));
            }
            requirements.push(requirement(part)?);
        }
        Ok(Selector { requirements })
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

/// Splits on the commas outside parentheses.
fn split_top(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1).ok_or("unbalanced ')'")?,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unclosed '(' in {text:?}"));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(key_of(key.trim())?));
    }
    for (op, negate) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (k, v) = (key_of(k.trim())?, value_of(v.trim())?);
            return Ok(if negate {
                Requirement::NotIn(k, vec![v])
            } else {
                Requirement::In(k, vec![v])
            });
        }
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    match words.as_slice() {
        [k] => Ok(Requirement::Exists(key_of(k)?)),
        [k, rest] => {
            let rest = rest.trim();
            let (negate, list) = if let Some(l) = rest.strip_prefix("notin") {
                (true, l)
            } else if let Some(l) = rest.strip_prefix("in") {
                (false, l)
            } else {
                return Err(format!("unknown operator in {part:?}"));
            };
            let list = list.trim();
            let inner = list
                .strip_prefix('(')
                .and_then(|l| l.strip_suffix(')'))
                .ok_or_else(|| format!("expected a (list) in {part:?}"))?;
            let values = inner
                .split(',')
                .map(|v| value_of(v.trim()))
                .collect::<Result<Vec<_>, _>>()?;
            let k = key_of(k)?;
            Ok(if negate {
                Requirement::NotIn(k, values)
            } else {
                Requirement::In(k, values)
            })
        }
        _ => Err(format!("cannot parse {part:?}")),
    }
}

fn key_of(k: &str) -> Result<String, String> {
    let ok = !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| k.to_string())
        .ok_or_else(|| format!("invalid label key {k:?}"))
}

fn value_of(v: &str) -> Result<String, String> {
    let ok = v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    ok.then(|| v.to_string())
        .ok_or_else(|| format!("invalid label value {v:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let labels = BTreeMap::from([
            ("env".to_string(), "prod".to_string()),
            ("tier".to_string(), "web".to_string()),
        ]);
        let m = |s: &str| Selector::parse(s).map(|sel| sel.matches(&labels));
        assert_eq!(m(""), Ok(true));
        assert_eq!(m("env=prod"), Ok(true));
        assert_eq!(m("env==prod,tier!=db"), Ok(true));
        assert_eq!(m("env in (dev, prod),!canary"), Ok(true));
        assert_eq!(m("env notin (prod)"), Ok(false));
        assert_eq!(m("tier,missing"), Ok(false));
        assert!(m("env in (prod").is_err());
        assert!(m("env=a b").is_err());
        assert!(m("env,,x").is_err());
    }
}
