//! The brake on mass deletion: how many objects an automated prune may delete in one operation.
//!
//! A Git mistake (a path renamed, a generator emptied, a branch force-pushed) can drop most of
//! an Application in one commit; with automated prune, Argo CD deletes whatever Git no longer
//! declares, stopped only by `allowEmpty` when *every* object would go. Plumb stops an automated
//! operation before it writes anything when it would delete **more than `maxDeletions` objects
//! and more than `maxFraction` of the Application's live objects**. Both must be exceeded: a
//! small Application may lose most of its few objects in an ordinary refactor, and a large one
//! may lose a few dozen; losing many objects that are most of an Application is what a mistake
//! looks like.
//!
//! | where | keys | wins over |
//! |---|---|---|
//! | operation `syncOptions`, then `spec.syncPolicy.syncOptions` | `PruneMaxDeletions=N`, `PruneMaxFraction=F` | everything below |
//! | `argocd-cm` | `plumb.sync.prune.maxDeletions`, `plumb.sync.prune.maxFraction` | the defaults |
//! | defaults | 10 objects, 0.5 | — |
//!
//! `F` is a fraction (`0.5`) or a percentage (`50%`). `PruneMaxFraction=1` (or `100%`) turns the
//! brake off (no operation deletes more than all objects); `PruneMaxDeletions=0` with
//! `PruneMaxFraction=0` stops every automated deletion. A value that does not parse is reported
//! and the next source (the setting, then the default) applies: a typo never releases the brake.
//!
//! ```
//! use plumb_policy::brake::Brake;
//!
//! let brake = Brake::resolve(|_| None, &[]).brake;
//! assert!(brake.check(9, 10).is_ok(), "9 objects: not more than 10");
//! assert!(brake.check(11, 30).is_ok(), "11 of 30: not more than half");
//! let stop = brake.check(20, 25).unwrap_err();
//! assert_eq!(stop.deletions, 20);
//! assert!(stop.to_string().starts_with("pruning 20 of 25 objects (80%) exceeds both limits"));
//! ```

use std::fmt;

/// `argocd-cm` key: the deletions an automated operation may make regardless of the fraction.
pub const MAX_DELETIONS_SETTING: &str = plumb_model::settings::PRUNE_MAX_DELETIONS;
/// `argocd-cm` key: the fraction of the Application an automated operation may delete
/// regardless of the count.
pub const MAX_FRACTION_SETTING: &str = plumb_model::settings::PRUNE_MAX_FRACTION;
/// Sync option overriding [`MAX_DELETIONS_SETTING`] for one Application or operation.
pub const MAX_DELETIONS_OPTION: &str = "PruneMaxDeletions";
/// Sync option overriding [`MAX_FRACTION_SETTING`] for one Application or operation.
pub const MAX_FRACTION_OPTION: &str = "PruneMaxFraction";
/// Default of [`MAX_DELETIONS_SETTING`].
pub const DEFAULT_MAX_DELETIONS: usize = 10;
/// Default of [`MAX_FRACTION_SETTING`].
pub const DEFAULT_MAX_FRACTION: f64 = 0.5;

/// Where a limit came from (named in the message, so the reader knows what to change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// A key of `argocd-cm`.
    Setting(&'static str),
    /// A sync option of the Application or the operation.
    SyncOption(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Setting(k) => write!(f, "argocd-cm {k}"),
            Origin::SyncOption(k) => write!(f, "sync option {k}"),
        }
    }
}

/// The two limits in force for one operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Brake {
    /// Deletions allowed whatever the fraction.
    pub max_deletions: usize,
    /// Where `max_deletions` came from.
    pub max_deletions_origin: Origin,
    /// Fraction (0..=1) of the live objects allowed whatever the count.
    pub max_fraction: f64,
    /// Where `max_fraction` came from.
    pub max_fraction_origin: Origin,
}

impl Default for Brake {
    fn default() -> Self {
        Self {
            max_deletions: DEFAULT_MAX_DELETIONS,
            max_deletions_origin: Origin::Default,
            max_fraction: DEFAULT_MAX_FRACTION,
            max_fraction_origin: Origin::Default,
        }
    }
}

/// The brake resolved from settings and sync options, with what did not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The limits in force.
    pub brake: Brake,
    /// One message per value that did not parse (and was ignored).
    pub invalid: Vec<String>,
}

