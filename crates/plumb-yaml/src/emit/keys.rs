//! go-yaml v2's map key order (`sorter.go`, `keyList.Less`), which is not byte order: runs of
//! digits compare by numeric value (`item9` < `item10`) and a non-letter sorts before a letter
//! (`a_b` < `aB`, where byte order says the opposite).

use std::cmp::Ordering;

/// Orders two map keys as go-yaml v2 does when it marshals a `map[interface{}]interface{}`.
pub(crate) fn go_yaml_key_cmp(a: &str, b: &str) -> Ordering {
    if go_yaml_key_less(a, b) {
        Ordering::Less
    } else if go_yaml_key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

// A line-by-line port of the string branch of keyList.Less, including its int64 wrap-around.
fn go_yaml_key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(digit_value(ar[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(digit_value(br[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

// Go computes `int64(r - '0')`, which for non-ASCII digits is a large number; keep that.
fn digit_value(c: char) -> i64 {
    i64::from(u32::from(c)) - i64::from(u32::from('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(keys: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| go_yaml_key_cmp(a, b));
        v
    }

    #[test]
    fn digits_compare_numerically() {
        assert_eq!(
            sorted(&["item10", "item9", "item1"]),
            ["item1", "item9", "item10"]
        );
    }

    #[test]
    fn non_letters_before_letters() {
        // Byte order would put "aB" (0x42) before "a_b" (0x5f).
        assert_eq!(sorted(&["aB", "a_b", "a-b"]), ["a-b", "a_b", "aB"]);
        assert_eq!(
            sorted(&["app", "app.kubernetes.io/name", "apiVersion"]),
            ["apiVersion", "app", "app.kubernetes.io/name"]
        );
    }

    #[test]
    fn kubernetes_object_keys() {
        assert_eq!(
            sorted(&["spec", "apiVersion", "kind", "metadata", "status"]),
            ["apiVersion", "kind", "metadata", "spec", "status"]
        );
        // Upper-case letters still sort before lower-case ones, as in byte order.
        assert_eq!(sorted(&["b", "B", "a"]), ["B", "a", "b"]);
    }

    #[test]
    fn leading_zeros() {
        // Equal numeric values: the shorter digit run sorts first (`ai < bi` in Less).
        assert_eq!(sorted(&["a01", "a1", "a001"]), ["a1", "a01", "a001"]);
        assert_eq!(sorted(&["v010", "v10"]), ["v10", "v010"]);
    }
}
