//! The Lua contract and sandbox: libraries, null handling, number formatting, limits, errors.

use std::time::{Duration, Instant};

use plumb_health::{HealthCode, HealthStatus, LuaLimits, LuaScript};
use serde_json::json;

use crate::support::fixture;

fn run(source: &str) -> Option<HealthStatus> {
    run_with(source, false, &LuaLimits::default())
}

fn run_with(source: &str, open_libs: bool, limits: &LuaLimits) -> Option<HealthStatus> {
    let obj = fixture("database-generation-behind.yaml");
    LuaScript::new(source, open_libs, "test").evaluate(&obj, limits)
}

fn status(code: HealthCode, message: &str) -> Option<HealthStatus> {
    Some(HealthStatus::new(code, message))
}

#[test]
fn returns_status_and_message_from_obj() {
    let got = run(r#"
        hs = {}
        hs.status = "Progressing"
        hs.message = "generation " .. obj.metadata.generation .. " of " .. obj.metadata.name
        return hs"#);
    assert_eq!(
        got,
        status(HealthCode::Progressing, "generation 5 of orders")
    );
}

#[test]
fn lua_51_number_formatting() {
    let got = run(
        r#"return {status = "Healthy", message = tostring(6/2) .. " " .. string.format("%d of %d", 1, 3) .. " " .. tostring(0.5) .. " " .. obj.status.observedGeneration}"#,
    );
    assert_eq!(got, status(HealthCode::Healthy, "3 1 of 3 0.5 4"));
}

#[test]
fn json_null_is_nil() {
    let obj = json!({"apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a"}, "status": null, "spec": {"replicas": null}});
    let script = LuaScript::new(
        r#"if obj.status == nil and obj.spec.replicas == nil then return {status="Healthy", message="nil"} end
           return {status="Degraded", message=type(obj.status)}"#,
        false,
        "test",
    );
    assert_eq!(
        script.evaluate(&obj, &LuaLimits::default()),
        status(HealthCode::Healthy, "nil")
    );
}

