use super::*;

struct Unlimited;
impl Budget for Unlimited {
    fn step(&mut self) -> Result<(), String> {
        Ok(())
    }
}

struct Steps(u64);
impl Budget for Steps {
    fn step(&mut self) -> Result<(), String> {
        if self.0 == 0 {
            return Err("stopped".into());
        }
        self.0 -= 1;
        Ok(())
    }
}

fn find_str(s: &str, p: &str) -> Option<(usize, usize, Vec<String>)> {
    let found = find(s.as_bytes(), p.as_bytes(), 0, false, &mut Unlimited).unwrap()?;
    let caps = found
        .captures
        .iter()
        .map(|c| match *c {
            Capture::Text(a, b) => s[a..b].to_string(),
            Capture::Position(p) => format!("@{}", p + 1),
        })
        .collect();
    Some((found.start + 1, found.end, caps))
}

#[test]
fn lua_51_semantics() {
    assert_eq!(
        find_str("hello world", "o w"),
        Some((5, 7, vec!["o w".into()]))
    );
    assert_eq!(
        find_str("Progressing: 3/5 replicas", "(%d+)/(%d+)"),
        Some((14, 16, vec!["3".into(), "5".into()]))
    );
    assert_eq!(find_str("abc", "^b"), None);
    assert_eq!(find_str("abc", "c$"), Some((3, 3, vec!["c".into()])));
    assert_eq!(
        find_str("key = value", "(%w+)%s*=%s*(%w+)").unwrap().2,
        ["key", "value"]
    );
    assert_eq!(find_str("f(a(b)c)d", "%b()").unwrap().2, ["(a(b)c)"]);
    assert_eq!(find_str("THE (quick) fox", "%f[%a]%a+").unwrap().2, ["THE"]);
    assert_eq!(find_str("aaab", "a-b").unwrap().2, ["aaab"]);
    assert_eq!(find_str("abc", "()b()").unwrap().2, ["@2", "@3"]);
    assert_eq!(find_str("xyzzy", "(z)%1").unwrap().2, ["z"]);
    assert_eq!(find_str("a.b", "[%.]").unwrap().0, 2);
    assert_eq!(find_str("a]b", "[]]").unwrap().0, 2);
    assert_eq!(find_str("a-b", "[a%-]+").unwrap().2, ["a-"]);
    assert_eq!(find_str("x9", "[^%a]").unwrap().2, ["9"]);
    assert_eq!(find_str("", "a*"), Some((1, 0, vec![String::new()])));
}

#[test]
fn malformed_patterns_are_errors() {
    for (p, msg) in [
        ("%", "malformed pattern (ends with '%')"),
        ("[a", "malformed pattern (missing ']')"),
        ("(a", "unfinished capture"),
        ("a)", "invalid pattern capture"),
        ("%1", "invalid capture index"),
        ("%fa", "missing '[' after '%f' in pattern"),
    ] {
        assert_eq!(
            find(b"aaa", p.as_bytes(), 0, false, &mut Unlimited),
            Err(PatternError::Malformed(msg.into())),
            "{p}"
        );
    }
}

#[test]
fn backtracking_is_charged_and_stopped() {
    let subject = "a".repeat(5000);
    let pattern = "a*".repeat(12) + "b";
    let r = find(
        subject.as_bytes(),
        pattern.as_bytes(),
        0,
        false,
        &mut Steps(10_000_000),
    );
    assert_eq!(r, Err(PatternError::Stopped("stopped".into())));
}

#[test]
fn deep_recursion_is_refused() {
    let pattern = "a-".repeat(1000) + "b";
    let r = find(b"aaaa", pattern.as_bytes(), 0, false, &mut Unlimited);
    assert_eq!(
        r,
        Err(PatternError::Malformed("pattern too complex".into()))
    );
}

#[test]
fn start_positions() {
    assert_eq!(start_index(1, 5), 0);
    assert_eq!(start_index(-2, 5), 3);
    assert_eq!(start_index(-10, 5), 0);
    assert_eq!(start_index(9, 5), 5);
}
