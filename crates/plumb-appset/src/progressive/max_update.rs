//! `maxUpdate` of a RollingSync step: how many of a step's Applications may be Pending or
//! Progressing at once (Kubernetes' `IntOrString` scaled as `intstr.GetScaledValueFromIntOrPercent`
//! with rounding down, then Argo's floor of 1 for any percentage but `0%`).

use serde_json::Value;

/// The limit for a step of `total` Applications. `Ok(None)`: unbounded (no `maxUpdate`).
/// `Err(limit)`: the value is unusable; `limit` is what Argo then applies anyway.
pub fn limit(max_update: Option<&Value>, total: usize) -> Result<Option<i64>, i64> {
    let Some(value) = max_update else {
        return Ok(None);
    };
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) => Ok(Some(i64::from(n))),
            // Go could not even read such a set; the strictest limit a bad string gets.
            None => Err(1),
        },
        Value::String(s) => {
            let scaled = scale_percent(s, total);
            // Any percentage but "0%" lets at least one Application through, even when it
            // rounds down to 0 or the value is unusable (Argo then has 0 and raises it).
            let floor = |v: i64| if s != "0%" && v < 1 { 1 } else { v };
            match scaled {
                Some(v) => Ok(Some(floor(v))),
                None => Err(floor(0)),
            }
        }
        _ => Err(1),
    }
}

/// `"25%"` of `total`, rounded down; `None` when `s` is not an integer followed by `%`.
fn scale_percent(s: &str, total: usize) -> Option<i64> {
    let percent: i64 = s.strip_suffix('%')?.parse().ok()?;
    let total = i64::try_from(total).unwrap_or(i64::MAX);
    // i128 so that hostile percentages cannot overflow; div_euclid rounds down like math.Floor.
    let scaled = (i128::from(percent) * i128::from(total)).div_euclid(100);
    Some(i64::try_from(scaled).unwrap_or(if scaled < 0 { i64::MIN } else { i64::MAX }))
}

/// The value as Argo prints it in the `InvalidRolloutConfig` message.
pub fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn counts_and_percentages() {
        assert_eq!(limit(None, 10), Ok(None));
        assert_eq!(limit(Some(&json!(2)), 10), Ok(Some(2)));
        assert_eq!(limit(Some(&json!(0)), 10), Ok(Some(0)));
        assert_eq!(limit(Some(&json!("50%")), 5), Ok(Some(2)), "rounds down");
        assert_eq!(
            limit(Some(&json!("10%")), 3),
            Ok(Some(1)),
            "at least one for >0%"
        );
        assert_eq!(limit(Some(&json!("0%")), 10), Ok(Some(0)));
        assert_eq!(limit(Some(&json!("100%")), 7), Ok(Some(7)));
        assert_eq!(limit(Some(&json!("150%")), 2), Ok(Some(3)));
    }

    #[test]
    fn bad_values_are_reported_with_the_limit_argo_applies() {
        assert_eq!(
            limit(Some(&json!("3")), 10),
            Err(1),
            "a string must be a percentage"
        );
        assert_eq!(limit(Some(&json!("abc%")), 10), Err(1));
        assert_eq!(limit(Some(&json!(1.5)), 10), Err(1));
        assert_eq!(limit(Some(&json!(1_u64 << 40)), 10), Err(1));
        assert_eq!(limit(Some(&json!("99999999999999999999%")), 10), Err(1));
        assert_eq!(display(&json!("abc%")), "abc%");
        assert_eq!(display(&json!(1.5)), "1.5");
    }
}
