//! Per-thread interpreters: one for scripts with the safe libraries and one for open libraries,
//! each keeping its compiled chunks. An interpreter that hit a limit is dropped and rebuilt,
//! since a script stopped half-way may have left it in any state.

use std::cell::RefCell;

use serde_json::Value;

use super::sandbox::Vm;
use super::{LuaLimits, LuaScript};
use crate::status::{HealthCode, HealthStatus};

thread_local! {
    static POOL: RefCell<[Option<Vm>; 2]> = const { RefCell::new([None, None]) };
}

pub(super) fn evaluate(
    script: &LuaScript,
    obj: &Value,
    limits: &LuaLimits,
) -> Option<HealthStatus> {
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
