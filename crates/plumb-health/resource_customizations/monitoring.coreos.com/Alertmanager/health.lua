-- Prometheus Operator (Prometheus, Alertmanager): spec.paused, and the conditions Reconciled
-- (False when the operator cannot generate the configuration or workload) and Available
-- (True, Degraded when some replicas are unavailable, False when none is), each with its
-- observedGeneration.
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
if obj.spec ~= nil and obj.spec.paused == true then
  return {status = "Suspended", message = "The operator does not reconcile this " .. obj.kind .. " (spec.paused)"}
end
local generation = obj.metadata.generation
local reconciled = condition("Reconciled")
if reconciled ~= nil and reconciled.status == "False" then
  return {status = "Degraded", message = text(reconciled)}
end
local available = condition("Available")
if available == nil then
  return {status = "Progressing", message = "Waiting for the operator to report availability"}
end
if available.observedGeneration ~= nil and generation ~= nil and available.observedGeneration < generation then
  return {status = "Progressing", message = "Waiting for the operator to observe generation " .. generation .. " (Available is for " .. available.observedGeneration .. ")"}
end
if available.status == "True" then
  return {status = "Healthy", message = "All replicas are available"}
end
return {status = "Progressing", message = "Available=" .. available.status .. ": " .. text(available)}
