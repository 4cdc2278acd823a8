-- Knative Serving Service: status.observedGeneration and the Ready condition, which rolls up
-- ConfigurationsReady (the latest revision) and RoutesReady (traffic).
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
local generation = obj.metadata.generation
local observed = obj.status ~= nil and obj.status.observedGeneration or nil
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = "Waiting for Knative to observe generation " .. generation .. " (observed " .. observed .. ")"}
end
local ready = condition("Ready")
if ready == nil then
  return {status = "Progressing", message = "Waiting for Knative to reconcile the Service"}
end
if ready.status == "True" then
  local url = obj.status.url
  if url ~= nil then
    return {status = "Healthy", message = "Ready at " .. url}
  end
  return {status = "Healthy", message = "Ready"}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
return {status = "Progressing", message = text(ready)}
