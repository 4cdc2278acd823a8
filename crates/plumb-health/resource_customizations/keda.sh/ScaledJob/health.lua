-- KEDA ScaledObject / ScaledJob: conditions Ready (the scale target and triggers are valid),
-- Active (a trigger is firing), Fallback (scalers fail and fallback replicas are used) and Paused
-- (the autoscaling.keda.sh/paused annotations).
local function condition(t)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == t then return c end
    end
  end
  return nil
end
local function text(c)
  if c.message ~= nil and c.message ~= "" then return c.message end
  return c.reason or ""
end
local paused = condition("Paused")
if paused ~= nil and paused.status == "True" then
  return {status = "Suspended", message = text(paused)}
end
local ready = condition("Ready")
if ready == nil then
  return {status = "Progressing", message = "Waiting for KEDA to check the " .. obj.kind}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
if ready.status ~= "True" then
  return {status = "Progressing", message = text(ready)}
end
local fallback = condition("Fallback")
if fallback ~= nil and fallback.status == "True" then
  return {status = "Degraded", message = text(fallback)}
end
local active = condition("Active")
local activity = "no trigger is active"
if active ~= nil and active.status == "True" then activity = "a trigger is active" end
return {status = "Healthy", message = text(ready) .. " (" .. activity .. ")"}
