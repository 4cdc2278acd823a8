//! Per-thread interpreters: one for scripts with the safe libraries and one for open libraries,
//! each keeping its compiled chunks. An interpreter that hit a limit is dropped and rebuilt,
//! since a script stopped half-way may have left it in any state.

use std::cell::RefCell;

use serde_json::Value;

use super::limits::LuaLimits;
use super::sandbox::Vm;
use super::script::LuaScript;
use crate::status::{HealthCode, HealthStatus};

thread_local! {
    static POOL: RefCell<[Option<Vm>; 2]> = const { RefCell::new([None, None]) };
}

fn evaluate_pooled(script: &LuaScript, obj: &Value, limits: &LuaLimits) -> Option<HealthStatus> {
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let slot = &mut pool[usize::from(script.open_libs())];
        if slot.is_none() {
            match Vm::new(script.open_libs()) {
                Ok(vm) => *slot = Some(vm),
                Err(err) => {
                    return Some(HealthStatus::new(
                        HealthCode::Unknown,
                        format!("cannot start the Lua interpreter: {err}"),
                    ));
                }
            }
        }
        let vm = slot.as_mut()?;
        debug_assert_eq!(vm.open_libs(), script.open_libs());
        let run = vm.run(script, obj, limits);
        if run.poisoned {
            tracing::warn!(
                origin = script.origin(),
                "Lua health script hit a limit; interpreter rebuilt"
            );
            *slot = None;
        }
        run.health
    })
}

impl LuaScript {
    /// Runs the script on one object. `None` means the script returned `nil` or `{}` (no health);
    /// errors and limits give `Unknown` with a message, as in Argo.
    pub fn evaluate(&self, obj: &Value, limits: &LuaLimits) -> Option<HealthStatus> {
        evaluate_pooled(self, obj, limits)
    }
}

/// Runs a script that is not a health script (resource actions) on this thread's interpreter for
/// its libraries, with the same limits; `read` converts the last return value. An interpreter
/// that hit a limit is rebuilt, as after a health script.
pub(crate) fn run_script<T>(
    script: &LuaScript,
    globals: &[(&str, &Value)],
    limits: &LuaLimits,
    read: impl FnOnce(mlua::Value) -> Result<T, String>,
) -> Result<T, String> {
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let slot = &mut pool[usize::from(script.open_libs())];
        if slot.is_none() {
            *slot = Some(
                Vm::new(script.open_libs())
                    .map_err(|err| format!("cannot start the Lua interpreter: {err}"))?,
            );
        }
        let Some(vm) = slot.as_mut() else {
            return Err("cannot start the Lua interpreter".to_string());
        };
        let (result, poisoned) = vm.run_with(script, globals, limits, read);
        if poisoned {
            tracing::warn!(
                origin = script.origin(),
                "Lua script hit a limit; interpreter rebuilt"
            );
            *slot = None;
        }
        result
    })
}
