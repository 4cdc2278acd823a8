-- Gatekeeper ConstraintTemplate: status.created once the constraint CRD exists, and status.byPod,
-- one entry per Gatekeeper pod with the generation it loaded and any errors (a Rego that does not
-- compile, say).
local s = obj.status
if s ~= nil and s.byPod ~= nil then
  for _, pod in ipairs(s.byPod) do
    if pod.errors ~= nil and #pod.errors > 0 then
      local e = pod.errors[1]
      return {status = "Degraded", message = (pod.id or "gatekeeper") .. ": " .. (e.code or "error") .. ": " .. (e.message or "")}
    end
  end
end
if s == nil or s.created ~= true then
  return {status = "Progressing", message = "Waiting for Gatekeeper to create the constraint CRD"}
end
local generation = obj.metadata.generation
if s.byPod ~= nil and generation ~= nil then
  for _, pod in ipairs(s.byPod) do
    if pod.observedGeneration ~= nil and pod.observedGeneration < generation then
      return {status = "Progressing", message = "Waiting for " .. (pod.id or "a Gatekeeper pod") .. " to load generation " .. generation}
    end
  end
end
return {status = "Healthy", message = "Constraint CRD created"}
