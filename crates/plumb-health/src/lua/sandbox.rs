//! One LuaJIT interpreter set up like Argo's (libraries, safe `os`) with Plumb's limits.
//!
//! Limits: an instruction hook every [`HOOK_STEP`] instructions counts the budget and checks the
//! wall clock; the JIT is switched off because hooks do not fire inside compiled traces. The
//! memory cap is the interpreter's allocator limit. Scripts can catch errors with `pcall`, so
//! `pcall` and `xpcall` are wrapped to re-raise once a limit has been hit.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::chunk::ChunkMode;
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, VmState};
use serde_json::Value;

use super::budget::{Budget, HOOK_STEP, LimitHit};
use super::limits::LuaLimits;
use super::script::LuaScript;
use super::{convert, strings};
use crate::status::{HealthCode, HealthStatus};

/// Compiled chunks kept per interpreter (Argo keeps 1,024).
const MAX_CHUNKS: usize = 1_024;
/// Chunk name, so errors read `<string>:3: ...` as they do from gopher-lua.
const CHUNK_NAME: &str = "=<string>";

/// Base functions every script gets. Left out on purpose: `load`, `loadstring`, `loadfile`,
/// `dofile` (code from outside the script), `getfenv`/`setfenv` (reach the shared globals),
/// `require`/`module` (files), `collectgarbage`.
const SAFE_BASE: [&str; 17] = [
    "assert",
    "error",
    "ipairs",
    "next",
    "pairs",
    "print",
    "rawequal",
    "rawget",
    "rawset",
    "select",
    "setmetatable",
    "getmetatable",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "_VERSION",
];
/// Libraries every script gets (os is narrowed to `time` and `date` unless open libs are on).
const SAFE_LIBS: [&str; 3] = ["string", "table", "math"];
/// Extra libraries with `useOpenLibs` (never `debug`, which could remove the limits, nor `ffi`).
const OPEN_LIBS: [&str; 6] = ["io", "os", "coroutine", "package", "bit", "require"];
const OPEN_BASE: [&str; 6] = [
    "load",
    "loadstring",
    "loadfile",
    "dofile",
    "collectgarbage",
    "module",
];

/// One interpreter with its compiled chunks.
pub(super) struct Vm {
    lua: Lua,
    env_meta: Table,
    budget: Rc<Budget>,
    chunks: HashMap<u64, (LuaScript, Function)>,
    open_libs: bool,
    memory_control: bool,
    safe_require: Function,
}

/// What one run produced, and whether the interpreter should be thrown away afterwards.
pub(super) struct Run {
    pub(super) health: Option<HealthStatus>,
    pub(super) poisoned: bool,
}

impl Vm {
    pub(super) fn new(open_libs: bool) -> mlua::Result<Vm> {
        let lua = interpreter()?;
        let globals = lua.globals();
        let budget = unlimited_budget();
        let base = safe_base(&lua, &globals, &budget)?;
        if open_libs {
            add_open_libs(&lua, &globals, &base)?;
        } else {
            add_safe_os(&lua, &globals, &base)?;
        }
        // Argo preloads its safe os so that `local os = require("os")` works (Argo's own action
        // scripts start that way): action scripts get a `require` handing out the libraries
        // already given. Health scripts keep none.
        let safe_require: Function = lua
            .load(SAFE_REQUIRE)
            .set_name("=plumb-require")
            .call(&base)?;
        wrap_pcall(&lua, &globals, &base, &budget)?;
        hide_string_metatable(&lua, &base)?;
        let env_meta = lua.create_table()?;
        env_meta.raw_set("__index", base)?;
        set_instruction_hook(&lua, &budget)?;
        let memory_control = lua.set_memory_limit(0).is_ok();
        Ok(Vm {
            lua,
            env_meta,
            budget,
            chunks: HashMap::new(),
            open_libs,
            memory_control,
            safe_require,
        })
    }

    pub(super) fn open_libs(&self) -> bool {
        self.open_libs
    }

    /// Compiles the script once; later calls with the same text reuse the chunk.
    fn chunk(&mut self, script: &LuaScript) -> mlua::Result<Function> {
        if let Some((cached, f)) = self.chunks.get(&script.hash)
            && (std::sync::Arc::ptr_eq(&cached.source, &script.source)
                || cached.source == script.source)
        {
            return Ok(f.clone());
        }
        if self.chunks.len() >= MAX_CHUNKS {
            self.chunks.clear();
        }
        let f = self
            .lua
            .load(script.source())
            .set_name(CHUNK_NAME)
            .set_mode(ChunkMode::Text)
            .into_function()?;
        self.chunks.insert(script.hash, (script.clone(), f.clone()));
        Ok(f)
    }

