//! The brake's thresholds: per controller from `argocd-cmd-params-cm`, switched off per set by
//! annotation. A value that cannot be read holds every deletion (fail closed) and says why.

use std::collections::BTreeMap;

use plumb_model::applicationset::ApplicationSet;

/// `argocd-cmd-params-cm` key: the share of a set's Applications one reconcile may delete
/// (`0.5` or `50%`); more is held.
pub const SHARE_KEY: &str = "plumb.applicationset.deletion.brake.share";
/// `argocd-cmd-params-cm` key: a count of deletions never held by the share rule (`2`).
pub const MIN_KEY: &str = "plumb.applicationset.deletion.brake.min";
/// Annotation on an ApplicationSet: `off` switches the share rule off for it (a generator error
/// still holds every deletion); `on` or absent keeps it.
pub const BRAKE_ANNOTATION: &str = "plumb.dev/deletion-brake";

const PPM: u64 = 1_000_000;

/// When the brake holds deletions back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Deletions are held when they are more than this share of the set's Applications, in
    /// millionths (500 000: more than half)...
    pub share_ppm: u64,
    /// ...and more than this many.
    pub min: usize,
    /// Why a setting could not be read; then every deletion is held.
    pub invalid: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            share_ppm: PPM / 2,
            min: 2,
            invalid: None,
        }
    }
}

impl Settings {
    /// From `argocd-cmd-params-cm` data; absent keys keep the defaults (more than half and
    /// more than 2).
    pub fn from_params(data: &BTreeMap<String, String>) -> Self {
        let mut settings = Self::default();
        let mut problems = Vec::new();
        if let Some(raw) = data.get(SHARE_KEY) {
            match parse_share(raw) {
                Some(ppm) => settings.share_ppm = ppm,
                None => problems.push(format!(
                    "argocd-cmd-params-cm key {SHARE_KEY} is {raw:?}, not a share between 0 and 1 (0.5 or 50%)"
                )),
            }
        }
        if let Some(raw) = data.get(MIN_KEY) {
            match raw.trim().parse::<usize>() {
                Ok(min) => settings.min = min,
                Err(_) => problems.push(format!(
                    "argocd-cmd-params-cm key {MIN_KEY} is {raw:?}, not a whole number"
                )),
            }
        }
        if !problems.is_empty() {
            settings.invalid = Some(problems.join("; "));
        }
        settings
    }

    /// The share as people write it (`50%`, `33.3333%`).
    pub fn share_percent(&self) -> String {
        let whole = self.share_ppm / 10_000;
        let frac = self.share_ppm % 10_000;
        if frac == 0 {
            format!("{whole}%")
        } else {
            let frac = format!("{frac:04}");
            format!("{whole}.{}%", frac.trim_end_matches('0'))
        }
    }
}

/// `0.5`, `.5`, `1`, `50%`, `12.5%`: a share between 0 and 1, in millionths.
pub fn parse_share(raw: &str) -> Option<u64> {
    let raw = raw.trim();
    let (number, scale) = match raw.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (raw, 1.0),
    };
    // Only plain decimals: no exponents, signs, `inf` or `NaN` that f64 parsing would take.
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let share = value / scale;
    if !(0.0..=1.0).contains(&share) {
        return None;
    }
    // Rounded to millionths: finer shares mean nothing for counts of Applications.
    Some((share * PPM as f64).round() as u64)
}

/// The set's own switch: `Ok(true)` when the share rule applies, `Err` with the reason when
/// the annotation cannot be read.
pub fn share_rule_on(set: &ApplicationSet) -> Result<bool, String> {
    match set.metadata.annotation(BRAKE_ANNOTATION).map(str::trim) {
        None | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(format!(
            "annotation {BRAKE_ANNOTATION} is {other:?}, not \"on\" or \"off\""
        )),
    }
}

/// Whether deleting `count` of `current` Applications is more than the brake lets through.
pub fn exceeds(settings: &Settings, count: usize, current: usize) -> bool {
    let count = count as u128;
    count * u128::from(PPM) > u128::from(settings.share_ppm) * current as u128
        && count > settings.min as u128
}
