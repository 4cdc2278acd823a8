-- Argo Rollouts Rollout: status.observedGeneration (a string), spec.paused, status.pauseConditions
-- (a canary pause step or an inconclusive analysis), status.abort, the InvalidSpec condition and
-- status.phase / status.message (Healthy, Progressing, Paused, Degraded), which the controller
-- computes since v1.0.
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
local s = obj.status
if s == nil then
  return {status = "Progressing", message = "Waiting for the rollout controller to report status"}
end
local generation = obj.metadata.generation
if s.observedGeneration ~= nil and generation ~= nil and tostring(s.observedGeneration) ~= tostring(generation) then
  return {status = "Progressing", message = "Waiting for the rollout controller to observe generation " .. generation .. " (observed " .. tostring(s.observedGeneration) .. ")"}
end
local invalid = condition("InvalidSpec")
if invalid ~= nil and invalid.status == "True" then
  return {status = "Degraded", message = "Invalid spec: " .. text(invalid)}
end
if s.abort == true then
  return {status = "Degraded", message = "Rollout aborted: " .. (s.message or "")}
end
if obj.spec ~= nil and obj.spec.paused == true then
  return {status = "Suspended", message = "Rollout is paused (spec.paused)"}
end
if s.pauseConditions ~= nil and #s.pauseConditions > 0 then
  local reasons = {}
  for _, p in ipairs(s.pauseConditions) do table.insert(reasons, p.reason) end
  return {status = "Suspended", message = "Rollout is paused: " .. table.concat(reasons, ", ")}
end
local progressing = condition("Progressing")
if progressing ~= nil and progressing.reason == "ProgressDeadlineExceeded" then
  return {status = "Degraded", message = text(progressing)}
end
local message = s.message or ""
if s.phase == "Healthy" then
  return {status = "Healthy", message = message}
end
if s.phase == "Degraded" then
  return {status = "Degraded", message = message}
end
if s.phase == "Paused" then
  return {status = "Suspended", message = message}
end
if message == "" then message = "Waiting for the rollout to finish" end
return {status = "Progressing", message = message}