/// An operation the brake stops: the count, the limits and how to proceed.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// Objects the operation would delete.
    pub deletions: usize,
    /// Live objects of the Application.
    pub total: usize,
    /// The limits that were exceeded.
    pub brake: Brake,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.brake;
        write!(
            f,
            "pruning {} of {} objects ({}) exceeds both limits: {} objects ({}) and {} ({})",
            self.deletions,
            self.total,
            percent(ratio(self.deletions, self.total)),
            b.max_deletions,
            b.max_deletions_origin,
            percent(b.max_fraction),
            b.max_fraction_origin,
        )
    }
}

impl std::error::Error for Stopped {}

impl Stopped {
    /// The whole message for Application `app`: the count, the limits, that nothing happened,
    /// and how to proceed.
    pub fn message(&self, app: &str) -> String {
        format!(
            "Mass-deletion brake: {self}. Nothing was applied or deleted. If Git is right, sync once by hand \
             (plumb app sync {app} --prune, which asks for confirmation) or raise the limits for this \
             Application (sync options {MAX_DELETIONS_OPTION}=N, {MAX_FRACTION_OPTION}=F)"
        )
    }
}

fn ratio(part: usize, total: usize) -> f64 {
    if total == 0 {
        return 0.0;
    }
    // Object counts are far below 2^52: the conversion is exact.
    part as f64 / total as f64
}

fn percent(f: f64) -> String {
    let p = f * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Parses a fraction: `0.5`, `50%`; within 0..=1.
pub fn parse_fraction(text: &str) -> Option<f64> {
    let t = text.trim();
    let f = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok()? / 100.0,
        None => t.parse::<f64>().ok()?,
    };
    (f.is_finite() && (0.0..=1.0).contains(&f)).then_some(f)
}

/// Parses a count of objects: a non-negative integer.
pub fn parse_count(text: &str) -> Option<usize> {
    text.trim().parse::<usize>().ok()
}

