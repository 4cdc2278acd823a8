//! Lua health scripts, run the way Argo CD runs them (`util/lua/lua.go`), with hard limits.
//!
//! A script sees the object as the global `obj` (JSON `null` is `nil`) and returns a table with
//! `status` and `message`. It runs on LuaJIT in interpreter mode (Lua 5.1 semantics, `goto`
//! allowed, as gopher-lua allows it) so the instruction hook always fires. Each evaluation gets a
//! fresh global table over read-only libraries, so interpreter state is reused between
//! evaluations without one script seeing another's globals. Lookup of which script applies to an
//! object lives in [`scripts`], the per-thread interpreters and compiled chunks in [`cache`].

mod budget;
mod builtin;
mod cache;
mod convert;
mod limits;
mod patterns;
mod sandbox;
mod script;
pub(crate) mod scripts;
mod strings;
mod to_json;

pub(crate) use cache::run_script;
pub use limits::LuaLimits;
pub use script::LuaScript;
pub(crate) use to_json::lua_to_json;
