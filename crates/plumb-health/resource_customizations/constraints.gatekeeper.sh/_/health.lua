-- Gatekeeper constraints (every kind of constraints.gatekeeper.sh): status.byPod, one entry per
-- Gatekeeper pod with enforced, the generation it loaded and errors, and totalViolations from
-- the last audit.
local s = obj.status
local byPod = s ~= nil and s.byPod or nil
if byPod == nil or #byPod == 0 then
  return {status = "Progressing", message = "Waiting for Gatekeeper to load the constraint"}
end
local generation = obj.metadata.generation
for _, pod in ipairs(byPod) do
  if pod.errors ~= nil and #pod.errors > 0 then
    local e = pod.errors[1]
    return {status = "Degraded", message = (pod.id or "gatekeeper") .. ": " .. (e.code or "error") .. ": " .. (e.message or "")}
  end
end
for _, pod in ipairs(byPod) do
  if pod.enforced ~= true then
    return {status = "Progressing", message = "Waiting for " .. (pod.id or "a Gatekeeper pod") .. " to enforce the constraint"}
  end
  if pod.observedGeneration ~= nil and generation ~= nil and pod.observedGeneration < generation then
    return {status = "Progressing", message = "Waiting for " .. (pod.id or "a Gatekeeper pod") .. " to load generation " .. generation}
  end
end
if s.totalViolations ~= nil then
  return {status = "Healthy", message = "Enforced; " .. s.totalViolations .. " violation(s) at the last audit"}
end
return {status = "Healthy", message = "Enforced"}
