//! Numbers as they come out of `json.Marshal` → go-yaml v2 `Unmarshal` → `Marshal`.
//!
//! encoding/json writes an integral float64 below 1e21 without a fraction, so go-yaml reads it
//! back as an integer (or as an unsigned integer up to 2^64) and prints it as one; anything
//! else is a float that go-yaml prints with `strconv.FormatFloat(f, 'g', -1, 64)`: shortest
//! digits, exponent form when the exponent is < -4 or >= 6 (`1.2345675e+06`, `1e-05`).

use serde_json::Number;

/// The text go-yaml v2 prints for a JSON number.
pub(crate) fn format_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    // Beyond int64, Kubernetes' unstructured decoding has already made the number a float64.
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // encoding/json uses 'f' with shortest digits: the significant digits padded with
        // zeros (1.2345678901234567e19 → "12345678901234567000", not the exact expansion).
        let text = go_format_f_shortest(f);
        if text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok() {
            return text;
        }
    }
    go_format_g(f)
}

/// Shortest round-trip significant digits and the decimal exponent of `|f|` (`f != 0`).
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` gives the shortest round-trip digits, as Go's shortest mode does.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    (mantissa.chars().filter(char::is_ascii_digit).collect(), exp)
}

/// `strconv.FormatFloat(f, 'f', -1, 64)` for an integral `f`.
fn go_format_f_shortest(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let (digits, exp) = shortest_digits(f);
    let nd = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let mut out = String::from(if f < 0.0 { "-" } else { "" });
    out.push_str(&digits);
    out.extend(std::iter::repeat_n(
        '0',
        usize::try_from(exp + 1 - nd).unwrap_or(0),
    ));
    out
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` for finite values.
pub(crate) fn go_format_g(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, exp) = shortest_digits(f);
    let nd = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let mut out = String::from(sign);
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
        return out;
    }
    // Fixed notation with exactly the significant digits.
    let dp = exp + 1;
    let mut out = String::from(sign);
    if dp <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-dp).unwrap_or(0)));
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(dp - nd).unwrap_or(0),
        ));
    } else {
        let split = usize::try_from(dp).unwrap_or(0);
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(v: serde_json::Value) -> String {
        match v {
            serde_json::Value::Number(n) => format_number(&n),
            _ => unreachable!(),
        }
    }

    #[test]
    fn go_shortest_g_format() {
        // Expected strings are what Go's strconv.FormatFloat(f, 'g', -1, 64) returns.
        assert_eq!(go_format_g(0.5), "0.5");
        assert_eq!(go_format_g(-0.25), "-0.25");
        assert_eq!(go_format_g(1234567.5), "1.2345675e+06");
        assert_eq!(go_format_g(123456.5), "123456.5");
        assert_eq!(go_format_g(0.0001), "0.0001");
        assert_eq!(go_format_g(0.00001), "1e-05");
        assert_eq!(go_format_g(1e21), "1e+21");
        assert_eq!(go_format_g(1.5e300), "1.5e+300");
        assert_eq!(go_format_g(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn json_numbers_as_go_yaml_prints_them() {
        assert_eq!(num(json!(1)), "1");
        assert_eq!(num(json!(-7)), "-7");
        // Above int64 an unstructured object holds a float64 (checked with sigs.k8s.io/yaml).
        assert_eq!(
            num(json!(18446744073709551615u64)),
            "1.8446744073709552e+19"
        );
        // json.Marshal(1.0) is "1", which go-yaml reads back as an int.
        assert_eq!(num(json!(1.0)), "1");
        assert_eq!(num(json!(1000000.0)), "1000000");
        // 1e20 is written "100000000000000000000" by encoding/json: too big for int64 and
        // uint64, so go-yaml reads a float and prints it in exponent form.
        assert_eq!(num(json!(1e20)), "1e+20");
        assert_eq!(num(json!(1e21)), "1e+21");
        assert_eq!(num(json!(1.0000005e6)), "1.0000005e+06");
        // Shortest digits padded with zeros, as encoding/json writes it, then read as uint64.
        assert_eq!(num(json!(1.2345678901234567e19)), "12345678901234567000");
        assert_eq!(num(json!(4611686018427387904.0)), "4611686018427388000");
        assert_eq!(num(json!(0.5)), "0.5");
    }
}
