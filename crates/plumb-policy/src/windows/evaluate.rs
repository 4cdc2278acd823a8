//! Windows evaluated at one instant, and what that means for a sync: Argo's
//! `SyncWindows.Active`, `InactiveAllows` and `CanSync` (`pkg/apis/application/v1alpha1/types.go`),
//! the CLI's `SyncWindow:` label (`printAppSummaryTable` in `cmd/argocd/commands/app.go`) and
//! the `syncOverrun` rule (`docs/user-guide/sync_windows.md`).

use std::fmt;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use plumb_model::application::SyncWindow;

use super::WindowError;
use super::cron::Schedule;
use super::{duration, zone};

/// How many back-to-back occurrences [`ActiveWindow::until`] follows before giving up (a
/// `* * * * *` window lasting an hour never closes).
const MAX_CHAIN: usize = 1000;

/// Whether a window allows or denies syncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// `allow`: when a project has allow windows for an Application, it syncs only inside one.
    Allow,
    /// `deny`: no sync while it is active (beats any allow window).
    Deny,
}

impl WindowKind {
    /// `allow` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::Allow => "allow",
            WindowKind::Deny => "deny",
        }
    }
}

impl fmt::Display for WindowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A window that is open at the evaluated instant.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ActiveWindow {
    /// Position of the window in the list given to [`evaluate`].
    pub index: usize,
    /// Allow or deny.
    pub kind: WindowKind,
    /// The cron schedule as written.
    pub schedule: String,
    /// The duration as written.
    pub duration: String,
    /// The zone the schedule is read in (`UTC` when none is set).
    pub time_zone: String,
    /// Lets manual syncs through.
    pub manual_sync: bool,
    /// Lets a running sync go on (see [`WindowState::can_continue`]).
    pub sync_overrun: bool,
    /// When the open occurrence started.
    pub since: Timestamp,
    /// When the window closes, following occurrences that start before the previous one ends;
    /// `None` when it does not close within 1000 occurrences.
    pub until: Option<Timestamp>,
    tz: TimeZone,
}

impl ActiveWindow {
    /// `kind:schedule:duration`, as Argo lists assigned windows.
    pub fn label(&self) -> String {
        format!("{}:{}:{}", self.kind, self.schedule, self.duration)
    }
}

/// One window, read and checked.
#[derive(Debug, Clone)]
struct Compiled {
    kind: WindowKind,
    schedule: Schedule,
    duration: SignedDuration,
    zone_name: String,
    tz: TimeZone,
}

fn label(w: &SyncWindow) -> String {
    format!(
        "{}:{}:{}",
        w.kind.as_deref().unwrap_or_default(),
        w.schedule.as_deref().unwrap_or_default(),
        w.duration.as_deref().unwrap_or_default()
    )
}

fn compile(w: &SyncWindow, index: usize) -> Result<Compiled, WindowError> {
    let kind = match w.kind.as_deref().unwrap_or_default() {
        "allow" => WindowKind::Allow,
        "deny" => WindowKind::Deny,
        other => {
            return Err(WindowError::Kind {
                index,
                window: label(w),
                kind: other.to_string(),
            });
        }
    };
    let schedule_text = w.schedule.as_deref().unwrap_or_default();
    let schedule = Schedule::parse(schedule_text).map_err(|source| WindowError::Schedule {
        index,
        window: label(w),
        schedule: schedule_text.to_string(),
        source,
    })?;
    let duration_text = w.duration.as_deref().unwrap_or_default();
    let duration = duration::parse(duration_text).map_err(|source| WindowError::Duration {
        index,
        window: label(w),
        duration: duration_text.to_string(),
        source,
    })?;
    let zone_name = schedule
        .zone()
        .or(w.time_zone.as_deref())
        .filter(|z| !z.is_empty())
        .unwrap_or("UTC")
        .to_string();
    let tz = if zone_name == "UTC" {
        TimeZone::UTC
    } else {
        TimeZone::get(&zone_name).map_err(|source| WindowError::TimeZone {
            index,
            window: label(w),
            zone: zone_name.clone(),
            source,
        })?
    };
    Ok(Compiled {
        kind,
        schedule,
        duration,
        zone_name,
        tz,
    })
}

/// Checks that a window can be evaluated (kind, schedule, duration, time zone); `index` names
/// it in the error.
pub fn validate(window: &SyncWindow, index: usize) -> Result<(), WindowError> {
    compile(window, index).map(|_| ())
}