impl Brake {
    /// The limits for one operation: `setting` looks up an `argocd-cm` key; `sync_options` are
    /// the Application's then the operation's `Name=value` options (later ones win).
    pub fn resolve<'a>(
        setting: impl Fn(&str) -> Option<&'a str>,
        sync_options: &[&str],
    ) -> Resolved {
        let mut brake = Brake::default();
        let mut invalid = Vec::new();
        if let Some(v) = setting(MAX_DELETIONS_SETTING) {
            match parse_count(v) {
                Some(n) => {
                    brake.max_deletions = n;
                    brake.max_deletions_origin = Origin::Setting(MAX_DELETIONS_SETTING);
                }
                None => invalid.push(format!(
                    "{MAX_DELETIONS_SETTING}: {v:?} is not a number of objects; using the default {DEFAULT_MAX_DELETIONS}"
                )),
            }
        }
        if let Some(v) = setting(MAX_FRACTION_SETTING) {
            match parse_fraction(v) {
                Some(f) => {
                    brake.max_fraction = f;
                    brake.max_fraction_origin = Origin::Setting(MAX_FRACTION_SETTING);
                }
                None => invalid.push(format!(
                    "{MAX_FRACTION_SETTING}: {v:?} is not a fraction between 0 and 1 (or a percentage); using the default {DEFAULT_MAX_FRACTION}"
                )),
            }
        }
        for option in sync_options.iter().flat_map(|o| o.split(',')) {
            let Some((name, value)) = option.split_once('=') else {
                continue;
            };
            match name.trim() {
                MAX_DELETIONS_OPTION => match parse_count(value) {
                    Some(n) => {
                        brake.max_deletions = n;
                        brake.max_deletions_origin = Origin::SyncOption(MAX_DELETIONS_OPTION);
                    }
                    None => invalid.push(format!(
                        "sync option {MAX_DELETIONS_OPTION}={}: not a number of objects; ignored",
                        value.trim()
                    )),
                },
                MAX_FRACTION_OPTION => match parse_fraction(value) {
                    Some(f) => {
                        brake.max_fraction = f;
                        brake.max_fraction_origin = Origin::SyncOption(MAX_FRACTION_OPTION);
                    }
                    None => invalid.push(format!(
                        "sync option {MAX_FRACTION_OPTION}={}: not a fraction between 0 and 1 (or a percentage); ignored",
                        value.trim()
                    )),
                },
                _ => {}
            }
        }
        Resolved { brake, invalid }
    }

    /// Whether deleting `deletions` of the Application's `total` live objects is within the
    /// brake; `Err` says by how much it is not.
    pub fn check(&self, deletions: usize, total: usize) -> Result<(), Stopped> {
        let total = total.max(deletions);
        let too_many = deletions > self.max_deletions;
        let too_much = deletions > 0 && ratio(deletions, total) > self.max_fraction;
        if too_many && too_much {
            Err(Stopped {
                deletions,
                total,
                brake: *self,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
    }

    #[test]
    fn both_limits_must_be_exceeded() {
        let b = Brake::default();
        assert!(b.check(0, 0).is_ok());
        assert!(
            b.check(3, 3).is_ok(),
            "a small application may lose everything but"
        );
        assert!(b.check(10, 10).is_ok(), "10 is not more than 10");
        assert!(b.check(11, 22).is_ok(), "half is not more than half");
        assert!(b.check(40, 100).is_ok(), "40% of a large application");
        let stop = b.check(99, 100).unwrap_err();
        assert_eq!(
            stop.to_string(),
            "pruning 99 of 100 objects (99%) exceeds both limits: 10 objects (default) and 50% (default)"
        );
        assert_eq!(
            stop.message("payments"),
            "Mass-deletion brake: pruning 99 of 100 objects (99%) exceeds both limits: 10 objects (default) and 50% (default). \
             Nothing was applied or deleted. If Git is right, sync once by hand (plumb app sync payments --prune, which asks \
             for confirmation) or raise the limits for this Application (sync options PruneMaxDeletions=N, PruneMaxFraction=F)"
        );
        assert!(b.check(11, 21).is_err());
    }

    #[test]
    fn sync_options_win_over_settings_which_win_over_defaults() {
        let cm = [(MAX_DELETIONS_SETTING, "3"), (MAX_FRACTION_SETTING, "20%")];
        let r = Brake::resolve(settings(&cm), &[]);
        assert!(r.invalid.is_empty());
        assert_eq!(r.brake.max_deletions, 3);
        assert_eq!(r.brake.max_fraction, 0.2);
        let stop = r.brake.check(4, 10).unwrap_err();
        assert_eq!(
            stop.to_string(),
            "pruning 4 of 10 objects (40%) exceeds both limits: 3 objects (argocd-cm plumb.sync.prune.maxDeletions) and 20% (argocd-cm plumb.sync.prune.maxFraction)"
        );
        let r = Brake::resolve(
            settings(&cm),
            &[
                "CreateNamespace=true,PruneMaxDeletions=5",
                "PruneMaxFraction=1",
            ],
        );
        assert_eq!(r.brake.max_deletions, 5);
        assert_eq!(
            r.brake.max_deletions_origin,
            Origin::SyncOption(MAX_DELETIONS_OPTION)
        );
        assert!(
            r.brake.check(1000, 1000).is_ok(),
            "a fraction of 1 turns it off"
        );
        // The operation's options come last and win.
        let r = Brake::resolve(
            settings(&[]),
            &["PruneMaxDeletions=50", "PruneMaxDeletions=2"],
        );
        assert_eq!(r.brake.max_deletions, 2);
    }

    #[test]
    fn a_value_that_does_not_parse_never_releases_the_brake() {
        let cm = [
            (MAX_DELETIONS_SETTING, "lots"),
            (MAX_FRACTION_SETTING, "1.5"),
        ];
        let r = Brake::resolve(
            settings(&cm),
            &["PruneMaxFraction=all", "PruneMaxDeletions=-1"],
        );
        assert_eq!(r.brake, Brake::default());
        assert_eq!(
            r.invalid,
            [
                "plumb.sync.prune.maxDeletions: \"lots\" is not a number of objects; using the default 10",
                "plumb.sync.prune.maxFraction: \"1.5\" is not a fraction between 0 and 1 (or a percentage); using the default 0.5",
                "sync option PruneMaxFraction=all: not a fraction between 0 and 1 (or a percentage); ignored",
                "sync option PruneMaxDeletions=-1: not a number of objects; ignored",
            ]
        );
    }

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(parse_fraction("0.25"), Some(0.25));
        assert_eq!(parse_fraction(" 75% "), Some(0.75));
        assert_eq!(parse_fraction("100%"), Some(1.0));
        assert_eq!(parse_fraction("NaN"), None);
        assert_eq!(parse_fraction("-0.1"), None);
        assert_eq!(percent(1.0 / 3.0), "33.3%");
    }
}
