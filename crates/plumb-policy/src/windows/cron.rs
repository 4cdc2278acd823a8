//! Cron schedules as robfig/cron v3 parses them for Argo CD (`cron.Minute | cron.Hour | cron.Dom |
//! cron.Month | cron.Dow`): five fields, `*`/`?`, lists, ranges, steps (`N/step` means
//! `N-max/step`), month and weekday names, and the `TZ=`/`CRON_TZ=` prefix. Plumb also accepts
//! 7 for Sunday (as cron(5) does) and the descriptors `@yearly`, `@annually`, `@monthly`,
//! `@weekly`, `@daily`, `@midnight` and `@hourly`; Argo's parser refuses both.
//!
//! This module only knows civil (wall-clock) minutes; mapping them to instants in a time zone is
//! [`super::zone`]'s job.

use jiff::SignedDuration;
use jiff::civil::{Date, DateTime, Time};

/// How far [`Schedule::next_at_or_after`] and [`Schedule::last_at_or_before`] look, in days
/// (robfig gives up after five years too; `0 0 30 2 *` never fires).
const SEARCH_DAYS: usize = 5 * 366;

/// Why a schedule cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CronError {
    /// The schedule is empty.
    #[error("empty spec string")]
    Empty,
    /// Not five fields.
    #[error("expected exactly 5 fields, found {found}: [{spec}]")]
    FieldCount {
        /// How many whitespace-separated fields there are.
        found: usize,
        /// The fields, separated by single spaces.
        spec: String,
    },
    /// One field (or one element of a list) is wrong.
    #[error("{field} field '{part}': {reason}")]
    Field {
        /// `minute`, `hour`, `day-of-month`, `month` or `day-of-week`.
        field: &'static str,
        /// The element of the field that is wrong.
        part: String,
        /// robfig's reason.
        reason: String,
    },
    /// An `@` descriptor Plumb does not know (`@every` is not a calendar schedule).
    #[error("unrecognized descriptor: {0}")]
    Descriptor(String),
    /// `TZ=`/`CRON_TZ=` without a schedule after it.
    #[error("missing schedule after time zone prefix: {0}")]
    ZonePrefix(String),
}

/// The allowed values of one field.
struct Bounds {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTE: Bounds = Bounds {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
};
const HOUR: Bounds = Bounds {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    name: "day-of-month",
    min: 1,
    max: 31,
    names: &[],
};
const MONTH: Bounds = Bounds {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    name: "day-of-week",
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// A parsed schedule: one bit per allowed value of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    // robfig's "star bit": a field written `*` (or `?`, or with step 1) does not restrict days,
    // which decides whether day-of-month and day-of-week are AND-ed or OR-ed.
    dom_star: bool,
    dow_star: bool,
    zone: Option<String>,
}

fn field_error(b: &Bounds, part: &str, reason: String) -> CronError {
    CronError::Field {
        field: b.name,
        part: part.to_string(),
        reason,
    }
}

// robfig's mustParseInt (Go's strconv.Atoi: optional sign, decimal digits).
fn parse_int(b: &Bounds, part: &str, text: &str) -> Result<u32, CronError> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    if let Some(neg) = text.strip_prefix('-')
        && !neg.is_empty()
        && neg.bytes().all(|c| c.is_ascii_digit())
    {
        return Err(field_error(
            b,
            part,
            format!("negative number ({text}) not allowed: {text}"),
        ));
    }
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(field_error(
            b,
            part,
            format!("failed to parse int from {text}: invalid syntax"),
        ));
    }
    digits.parse::<u32>().map_err(|_| {
        field_error(
            b,
            part,
            format!("failed to parse int from {text}: value out of range"),
        )
    })
}

fn parse_int_or_name(b: &Bounds, part: &str, text: &str) -> Result<u32, CronError> {
    let lower = text.to_ascii_lowercase();
    match b.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => parse_int(b, part, text),
    }
}