#[test]
fn goto_continue_works() {
    let got = run(r#"
        local n = 0
        for _, c in ipairs(obj.status.conditions) do
          if c.type ~= "Ready" then goto continue end
          n = n + 1
          ::continue::
        end
        return {status = "Healthy", message = "ready conditions: " .. n}"#);
    assert_eq!(got, status(HealthCode::Healthy, "ready conditions: 1"));
}

#[test]
fn invalid_status_nil_and_empty_results() {
    assert_eq!(
        run(r#"return {status = "Fine"}"#),
        status(HealthCode::Unknown, "Lua returned an invalid health status")
    );
    assert_eq!(
        run(r#"return {message = "no status"}"#),
        status(HealthCode::Unknown, "Lua returned an invalid health status")
    );
    assert_eq!(run("return nil"), None);
    assert_eq!(run("return {}"), None);
    assert_eq!(
        run("return 42"),
        status(
            HealthCode::Unknown,
            "expect table output from Lua script, not number"
        )
    );
}

#[test]
fn script_errors_are_unknown_without_stack_traces() {
    let got = run("local x = nil\nreturn {status = x.field}").unwrap();
    assert_eq!(got.code, HealthCode::Unknown);
    assert!(
        got.message.starts_with("<string>:2: attempt to index"),
        "{}",
        got.message
    );
    assert!(!got.message.contains("stack traceback"), "{}", got.message);

    let got = run(r#"error("database operator not installed")"#).unwrap();
    assert_eq!(
        got,
        HealthStatus::new(
            HealthCode::Unknown,
            "<string>:1: database operator not installed"
        )
    );

    let got = run("return {status = ").unwrap();
    assert_eq!(got.code, HealthCode::Unknown);
    assert!(got.message.contains("<string>:1:"), "{}", got.message);
}

#[test]
fn endless_loop_hits_the_time_limit() {
    let limits = LuaLimits::default()
        .wall_time(Duration::from_millis(200))
        .instructions(u64::MAX);
    let start = Instant::now();
    let got = run_with("while true do end", false, &limits).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(
        got,
        HealthStatus::new(
            HealthCode::Unknown,
            "Lua health script stopped: it ran longer than its time limit of 200ms"
        )
    );
}

#[test]
fn endless_loop_hits_the_instruction_budget() {
    let limits = LuaLimits::default().instructions(1_000_000);
    let got = run_with("local i = 0 while true do i = i + 1 end", false, &limits).unwrap();
    assert_eq!(
        got,
        HealthStatus::new(
            HealthCode::Unknown,
            "Lua health script stopped: it exceeded its budget of 1000000 instructions"
        )
    );
}

#[test]
fn pcall_cannot_swallow_a_limit() {
    let limits = LuaLimits::default().instructions(1_000_000);
    let got = run_with(
        "while true do pcall(function() while true do end end) end",
        false,
        &limits,
    )
    .unwrap();
    assert_eq!(
        got.message,
        "Lua health script stopped: it exceeded its budget of 1000000 instructions"
    );
    // pcall still works for ordinary errors.
    let got = run(
        r#"local ok, err = pcall(error, "x", 0) return {status = "Healthy", message = tostring(ok) .. " " .. err}"#,
    );
    assert_eq!(got, status(HealthCode::Healthy, "false x"));
}

#[test]
fn huge_allocation_hits_the_memory_limit() {
    // A far wall-clock limit: on a loaded machine the default 1 s can fire before the memory
    // limit this test is about (seen at load average 18).
    let limits = LuaLimits::default()
        .memory_bytes(16 * 1024 * 1024)
        .wall_time(Duration::from_secs(300));
    let got = run_with(
        r#"local t = {} for i = 1, 100000000 do t[i] = string.rep("x", 64) .. i end return {status = "Healthy"}"#,
        false,
        &limits,
    )
    .unwrap();
    assert_eq!(
        got,
        HealthStatus::new(
            HealthCode::Unknown,
            "Lua health script stopped: it exceeded its memory limit of 16 MiB"
        )
    );
    let got = run_with(
        r#"local s = string.rep("x", 1024 * 1024 * 1024) return {status = "Healthy"}"#,
        false,
        &limits,
    )
    .unwrap();
    assert_eq!(
        got.message,
        "Lua health script stopped: it exceeded its memory limit of 16 MiB"
    );
    // The interpreter is usable afterwards.
    assert_eq!(
        run(r#"return {status = "Healthy"}"#),
        status(HealthCode::Healthy, "")
    );
}

#[test]
fn safe_libraries_only_without_open_libs() {
    let probe = r#"return {status = "Healthy", message = type(io) .. " " .. type(os.execute) .. " " .. type(os.time) .. " " .. type(os.date) .. " " .. type(require) .. " " .. type(loadstring) .. " " .. type(debug) .. " " .. type(string.format) .. " " .. type(table.insert) .. " " .. type(math.floor)}"#;
    assert_eq!(
        run(probe),
        status(
            HealthCode::Healthy,
            "nil nil function function nil nil nil function function function"
        )
    );
    let got = run(r#"os.execute("touch /tmp/plumb-should-not-exist") return {status = "Healthy"}"#)
        .unwrap();
    assert_eq!(got.code, HealthCode::Unknown);
    assert!(
        got.message.contains("attempt to call field 'execute'"),
        "{}",
        got.message
    );
}

#[test]
fn open_libs_expose_io_and_os_but_not_debug() {
    let probe = r#"return {status = "Healthy", message = type(io.open) .. " " .. type(os.execute) .. " " .. type(os.getenv) .. " " .. type(debug) .. " " .. type(jit)}"#;
    assert_eq!(
        run_with(probe, true, &LuaLimits::default()),
        status(HealthCode::Healthy, "function function function nil nil")
    );
}

#[test]
fn globals_and_libraries_do_not_leak_between_evaluations() {
    assert_eq!(
        run(r#"leaked = "yes" return {status = "Healthy"}"#),
        status(HealthCode::Healthy, "")
    );
    assert_eq!(
        run(r#"return {status = "Healthy", message = tostring(leaked)}"#),
        status(HealthCode::Healthy, "nil")
    );
    let got = run(r#"string.upper = nil return {status = "Healthy"}"#).unwrap();
    assert_eq!(got.code, HealthCode::Unknown);
    assert!(got.message.contains("read-only"), "{}", got.message);
    assert_eq!(
        run(r#"return {status = "Healthy", message = ("ok"):upper()}"#),
        status(HealthCode::Healthy, "OK")
    );
}

#[test]
fn os_date_and_time_work() {
    let got = run(
        r#"return {status = "Healthy", message = os.date("!%Y", 0) .. " " .. tostring(os.time() > 1700000000)}"#,
    );
    assert_eq!(got, status(HealthCode::Healthy, "1970 true"));
}

#[test]
fn cached_script_gives_the_same_answer_across_objects() {
    let script = LuaScript::new(
        r#"return {status = "Healthy", message = obj.metadata.name}"#,
        false,
        "test",
    );
    for name in ["a", "b", "c"] {
        let obj = json!({"metadata": {"name": name}});
        assert_eq!(
            script.evaluate(&obj, &LuaLimits::default()),
            status(HealthCode::Healthy, name)
        );
    }
}

#[test]
fn one_assessor_evaluates_scripts_on_many_threads() {
    let script = LuaScript::new(
        r#"return {status = "Healthy", message = obj.metadata.name .. " " .. tostring(obj.spec.replicas * 2)}"#,
        false,
        "test",
    );
    std::thread::scope(|scope| {
        for t in 0..4 {
            let script = &script;
            scope.spawn(move || {
                for i in 0..200 {
                    let obj =
                        json!({"metadata": {"name": format!("t{t}")}, "spec": {"replicas": i}});
                    let got = script.evaluate(&obj, &LuaLimits::default());
                    assert_eq!(got, status(HealthCode::Healthy, &format!("t{t} {}", i * 2)));
                }
            });
        }
    });
}

#[test]
fn backtracking_pattern_hits_the_limits() {
    // The C string.find would backtrack for hours here, out of the hook's reach.
    let script = r#"local s = string.rep("a", 5000)
        local i = s:find(string.rep("a*", 12) .. "b")
        return {status = "Healthy", message = tostring(i)}"#;
    let limits = LuaLimits::default()
        .instructions(5_000_000)
        .wall_time(std::time::Duration::from_secs(60));
    let got = run_with(script, false, &limits).unwrap();
    assert_eq!(got.code, HealthCode::Unknown);
    assert!(got.message.contains("instructions"), "{got:?}");
    let limits = LuaLimits::default()
        .instructions(u64::MAX)
        .wall_time(std::time::Duration::from_millis(200));
    let got = run_with(script, false, &limits).unwrap();
    assert!(got.message.contains("time limit"), "{got:?}");
    // pcall does not swallow it.
    let got = run_with(
        &script.replace("s:find(", "pcall(string.find, s, "),
        false,
        &limits,
    )
    .unwrap();
    assert_eq!(got.code, HealthCode::Unknown, "{got:?}");
}

#[test]
fn pattern_functions_keep_lua_semantics() {
    let got = run(r#"
        local out = {}
        local a, b, x, y = string.find("replicas 3/5", "(%d+)/(%d+)")
        out[#out + 1] = a .. "," .. b .. "," .. x .. "," .. y
        out[#out + 1] = tostring(("Progressing"):match("^Prog"))
        out[#out + 1] = tostring(string.find("a.b", ".", 1, true))
        for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do out[#out + 1] = k .. v end
        out[#out + 1] = (string.gsub("hello world", "o", "0"))
        out[#out + 1] = (string.gsub("hello world", "(%w+)", "<%1>"))
        out[#out + 1] = (string.gsub("$name is $age", "%$(%w+)", {name = "ann", age = 3}))
        out[#out + 1] = (string.gsub("abc", "%w", function(c) return c:upper() end, 2))
        local ok, err = pcall(string.find, "x", "[a")
        out[#out + 1] = tostring(ok) .. ":" .. err
        return {status = "Healthy", message = table.concat(out, "|")}"#);
    assert_eq!(
        got,
        status(
            HealthCode::Healthy,
            "10,12,3,5|Prog|2|a1|b2|hell0 w0rld|<hello> <world>|ann is 3|ABc|false:malformed pattern (missing ']')"
        )
    );
}

#[test]
fn gsub_output_counts_against_the_memory_limit() {
    // A far wall-clock limit: on a loaded machine the default 1 s can fire before the memory
    // limit this test is about (seen at load average 18).
    let limits = LuaLimits::default()
        .memory_bytes(16 * 1024 * 1024)
        .wall_time(Duration::from_secs(300));
    let got = run_with(
        r#"local s = string.rep("x", 64 * 1024) local t = s:gsub("", string.rep("y", 512)) return {status = "Healthy"}"#,
        false,
        &limits,
    )
    .unwrap();
    assert_eq!(
        got.message,
        "Lua health script stopped: it exceeded its memory limit of 16 MiB"
    );
}
