//! POSIX "normal" diff output (what `diff old new` prints with no options): hunks headed
//! `3c3`, `5a6,7`, `9,10d8`, old lines as `< `, a `---` between the two sides of a change, new
//! lines as `> `. Built on `similar`'s Myers line diff; adjacent deletions and insertions form
//! one change hunk, as in GNU diff.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// The normal-format diff of `old` and `new` (empty when they are equal).
pub fn normal_diff(old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines);
    let mut out = String::new();
    let mut hunk: Option<(usize, usize, usize, usize)> = None;
    let flush = |h: (usize, usize, usize, usize), out: &mut String| {
        let (os, oe, ns, ne) = h;
        let range = |a: usize, b: usize| if b - a == 1 { format!("{}", a + 1) } else { format!("{},{}", a + 1, b) };
        if oe > os && ne > ns {
            out.push_str(&format!("{}c{}\n", range(os, oe), range(ns, ne)));
        } else if oe > os {
            out.push_str(&format!("{}d{}\n", range(os, oe), ns));
        } else {
            out.push_str(&format!("{}a{}\n", os, range(ns, ne)));
        }
        for l in &old_lines[os..oe] {
            push_line(out, "< ", l);
        }
        if oe > os && ne > ns {
            out.push_str("---\n");
        }
        for l in &new_lines[ns..ne] {
            push_line(out, "> ", l);
        }
    };
    for op in &ops {
        match *op {
            DiffOp::Equal { .. } => {
                if let Some(h) = hunk.take() {
                    flush(h, &mut out);
                }
            }
            DiffOp::Delete { old_index, old_len, new_index } => {
                hunk = Some(extend(hunk, old_index, old_index + old_len, new_index, new_index));
            }
            DiffOp::Insert { old_index, new_index, new_len } => {
                hunk = Some(extend(hunk, old_index, old_index, new_index, new_index + new_len));
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                hunk = Some(extend(hunk, old_index, old_index + old_len, new_index, new_index + new_len));
            }
        }
    }
    if let Some(h) = hunk {
        flush(h, &mut out);
    }
    out
}

fn extend(h: Option<(usize, usize, usize, usize)>, os: usize, oe: usize, ns: usize, ne: usize) -> (usize, usize, usize, usize) {
    match h {
        Some((a, _, c, _)) => (a, oe, c, ne),
        None => (os, oe, ns, ne),
    }
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
        assert_eq!(normal_diff("a\nb\nc\n", "a\nB\nc\n"), "2c2\n< b\n---\n> B\n");
        assert_eq!(normal_diff("a\nc\n", "a\nb\nc\n"), "1a2\n> b\n");
        assert_eq!(normal_diff("a\nb\nc\n", "a\nc\n"), "2d1\n< b\n");
        assert_eq!(normal_diff("", "a\nb\n"), "0a1,2\n> a\n> b\n");
        assert_eq!(normal_diff("x\n", "x\n"), "");
    }
}