/// robfig's `getRange`: one element of a list. Returns the bits and whether it is a star.
fn range(b: &Bounds, part: &str) -> Result<(u64, bool), CronError> {
    let range_and_step: Vec<&str> = part.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end, mut star) = if low_high[0] == "*" || low_high[0] == "?" {
        (b.min, b.max, true)
    } else {
        let start = parse_int_or_name(b, part, low_high[0])?;
        let end = match low_high.len() {
            1 => start,
            2 => parse_int_or_name(b, part, low_high[1])?,
            _ => return Err(field_error(b, part, format!("too many hyphens: {part}"))),
        };
        (start, end, false)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_int(b, part, range_and_step[1])?;
            if single {
                end = b.max;
            }
            if step > 1 {
                star = false;
            }
            step
        }
        _ => return Err(field_error(b, part, format!("too many slashes: {part}"))),
    };
    // Sunday may be written 7 (an explicit value or range end only; `*` and `N/step` stop at 6).
    let max = if b.name == DOW.name && !star && range_and_step.len() == 1 {
        7
    } else {
        b.max
    };
    if start < b.min {
        return Err(field_error(
            b,
            part,
            format!(
                "beginning of range ({start}) below minimum ({}): {part}",
                b.min
            ),
        ));
    }
    if end > max {
        return Err(field_error(
            b,
            part,
            format!("end of range ({end}) above maximum ({max}): {part}"),
        ));
    }
    if start > end {
        return Err(field_error(
            b,
            part,
            format!("beginning of range ({start}) beyond end of range ({end}): {part}"),
        ));
    }
    if step == 0 {
        return Err(field_error(
            b,
            part,
            format!("step of range should be a positive number: {part}"),
        ));
    }
    let mut bits = 0u64;
    let mut v = start;
    while v <= end {
        bits |= 1 << v;
        v += step;
    }
    if b.name == DOW.name && bits & (1 << 7) != 0 {
        bits = (bits & !(1 << 7)) | 1;
    }
    Ok((bits, star))
}

/// robfig's `getField`: a comma-separated list of ranges.
fn field(b: &Bounds, text: &str) -> Result<(u64, bool), CronError> {
    let mut bits = 0;
    let mut star = false;
    for part in text.split(',') {
        let (b2, s) = range(b, part)?;
        bits |= b2;
        star |= s;
    }
    Ok((bits, star))
}

fn descriptor(spec: &str) -> Result<&'static str, CronError> {
    Ok(match spec {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => return Err(CronError::Descriptor(other.to_string())),
    })
}

fn has(bits: u64, v: i8) -> bool {
    (0..64).contains(&v) && bits & (1 << v) != 0
}

impl Schedule {
    /// Parses a schedule as Argo's robfig parser does (plus Sunday as 7 and descriptors).
    pub fn parse(spec: &str) -> Result<Self, CronError> {
        let mut spec = spec.trim();
        if spec.is_empty() {
            return Err(CronError::Empty);
        }
        let mut zone = None;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            let Some((prefix, rest)) = spec.split_once(char::is_whitespace) else {
                return Err(CronError::ZonePrefix(spec.to_string()));
            };
            let name = prefix.split_once('=').map(|(_, n)| n).unwrap_or_default();
            zone = Some(name.to_string());
            spec = rest.trim();
        }
        if spec.starts_with('@') {
            spec = descriptor(spec)?;
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = fields.as_slice() else {
            return Err(CronError::FieldCount {
                found: fields.len(),
                spec: fields.join(" "),
            });
        };
        let (dom_bits, dom_star) = field(&DOM, dom)?;
        let (dow_bits, dow_star) = field(&DOW, dow)?;
        Ok(Self {
            minute: field(&MINUTE, minute)?.0,
            hour: field(&HOUR, hour)?.0,
            dom: dom_bits,
            month: field(&MONTH, month)?.0,
            dow: dow_bits,
            dom_star,
            dow_star,
            zone,
        })
    }

    /// The time zone named by a `TZ=`/`CRON_TZ=` prefix, which overrides the window's.
    pub fn zone(&self) -> Option<&str> {
        self.zone.as_deref()
    }

    fn month_matches(&self, d: Date) -> bool {
        has(self.month, d.month())
    }

