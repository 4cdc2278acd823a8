//! Objects into Lua (JSON `null` becomes `nil`, as gopher-lua gives Argo's scripts) and a
//! script's return value back into a health status, with Argo's rules for odd results.

use mlua::serde::SerializeOptions;
use mlua::{Lua, LuaSerdeExt, Value as LuaValue};
use serde_json::Value;

use crate::status::{HealthCode, HealthStatus};

/// Message Argo gives when a script returns a status that is not one of the six codes.
const INVALID_STATUS: &str = "Lua returned an invalid health status";

/// Converts the object; `null` fields are absent, arrays carry no marker metatable.
pub(super) fn object_to_lua(lua: &Lua, obj: &Value) -> mlua::Result<LuaValue> {
    let options = SerializeOptions::new()
        .serialize_none_to_null(false)
        .serialize_unit_to_null(false)
        .set_array_metatable(false);
    lua.to_value_with(obj, options)
}

/// What a script's last return value means (`util/lua/lua.go: ExecuteHealthLua`):
/// a table with a valid `status` is that status; `nil` or an empty table is no health; a table
/// with any other status is `Unknown` / invalid status; anything else is an error.
pub(super) fn result_to_health(value: LuaValue) -> Result<Option<HealthStatus>, String> {
    let table = match value {
        LuaValue::Nil => return Ok(None),
        LuaValue::Table(t) => t,
        other => {
            // Lua 5.1 names: integers are numbers, light userdata is userdata.
            let type_name = match other {
                LuaValue::Integer(_) | LuaValue::Number(_) => "number",
                LuaValue::LightUserData(_) | LuaValue::UserData(_) => "userdata",
                ref v => v.type_name(),
            };
            return Err(format!(
                "expect table output from Lua script, not {type_name}"
            ));
        }
    };
    let status: LuaValue = table.raw_get("status").map_err(|e| e.to_string())?;
    let message: LuaValue = table.raw_get("message").map_err(|e| e.to_string())?;
    if status.is_nil() && message.is_nil() {
        // `{}` (or a list) does not decode into Argo's HealthStatus struct: no health.
        let empty = table.clone().pairs::<LuaValue, LuaValue>().next().is_none();
        if empty || table.raw_len() > 0 {
            return Ok(None);
        }
    }
    let message = match message {
        LuaValue::String(s) => s.to_string_lossy(),
        LuaValue::Integer(i) => i.to_string(),
        LuaValue::Number(n) => lua_number(n),
        _ => String::new(),
    };
    let code = match &status {
        LuaValue::String(s) => s.to_str().ok().and_then(|s| s.parse::<HealthCode>().ok()),
        _ => None,
    };
    Ok(Some(match code {
        Some(code) => HealthStatus::new(code, message),
        None => HealthStatus::new(HealthCode::Unknown, INVALID_STATUS),
    }))
}

/// Lua 5.1's `%.14g` number formatting (`3` for 3.0).
fn lua_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