    pub(super) fn run(&mut self, script: &LuaScript, obj: &Value, limits: &LuaLimits) -> Run {
        match self.try_run(script, obj, limits) {
            Ok(health) => Run {
                health,
                poisoned: false,
            },
            Err(err) => {
                let memory = matches!(err, mlua::Error::MemoryError(_))
                    .then_some(LimitHit::Memory(limits.memory_bytes));
                let hit = self.budget.hit.get().or(memory);
                let message = match hit {
                    Some(hit) => hit.message(),
                    None => error_message(&err),
                };
                Run {
                    health: Some(HealthStatus::new(HealthCode::Unknown, message)),
                    poisoned: hit.is_some(),
                }
            }
        }
    }

    fn try_run(
        &mut self,
        script: &LuaScript,
        obj: &Value,
        limits: &LuaLimits,
    ) -> mlua::Result<Option<HealthStatus>> {
        let last = self.call(script, &[("obj", obj)], false, limits)?;
        convert::result_to_health(last).map_err(mlua::Error::runtime)
    }

    /// Runs a script with `globals` set (each JSON value converted as `obj` is) and hands its last
    /// return value to `read` while the interpreter still holds it; used by resource actions.
    /// A limit hit poisons the interpreter as for health scripts.
    pub(super) fn run_with<T>(
        &mut self,
        script: &LuaScript,
        globals: &[(&str, &Value)],
        limits: &LuaLimits,
        read: impl FnOnce(mlua::Value) -> Result<T, String>,
    ) -> (Result<T, String>, bool) {
        match self.call(script, globals, true, limits) {
            Ok(value) => (read(value), false),
            Err(err) => {
                let memory = matches!(err, mlua::Error::MemoryError(_))
                    .then_some(LimitHit::Memory(limits.memory_bytes));
                let hit = self.budget.hit.get().or(memory);
                let message = match hit {
                    Some(hit) => hit.message().replace("health script", "action script"),
                    None => error_message(&err),
                };
                (Err(message), hit.is_some())
            }
        }
    }

    fn call(
        &mut self,
        script: &LuaScript,
        globals: &[(&str, &Value)],
        with_require: bool,
        limits: &LuaLimits,
    ) -> mlua::Result<mlua::Value> {
        let f = self.chunk(script)?;
        let env = self.lua.create_table_with_capacity(0, 4)?;
        env.set_metatable(Some(self.env_meta.clone()))?;
        for (name, value) in globals {
            env.raw_set(*name, convert::object_to_lua(&self.lua, value)?)?;
        }
        if with_require && !self.open_libs {
            env.raw_set("require", &self.safe_require)?;
        }
        env.raw_set("_G", &env)?;
        f.set_environment(env)?;
        if self.memory_control {
            self.lua
                .set_memory_limit(self.lua.used_memory() + limits.memory_bytes)?;
        }
        self.budget.arm(limits);
        let result = f.call::<MultiValue>(());
        // Nothing else runs until the next arm; a spent budget must not leak into setup code.
        self.budget.left.set(u64::MAX);
        self.budget
            .deadline
            .set(Instant::now() + Duration::from_secs(3600));
        if self.memory_control {
            self.lua.set_memory_limit(0)?;
        }
        if let Some(hit) = self.budget.hit.get() {
            return Err(mlua::Error::runtime(hit.message()));
        }
        Ok(result?.into_iter().last().unwrap_or(mlua::Value::Nil))
    }
}

/// A LuaJIT interpreter with the safe standard libraries and the JIT off (hooks do not fire
/// inside compiled traces).
fn interpreter() -> mlua::Result<Lua> {
    let libs = StdLib::ALL_SAFE;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    lua.load("jit.off() jit.flush()")
        .set_name("=plumb-setup")
        .exec()?;
    Ok(lua)
}

/// A budget with no limits; each run sets its own before the script starts.
fn unlimited_budget() -> Rc<Budget> {
    Rc::new(Budget {
        deadline: Cell::new(Instant::now()),
        memory_bytes: Cell::new(usize::MAX),
        wall_time: Cell::new(Duration::ZERO),
        budget: Cell::new(u64::MAX),
        left: Cell::new(u64::MAX),
        hit: Cell::new(None),
    })
}

/// The table scripts read globals from: [`SAFE_BASE`] functions and read-only [`SAFE_LIBS`].
fn safe_base(lua: &Lua, globals: &Table, budget: &Rc<Budget>) -> mlua::Result<Table> {
    let base = lua.create_table()?;
    for name in SAFE_BASE {
        base.raw_set(name, globals.raw_get::<mlua::Value>(name)?)?;
    }
    for name in SAFE_LIBS {
        let lib: Table = globals.raw_get(name)?;
        let lib = if name == "string" {
            // The C pattern functions run outside the hook's reach: bounded ones instead.
            strings::bounded_string_lib(lua, &lib, budget)?
        } else {
            lib
        };
        base.raw_set(name, read_only(lua, lib)?)?;
    }
    Ok(base)
}