    // robfig's dayMatches: both day fields must match when either is a star, else either.
    fn day_matches(&self, d: Date) -> bool {
        let dom = has(self.dom, d.day());
        let dow = has(self.dow, d.weekday().to_sunday_zero_offset());
        if self.dom_star || self.dow_star {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// The first matching minute of a day at or after `from` minutes past midnight.
    fn first_from(&self, from: u32) -> Option<Time> {
        (from..24 * 60)
            .find(|m| has(self.hour, (m / 60) as i8) && has(self.minute, (m % 60) as i8))
            .and_then(|m| Time::new((m / 60) as i8, (m % 60) as i8, 0, 0).ok())
    }

    /// The last matching minute of a day at or before `upto` minutes past midnight.
    fn last_upto(&self, upto: u32) -> Option<Time> {
        (0..=upto)
            .rev()
            .find(|m| has(self.hour, (m / 60) as i8) && has(self.minute, (m % 60) as i8))
            .and_then(|m| Time::new((m / 60) as i8, (m % 60) as i8, 0, 0).ok())
    }

    /// The earliest matching civil minute at or after `from` (a `from` with seconds counts from
    /// the next minute); `None` when nothing matches within five years.
    pub fn next_at_or_after(&self, from: DateTime) -> Option<DateTime> {
        let t = from.time();
        let mut minute = t.hour() as u32 * 60 + t.minute() as u32;
        if t.second() != 0 || t.subsec_nanosecond() != 0 {
            minute += 1;
        }
        let mut day = from.date();
        for _ in 0..SEARCH_DAYS {
            if !self.month_matches(day) {
                day = day.last_of_month().tomorrow().ok()?;
                minute = 0;
                continue;
            }
            if self.day_matches(day)
                && let Some(time) = self.first_from(minute)
            {
                return Some(day.to_datetime(time));
            }
            day = day.tomorrow().ok()?;
            minute = 0;
        }
        None
    }

    /// The latest matching civil minute at or before `upto`; `None` when nothing matched within
    /// five years.
    pub fn last_at_or_before(&self, upto: DateTime) -> Option<DateTime> {
        let t = upto.time();
        let mut minute = t.hour() as u32 * 60 + t.minute() as u32;
        let mut day = upto.date();
        for _ in 0..SEARCH_DAYS {
            if !self.month_matches(day) {
                day = day.first_of_month().yesterday().ok()?;
                minute = 24 * 60 - 1;
                continue;
            }
            if self.day_matches(day)
                && let Some(time) = self.last_upto(minute)
            {
                return Some(day.to_datetime(time));
            }
            day = day.yesterday().ok()?;
            minute = 24 * 60 - 1;
        }
        None
    }
}

/// One minute before a civil time (the next candidate when searching backwards).
pub fn minute_before(dt: DateTime) -> Option<DateTime> {
    dt.checked_sub(SignedDuration::from_mins(1)).ok()
}

/// One minute after a civil time (the next candidate when searching forwards).
pub fn minute_after(dt: DateTime) -> Option<DateTime> {
    dt.checked_add(SignedDuration::from_mins(1)).ok()
}

#[cfg(test)]
mod tests {
    use jiff::civil::datetime;

    use super::*;

    fn next(spec: &str, from: DateTime) -> DateTime {
        Schedule::parse(spec)
            .unwrap()
            .next_at_or_after(from)
            .unwrap()
    }

    fn last(spec: &str, upto: DateTime) -> DateTime {
        Schedule::parse(spec)
            .unwrap()
            .last_at_or_before(upto)
            .unwrap()
    }

    fn err(spec: &str) -> String {
        Schedule::parse(spec).unwrap_err().to_string()
    }

    #[test]
    fn stars_lists_ranges_and_steps() {
        let from = datetime(2026, 7, 20, 10, 16, 0, 0); // a Monday
        assert_eq!(next("* * * * *", from), from);
        assert_eq!(
            next("* * * * *", datetime(2026, 7, 20, 10, 16, 1, 0)),
            datetime(2026, 7, 20, 10, 17, 0, 0)
        );
        assert_eq!(next("0 2 * * *", from), datetime(2026, 7, 21, 2, 0, 0, 0));
        assert_eq!(
            next("15,45 */6 * * *", from),
            datetime(2026, 7, 20, 12, 15, 0, 0)
        );
        assert_eq!(
            next("0 9-17/4 * * *", from),
            datetime(2026, 7, 20, 13, 0, 0, 0)
        );
        // `N/step` runs to the maximum.
        assert_eq!(
            next("30 20/2 * * *", from),
            datetime(2026, 7, 20, 20, 30, 0, 0)
        );
        assert_eq!(next("0 0 1 */3 *", from), datetime(2026, 10, 1, 0, 0, 0, 0));
        assert_eq!(
            last("0 2 * * *", datetime(2026, 7, 20, 1, 59, 59, 0)),
            datetime(2026, 7, 19, 2, 0, 0, 0)
        );
        assert_eq!(
            last("*/20 * * * *", datetime(2026, 7, 20, 10, 16, 30, 0)),
            datetime(2026, 7, 20, 10, 0, 0, 0)
        );
    }

    #[test]
    fn names_and_sunday_as_zero_or_seven() {
        let from = datetime(2026, 7, 20, 10, 16, 0, 0); // Monday
        assert_eq!(
            next("0 22 * * FRI", from),
            datetime(2026, 7, 24, 22, 0, 0, 0)
        );
        assert_eq!(
            next("0 22 * * mon-wed", from),
            datetime(2026, 7, 20, 22, 0, 0, 0)
        );
        assert_eq!(next("0 0 1 JAN *", from), datetime(2027, 1, 1, 0, 0, 0, 0));
        let sunday = datetime(2026, 7, 26, 0, 0, 0, 0);
        assert_eq!(next("0 0 * * 0", from), sunday);
        assert_eq!(next("0 0 * * 7", from), sunday);
        assert_eq!(next("0 0 * * sun", from), sunday);
        // Friday to Sunday written 5-7.
        assert_eq!(
            next("0 0 * * 5-7", datetime(2026, 7, 25, 0, 0, 1, 0)),
            sunday
        );
        // `*/2` stops at Saturday (6), so it never reaches 7 twice over.
        assert_eq!(
            Schedule::parse("0 0 * * */2").unwrap(),
            Schedule::parse("0 0 * * 0,2,4,6").unwrap()
        );
    }

    #[test]
    fn day_of_month_and_weekday_are_ored_unless_one_is_a_star() {
        // The 13th, or any Friday (Monday the 20th is neither).
        let from = datetime(2026, 7, 20, 0, 0, 0, 0);
        assert_eq!(next("0 0 13 * 5", from), datetime(2026, 7, 24, 0, 0, 0, 0));
        assert_eq!(next("0 0 20 * fri", from), from);
        // An explicit 1-31 restricts, so any day or Friday: every day.
        assert_eq!(next("0 0 1-31 * 5", from), from);
        // `*/1` keeps the star, so every day and Friday: Fridays only.
        assert_eq!(next("0 0 */1 * 5", from), datetime(2026, 7, 24, 0, 0, 0, 0));
        assert_eq!(next("0 0 * * 5", from), datetime(2026, 7, 24, 0, 0, 0, 0));
        // February 29th is found years ahead; February 30th never.
        assert_eq!(next("0 0 29 2 *", from), datetime(2028, 2, 29, 0, 0, 0, 0));
        assert_eq!(
            Schedule::parse("0 0 30 2 *")
                .unwrap()
                .next_at_or_after(from),
            None
        );
    }

    #[test]
    fn descriptors_and_zone_prefix() {
        assert_eq!(
            Schedule::parse("@daily").unwrap(),
            Schedule::parse("0 0 * * *").unwrap()
        );
        assert_eq!(
            Schedule::parse("@hourly").unwrap(),
            Schedule::parse("0 * * * *").unwrap()
        );
        assert_eq!(err("@every 1h"), "unrecognized descriptor: @every 1h");
        let s = Schedule::parse("CRON_TZ=Europe/Berlin 0 2 * * *").unwrap();
        assert_eq!(s.zone(), Some("Europe/Berlin"));
        assert_eq!(
            err("TZ=UTC"),
            "missing schedule after time zone prefix: TZ=UTC"
        );
    }

    #[test]
    fn errors_name_the_field_and_robfigs_reason() {
        assert_eq!(err(""), "empty spec string");
        assert_eq!(
            err("0 2 * *"),
            "expected exactly 5 fields, found 4: [0 2 * *]"
        );
        assert_eq!(
            err("0 25 * * *"),
            "hour field '25': end of range (25) above maximum (23): 25"
        );
        assert_eq!(
            err("0 2 0 * *"),
            "day-of-month field '0': beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            err("0 2 * 13 *"),
            "month field '13': end of range (13) above maximum (12): 13"
        );
        assert_eq!(
            err("0 2 * * 8"),
            "day-of-week field '8': end of range (8) above maximum (7): 8"
        );
        assert_eq!(
            err("0-70/5 2 * * *"),
            "minute field '0-70/5': end of range (70) above maximum (59): 0-70/5"
        );
        assert_eq!(
            err("*/0 * * * *"),
            "minute field '*/0': step of range should be a positive number: */0"
        );
        assert_eq!(
            err("5-1 * * * *"),
            "minute field '5-1': beginning of range (5) beyond end of range (1): 5-1"
        );
        assert_eq!(
            err("1-2-3 * * * *"),
            "minute field '1-2-3': too many hyphens: 1-2-3"
        );
        assert_eq!(
            err("1/2/3 * * * *"),
            "minute field '1/2/3': too many slashes: 1/2/3"
        );
        assert_eq!(
            err("0 2 * * funday"),
            "day-of-week field 'funday': failed to parse int from funday: invalid syntax"
        );
        assert_eq!(
            err("-1 2 * * *"),
            "minute field '-1': failed to parse int from : invalid syntax"
        );
        assert_eq!(
            err("0 2 * JAN-FOO *"),
            "month field 'JAN-FOO': failed to parse int from FOO: invalid syntax"
        );
    }
}
