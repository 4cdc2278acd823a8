//! When a schedule fires in a time zone: its civil (wall-clock) start times mapped to instants
//! with the zone's rules for that day, so a `0 9 * * *` window opens at 09:00 local time in
//! winter and in summer alike.
//!
//! Two civil times need a rule of their own:
//! - in a spring-forward gap (02:30 in Europe/Berlin on the last Sunday of March does not exist)
//!   the window opens at the first instant after the gap (03:00 CEST), as cronie runs jobs of the
//!   skipped hour; several starts inside one gap open it once;
//! - in a fall-back fold (02:30 happens twice on the last Sunday of October) the window opens
//!   once, at the first occurrence (02:30 CEST).
//!
//! With these rules the mapping from civil time to instant never goes backwards, which the
//! searches below rely on.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};

use super::cron::{Schedule, minute_after, minute_before};

/// Bound on candidates skipped in one search (inside a fold or a gap at most 60 per hour of the
/// transition match and are skipped; anything past this is a broken zone).
const MAX_SKIPS: usize = 10_000;

/// The instant a window starting at civil time `at` opens in `tz`.
pub fn fire_instant(tz: &TimeZone, at: DateTime) -> Option<Timestamp> {
    match tz.to_ambiguous_timestamp(at).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(at).ok(),
        AmbiguousOffset::Gap { before, after } => {
            // Read with the later offset the time lies before the gap; the transition after it
            // is the end of the gap.
            let ahead = after.to_timestamp(at).ok()?;
            tz.following(ahead)
                .next()
                .map(|t| t.timestamp())
                .or_else(|| before.to_timestamp(at).ok())
        }
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(at).ok(),
    }
}

/// The latest instant at or before `now` at which the schedule opens the window.
pub fn prev_start(schedule: &Schedule, tz: &TimeZone, now: Timestamp) -> Option<Timestamp> {
    let local = tz.to_datetime(now);
    // In the second pass of a fold, later civil times of the fold opened in its first pass,
    // before now: start the search at the end of the fold.
    let mut upper = local;
    if let AmbiguousOffset::Fold { before, after } = tz.to_ambiguous_timestamp(local).offset()
        && tz.to_offset(now) == after
    {
        let fold = before.duration_since(after);
        upper = local.checked_add(fold).ok()?;
    }
    for _ in 0..MAX_SKIPS {
        let at = schedule.last_at_or_before(upper)?;
        let instant = fire_instant(tz, at)?;
        if instant <= now {
            return Some(instant);
        }
        upper = minute_before(at)?;
    }
    None
}

/// The first instant strictly after `after` at which the schedule opens the window.
pub fn next_start(schedule: &Schedule, tz: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    let mut from = tz.to_datetime(after);
    for _ in 0..MAX_SKIPS {
        let at = schedule.next_at_or_after(from)?;
        let instant = fire_instant(tz, at)?;
        if instant > after {
            return Some(instant);
        }
        from = minute_after(at)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn gap_times_open_at_the_end_of_the_gap() {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
        let at = "2026-03-29T02:30".parse().unwrap();
        assert_eq!(
            fire_instant(&berlin(), at),
            Some(ts("2026-03-29T01:00:00Z"))
        );
        let every15 = Schedule::parse("*/15 2 * * *").unwrap();
        // All four starts of the skipped hour open once, at 01:00 UTC.
        assert_eq!(
            next_start(&every15, &berlin(), ts("2026-03-29T00:00:00Z")),
            Some(ts("2026-03-29T01:00:00Z"))
        );
        assert_eq!(
            next_start(&every15, &berlin(), ts("2026-03-29T01:00:00Z")),
            Some(ts("2026-03-30T00:00:00Z"))
        );
        assert_eq!(
            prev_start(&every15, &berlin(), ts("2026-03-29T05:00:00Z")),
            Some(ts("2026-03-29T01:00:00Z"))
        );
    }

    #[test]
    fn fold_times_open_once_at_the_first_occurrence() {
        // 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00 UTC; 02:00-02:59 happen twice.
        let every10 = Schedule::parse("*/10 2 * * *").unwrap();
        let tz = berlin();
        // 01:35 UTC is 02:35 CET, the second pass: 02:50 opened in the first pass at 00:50 UTC.
        assert_eq!(
            prev_start(&every10, &tz, ts("2026-10-25T01:35:00Z")),
            Some(ts("2026-10-25T00:50:00Z"))
        );
        // In the first pass, the usual order.
        assert_eq!(
            prev_start(&every10, &tz, ts("2026-10-25T00:35:00Z")),
            Some(ts("2026-10-25T00:30:00Z"))
        );
        // Nothing opens again in the second pass.
        assert_eq!(
            next_start(&every10, &tz, ts("2026-10-25T00:55:00Z")),
            Some(ts("2026-10-26T01:00:00Z"))
        );
        assert_eq!(
            next_start(&every10, &tz, ts("2026-10-25T01:05:00Z")),
            Some(ts("2026-10-26T01:00:00Z"))
        );
    }
}