/// `useOpenLibs`: [`OPEN_LIBS`] (read-only) and [`OPEN_BASE`] added to the base.
fn add_open_libs(lua: &Lua, globals: &Table, base: &Table) -> mlua::Result<()> {
    for name in OPEN_LIBS.iter().chain(OPEN_BASE.iter()) {
        let value: mlua::Value = globals.raw_get(*name)?;
        let value = match value {
            mlua::Value::Table(t) => mlua::Value::Table(read_only(lua, t)?),
            other => other,
        };
        base.raw_set(*name, value)?;
    }
    Ok(())
}

/// Argo's safe os (util/lua/oslib_safe.go): time and date only.
fn add_safe_os(lua: &Lua, globals: &Table, base: &Table) -> mlua::Result<()> {
    let os: Table = globals.raw_get("os")?;
    let safe_os = lua.create_table()?;
    safe_os.raw_set("time", os.raw_get::<mlua::Value>("time")?)?;
    safe_os.raw_set("date", os.raw_get::<mlua::Value>("date")?)?;
    base.raw_set("os", read_only(lua, safe_os)?)?;
    Ok(())
}

/// Scripts can catch errors, so `pcall` and `xpcall` re-raise once a limit has been hit.
fn wrap_pcall(lua: &Lua, globals: &Table, base: &Table, budget: &Rc<Budget>) -> mlua::Result<()> {
    let limit_hit = {
        let budget = Rc::clone(budget);
        lua.create_function(move |_, ()| Ok(budget.hit.get().is_some()))?
    };
    let wrappers: MultiValue = lua.load(PCALL_WRAPPERS).set_name("=plumb-pcall").call((
        globals.raw_get::<Function>("pcall")?,
        globals.raw_get::<Function>("xpcall")?,
        limit_hit,
    ))?;
    let mut wrappers = wrappers.into_iter();
    base.raw_set("pcall", wrappers.next().unwrap_or(mlua::Value::Nil))?;
    base.raw_set("xpcall", wrappers.next().unwrap_or(mlua::Value::Nil))?;
    Ok(())
}

/// Method calls on strings (`s:format()`) go through the shared string metatable: point it at
/// the read-only view and hide it from `getmetatable`.
fn hide_string_metatable(lua: &Lua, base: &Table) -> mlua::Result<()> {
    lua.load("local mt, lib = getmetatable(''), ...; mt.__index = lib; mt.__metatable = false")
        .set_name("=plumb-setup")
        .call::<()>(base.raw_get::<Table>("string")?)
}

/// Every [`HOOK_STEP`] instructions, counts the budget and stops the script past a limit.
fn set_instruction_hook(lua: &Lua, budget: &Rc<Budget>) -> mlua::Result<()> {
    let budget = Rc::clone(budget);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_STEP),
        move |_, _| match budget.tick() {
            Some(hit) => Err(mlua::Error::runtime(hit.message())),
            None => Ok(VmState::Continue),
        },
    )
}

/// `pcall`/`xpcall` that hand back control normally but re-raise once a limit has been hit, so
/// `while true do pcall(f) end` cannot swallow the stop.
const PCALL_WRAPPERS: &str = r#"
local rawpcall, rawxpcall, limit_hit = ...
local error = error
local function pass(...)
  if limit_hit() then error("evaluation limit reached", 0) end
  return ...
end
return function(f, ...) return pass(rawpcall(f, ...)) end,
       function(f, handler, ...) return pass(rawxpcall(f, handler, ...)) end
"#;

/// `require` of the safe interpreter: only the libraries every script already has.
const SAFE_REQUIRE: &str = r#"
local base = ...
local error, tostring = error, tostring
return function(name)
  local lib = nil
  if name == "os" or name == "string" or name == "table" or name == "math" then lib = base[name] end
  if lib == nil then error("module '" .. tostring(name) .. "' not found", 2) end
  return lib
end
"#;

/// A read-only view of a library table, so one script cannot change `string` for the next.
fn read_only(lua: &Lua, lib: Table) -> mlua::Result<Table> {
    let proxy = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", lib)?;
    meta.raw_set(
        "__newindex",
        lua.create_function(
            |_, (_t, key, _v): (mlua::Value, mlua::Value, mlua::Value)| {
                Err::<(), _>(mlua::Error::runtime(format!(
                    "attempt to modify read-only library table (key {})",
                    key.to_string().unwrap_or_default()
                )))
            },
        )?,
    )?;
    meta.raw_set("__metatable", false)?;
    proxy.set_metatable(Some(meta))?;
    Ok(proxy)
}

/// The error text Argo would show: the Lua message without the stack traceback.
fn error_message(err: &mlua::Error) -> String {
    let text = match err {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::CallbackError { cause, .. } => return error_message(cause),
        mlua::Error::WithContext { cause, .. } => return error_message(cause),
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
