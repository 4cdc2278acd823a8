//! POSIX "normal" diff output (what `diff old new` prints with no options): hunks headed
//! `3c3`, `5a6,7`, `9,10d8`, old lines as `< `, a `---` between the two sides of a change, new
//! lines as `> `. Lines are matched as GNU diff matches them ([`super::gnu`]), so the hunks are
//! the ones `diff` prints.

use super::gnu::hunks;

/// The normal-format diff of `old` and `new` (empty when they are equal).
pub fn normal_diff(old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = String::new();
    let range = |a: usize, n: usize| {
        if n == 1 {
            format!("{}", a + 1)
        } else {
            format!("{},{}", a + 1, a + n)
        }
    };
    for h in hunks(&old_lines, &new_lines) {
        if h.deleted > 0 && h.inserted > 0 {
            out.push_str(&format!(
                "{}c{}\n",
                range(h.old_start, h.deleted),
                range(h.new_start, h.inserted)
            ));
        } else if h.deleted > 0 {
            out.push_str(&format!(
                "{}d{}\n",
                range(h.old_start, h.deleted),
                h.new_start
            ));
        } else {
            out.push_str(&format!(
                "{}a{}\n",
                h.old_start,
                range(h.new_start, h.inserted)
            ));
        }
        for l in &old_lines[h.old_start..h.old_start + h.deleted] {
            push_line(&mut out, "< ", l);
        }
        if h.deleted > 0 && h.inserted > 0 {
            out.push_str("---\n");
        }
        for l in &new_lines[h.new_start..h.new_start + h.inserted] {
            push_line(&mut out, "> ", l);
        }
    }
    out
}

fn push_line(out: &mut String, prefix: &str, line: &str) {
    out.push_str(prefix);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers() {
        assert_eq!(
            normal_diff("a\nb\nc\n", "a\nB\nc\n"),
            "2c2\n< b\n---\n> B\n"
        );
        assert_eq!(normal_diff("a\nc\n", "a\nb\nc\n"), "1a2\n> b\n");
        assert_eq!(normal_diff("a\nb\nc\n", "a\nc\n"), "2d1\n< b\n");
        assert_eq!(normal_diff("", "a\nb\n"), "0a1,2\n> a\n> b\n");
        assert_eq!(normal_diff("x\n", "x\n"), "");
    }
}
