//! Which RollingSync step each Application belongs to, and what is wrong with the steps
//! (Argo CD's `buildAppDependencyList` and `ValidationIssues`, with the same messages).

use std::collections::BTreeMap;

use plumb_model::application::Application;
use plumb_model::applicationset::{ApplicationMatchExpression, ApplicationSetRolloutStep};

/// The Applications of each step, in order, and the step (0-based) of each Application.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepMap {
    /// Names of the Applications selected by each step, in the order the Applications came.
    pub steps: Vec<Vec<String>>,
    /// The first step that selects each Application.
    pub step_of: BTreeMap<String, usize>,
}

impl StepMap {
    /// The 1-based step number Argo writes in `applicationStatus[].step`: `-1` for an Application
    /// no step selects.
    pub fn step_label(&self, app: &str) -> String {
        self.step_of
            .get(app)
            .map_or_else(|| "-1".to_string(), |s| (s + 1).to_string())
    }

    /// The step index Argo uses for counting: a missing Application counts as step 0, as Go's
    /// zero value for a missing map key does.
    pub(crate) fn index_for_counts(&self, app: &str) -> usize {
        self.step_of.get(app).copied().unwrap_or(0)
    }
}

/// A `maxUpdate` that is neither an integer nor a percentage string.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMaxUpdate {
    /// 0-based step index.
    pub step: usize,
    /// The value as written.
    pub value: String,
}

/// Problems with the rollout configuration, reported in the `InvalidRolloutConfig` condition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidationIssues {
    /// (0-based step, operator) of `matchExpressions` with an operator other than In/NotIn.
    pub invalid_operators: Vec<(usize, String)>,
    /// Applications selected by more than one step, with those steps (0-based).
    pub duplicates: BTreeMap<String, Vec<usize>>,
    /// 0-based steps that select no generated Application.
    pub empty_steps: Vec<usize>,
    /// Steps with an unusable `maxUpdate`.
    pub invalid_max_updates: Vec<InvalidMaxUpdate>,
}

impl ValidationIssues {
    /// Whether anything is wrong.
    pub fn has_issues(&self) -> bool {
        !self.invalid_operators.is_empty()
            || !self.duplicates.is_empty()
            || !self.empty_steps.is_empty()
            || !self.invalid_max_updates.is_empty()
    }

    /// The condition message: only the highest-priority kind of issue, as Argo reports it.
    pub fn message(&self) -> String {
        if !self.invalid_operators.is_empty() {
            let steps = join_steps(self.invalid_operators.iter().map(|(s, _)| *s), ", ");
            let ops: Vec<&str> = self
                .invalid_operators
                .iter()
                .map(|(_, o)| o.as_str())
                .collect();
            let (noun, verb) = plural(self.invalid_operators.len(), "Step", "has");
            format!(
                "{noun} {steps} {verb} invalid matchExpression operators: {}. Supported Operators are 'In' and 'NotIn'",
                ops.join(", ")
            )
        } else if !self.duplicates.is_empty() {
            self.duplicates_message()
        } else if !self.invalid_max_updates.is_empty() {
            let steps = join_steps(self.invalid_max_updates.iter().map(|i| i.step), ", ");
            let values: Vec<&str> = self
                .invalid_max_updates
                .iter()
                .map(|i| i.value.as_str())
                .collect();
            if self.invalid_max_updates.len() == 1 {
                format!(
                    "Step {steps} has an invalid maxUpdate value: {}",
                    values.join(", ")
                )
            } else {
                format!(
                    "Steps {steps} have invalid maxUpdate values: [{}]",
                    values.join(", ")
                )
            }
        } else if !self.empty_steps.is_empty() {
            // Go's `%v` of a []string: `[1 2]`.
            let steps = join_steps(self.empty_steps.iter().copied(), " ");
            format!("Steps [{steps}] have no applications matching their criteria")
        } else {
            String::new()
        }
    }

    fn duplicates_message(&self) -> String {
        let names: Vec<&str> = self.duplicates.keys().map(String::as_str).collect();
        let steps: Vec<String> = self
            .duplicates
            .values()
            .map(|s| join_steps(s.iter().copied(), "-"))
            .collect();
        if names.len() == 1 {
            format!(
                "Application '{}' is selected by multiple steps: ({})",
                names[0],
                steps.join(", ")
            )
        } else {
            format!(
                "Applications '{}' are selected by multiple steps: [({})]",
                names.join("', '"),
                steps.join("), (")
            )
        }
    }
}

fn plural(n: usize, noun: &'static str, verb: &'static str) -> (String, &'static str) {
    if n == 1 {
        (noun.to_string(), verb)
    } else {
        (format!("{noun}s"), "have")
    }
}

fn join_steps(steps: impl Iterator<Item = usize>, sep: &str) -> String {
    steps
        .map(|s| (s + 1).to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

/// Sorts `applications` into `steps` by their labels, as Argo's `buildAppDependencyList`.
pub fn build(
    steps: &[ApplicationSetRolloutStep],
    applications: &[Application],
) -> (StepMap, ValidationIssues) {
    let mut map = StepMap {
        steps: vec![Vec::new(); steps.len()],
        step_of: BTreeMap::new(),
    };
    let mut issues = ValidationIssues::default();
    for app in applications {
        let name = app.name().to_string();
        for (i, step) in steps.iter().enumerate() {
            if !selects(app, i, step, &mut issues) {
                continue;
            }
            map.steps[i].push(name.clone());
            match map.step_of.get(&name) {
                Some(first) => {
                    let first = *first;
                    issues
                        .duplicates
                        .entry(name.clone())
                        .or_insert_with(|| vec![first])
                        .push(i);
                }
                None => {
                    map.step_of.insert(name.clone(), i);
                }
            }
        }
    }
    issues.empty_steps = (0..steps.len())
        .filter(|i| map.steps[*i].is_empty())
        .collect();
    (map, issues)
}

/// Whether `step` selects `app`: every expression must hold. Quirk kept from Argo: an
/// expression whose key the Application lacks only rejects it for `In`, whatever the operator.
fn selects(
    app: &Application,
    index: usize,
    step: &ApplicationSetRolloutStep,
    issues: &mut ValidationIssues,
) -> bool {
    for expr in step.match_expressions.iter().flatten() {
        let key = expr.key.as_deref().unwrap_or_default();
        let operator = expr.operator.as_deref().unwrap_or_default();
        match app.metadata.label(key) {
            Some(value) => match matches(value, expr) {
                Ok(true) => {}
                Ok(false) => return false,
                Err(()) => {
                    let seen = issues
                        .invalid_operators
                        .iter()
                        .any(|(s, o)| *s == index && o == operator);
                    if !seen {
                        issues.invalid_operators.push((index, operator.to_string()));
                    }
                    return false;
                }
            },
            None if operator == "In" => return false,
            None => {}
        }
    }
    true
}

/// `In`: the value is one of `values`; `NotIn`: it is none of them; anything else is an error.
fn matches(value: &str, expr: &ApplicationMatchExpression) -> Result<bool, ()> {
    let listed = expr.values.iter().flatten().any(|v| v == value);
    match expr.operator.as_deref() {
        Some("In") => Ok(listed),
        Some("NotIn") => Ok(!listed),
        _ => Err(()),
    }
}