/// One window as evaluated.
#[derive(Debug, Clone)]
struct Evaluated {
    kind: WindowKind,
    schedule: String,
    duration: String,
    zone_name: String,
    tz: TimeZone,
    manual_sync: bool,
    sync_overrun: bool,
    active: bool,
    next_start: Option<Timestamp>,
}

impl Evaluated {
    fn label(&self) -> String {
        format!("{}:{}:{}", self.kind, self.schedule, self.duration)
    }
}

/// The windows assigned to an Application, evaluated at one instant.
#[derive(Debug, Clone)]
pub struct WindowState {
    now: Timestamp,
    windows: Vec<Evaluated>,
    active: Vec<ActiveWindow>,
}

// The end of a run of occurrences that each start before the previous one ends.
fn chain_end(c: &Compiled, since: Timestamp, now: Timestamp) -> Option<Timestamp> {
    let mut end = since.checked_add(c.duration).ok()?;
    let mut cursor = now;
    for _ in 0..MAX_CHAIN {
        match zone::next_start(&c.schedule, &c.tz, cursor) {
            Some(next) if next <= end => {
                end = end.max(next.checked_add(c.duration).ok()?);
                cursor = next;
            }
            _ => return Some(end),
        }
    }
    None
}

/// Evaluates windows at `now`.
///
/// A window is active when one of its scheduled starts `s` satisfies `s <= now < s + duration`,
/// the duration being elapsed time. Starts are read as wall-clock times in the window's
/// `timeZone` (default UTC) with that day's offset, so windows keep their local hours across
/// daylight-saving changes; a start inside a spring-forward gap opens the window at the end of
/// the gap, a start in a repeated hour opens it once, at the first occurrence (see
/// [`super::zone`]).
///
/// Argo instead reads the schedule in UTC shifted by the zone's offset at the moment of
/// evaluation (`scheduleOffsetByTimeZone`). Between changes that gives the same local hours, but
/// a window running across a change lasts an hour more or less than its duration, one starting
/// in a repeated hour opens twice, and one starting in the skipped hour opens at the end of the
/// gap and loses the part of its duration that fell in the gap. Argo also counts neither the
/// exact start instant nor the exact end as inside the window, and falls back to UTC for an
/// unknown zone, where Plumb reports an error.
///
/// The first window that cannot be read makes the whole evaluation fail: treat that as "may not
/// sync", as Argo does.
pub fn evaluate(windows: &[&SyncWindow], now: Timestamp) -> Result<WindowState, WindowError> {
    let mut evaluated = Vec::with_capacity(windows.len());
    let mut active = Vec::new();
    for (index, w) in windows.iter().enumerate() {
        let c = compile(w, index)?;
        let open = zone::prev_start(&c.schedule, &c.tz, now).filter(|start| {
            start
                .checked_add(c.duration)
                .is_ok_and(|end| *start <= now && now < end)
        });
        if let Some(since) = open {
            active.push(ActiveWindow {
                index,
                kind: c.kind,
                schedule: w.schedule.clone().unwrap_or_default(),
                duration: w.duration.clone().unwrap_or_default(),
                time_zone: c.zone_name.clone(),
                manual_sync: w.manual_sync == Some(true),
                sync_overrun: w.sync_overrun == Some(true),
                since,
                until: chain_end(&c, since, now),
                tz: c.tz.clone(),
            });
        }
        evaluated.push(Evaluated {
            kind: c.kind,
            schedule: w.schedule.clone().unwrap_or_default(),
            duration: w.duration.clone().unwrap_or_default(),
            zone_name: c.zone_name,
            next_start: zone::next_start(&c.schedule, &c.tz, now),
            tz: c.tz,
            manual_sync: w.manual_sync == Some(true),
            sync_overrun: w.sync_overrun == Some(true),
            active: open.is_some(),
        });
    }
    Ok(WindowState {
        now,
        windows: evaluated,
        active,
    })
}

/// `HH:MM Zone`, with the date in front when it is not the day of `now` in that zone.
fn clock(at: Timestamp, tz: &TimeZone, zone_name: &str, now: Timestamp) -> String {
    let local = at.to_zoned(tz.clone());
    let today = now.to_zoned(tz.clone()).date();
    let format = if local.date() == today {
        "%H:%M"
    } else {
        "%Y-%m-%d %H:%M"
    };
    format!("{} {zone_name}", local.strftime(format))
}

impl WindowState {
    /// The instant the windows were evaluated at.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// True when no window was evaluated (nothing restricts syncs).
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// The windows open now, in the order given.
    pub fn active(&self) -> &[ActiveWindow] {
        &self.active
    }

    fn active_denies(&self) -> impl Iterator<Item = &ActiveWindow> {
        self.active.iter().filter(|w| w.kind == WindowKind::Deny)
    }

    fn has_active_allow(&self) -> bool {
        self.active.iter().any(|w| w.kind == WindowKind::Allow)
    }

    fn inactive_allows(&self) -> impl Iterator<Item = &Evaluated> {
        self.windows
            .iter()
            .filter(|w| w.kind == WindowKind::Allow && !w.active)
    }

    /// Whether a sync may start now (Argo's `CanSync`): no windows, yes; an active deny window
    /// blocks, unless the sync is manual and every active deny window has `manualSync`; else an
    /// active allow window lets it through; else, when there are allow windows (all closed), only
    /// a manual sync passes and only if every one of them has `manualSync`; else yes.
    pub fn can_sync(&self, manual: bool) -> bool {
        if self.windows.is_empty() {
            return true;
        }
        if self.active_denies().next().is_some() {
            return manual && self.active_denies().all(|w| w.manual_sync);
        }
        if self.has_active_allow() {
            return true;
        }
        if self.inactive_allows().next().is_some() {
            return manual && self.inactive_allows().all(|w| w.manual_sync);
        }
        true
    }

    /// Whether a sync that is already running may go on although [`Self::can_sync`] would not
    /// start it now (Argo's `syncOverrun`, for a sync that was allowed when it started): every
    /// active deny window must have `syncOverrun`, and when no allow window is open, every closed
    /// allow window must have it too. A new sync ignores `syncOverrun`.
    pub fn can_continue(&self, manual: bool) -> bool {
        if self.can_sync(manual) {
            return true;
        }
        let denies = self.active_denies().all(|w| w.sync_overrun);
        let allows = self.has_active_allow() || self.inactive_allows().all(|w| w.sync_overrun);
        denies && allows
    }

    /// The `SyncWindow:` label of `argocd app get`: `Sync Denied` or `Manual Allowed` when an
    /// active deny window, or closed allow windows with none open, stand in the way (decided by
    /// [`Self::can_sync`] for a manual sync), else `Sync Allowed`.
    pub fn label(&self) -> &'static str {
        let blocked = self.active_denies().next().is_some()
            || (!self.has_active_allow() && self.inactive_allows().next().is_some());
        if !blocked {
            "Sync Allowed"
        } else if self.can_sync(true) {
            "Manual Allowed"
        } else {
            "Sync Denied"
        }
    }

    /// Why a sync may not start now, naming the windows in the way and when that changes, e.g.
    /// `Blocked by sync window deny:0 2 * * *:1h (active until 03:00 UTC)`; `None` when it may.
    pub fn blocked_message(&self, manual: bool) -> Option<String> {
        if self.can_sync(manual) {
            return None;
        }
        let blocking: Vec<&ActiveWindow> = self
            .active_denies()
            .filter(|w| !(manual && w.manual_sync))
            .collect();
        if !blocking.is_empty() {
            let parts: Vec<String> = blocking
                .iter()
                .map(|w| match w.until {
                    Some(until) => format!(
                        "{} (active until {})",
                        w.label(),
                        clock(until, &w.tz, &w.time_zone, self.now)
                    ),
                    None => format!("{} (active)", w.label()),
                })
                .collect();
            let s = if parts.len() > 1 { "s" } else { "" };
            return Some(format!("Blocked by sync window{s} {}", parts.join(", ")));
        }
        let next = self
            .inactive_allows()
            .filter_map(|w| w.next_start.map(|at| (at, w)))
            .min_by_key(|(at, _)| *at);
        Some(match next {
            Some((at, w)) => format!(
                "Blocked by sync window: no allow window is active (next: {} opens {})",
                w.label(),
                clock(at, &w.tz, &w.zone_name, self.now)
            ),
            None => "Blocked by sync window: no allow window is active".to_string(),
        })
    }

    /// The next instant at which a window opens or closes (when to evaluate again); `None` when
    /// nothing is scheduled.
    pub fn next_change(&self) -> Option<Timestamp> {
        let closes = self.active.iter().filter_map(|w| w.until);
        let opens = self
            .windows
            .iter()
            .filter(|w| !w.active)
            .filter_map(|w| w.next_start);
        closes.chain(opens).min()
    }
}
