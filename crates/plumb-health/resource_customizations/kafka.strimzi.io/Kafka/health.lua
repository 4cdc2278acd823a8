-- Strimzi (Kafka, KafkaTopic, KafkaUser): status.observedGeneration and the conditions Ready,
-- NotReady (reason Creating while deploying, otherwise the exception that stopped reconciliation)
-- and ReconciliationPaused (the strimzi.io/pause-reconciliation annotation).
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
local paused = condition("ReconciliationPaused")
if paused ~= nil and paused.status == "True" then
  return {status = "Suspended", message = "Reconciliation is paused (strimzi.io/pause-reconciliation)"}
end
local generation = obj.metadata.generation
local observed = obj.status ~= nil and obj.status.observedGeneration or nil
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = "Waiting for Strimzi to observe generation " .. generation .. " (observed " .. observed .. ")"}
end
local notReady = condition("NotReady")
if notReady ~= nil and notReady.status == "True" then
  if notReady.reason == "Creating" then
    return {status = "Progressing", message = text(notReady)}
  end
  return {status = "Degraded", message = (notReady.reason or "") .. ": " .. (notReady.message or "")}
end
local ready = condition("Ready")
if ready == nil then
  return {status = "Progressing", message = "Waiting for Strimzi to reconcile the " .. obj.kind}
end
if ready.status == "True" then
  local warnings = 0
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Warning" and c.status == "True" then warnings = warnings + 1 end
  end
  if warnings > 0 then
    return {status = "Healthy", message = "Ready with " .. warnings .. " warning(s)"}
  end
  return {status = "Healthy", message = "Ready"}
end
if ready.status == "False" then
  return {status = "Degraded", message = (ready.reason or "") .. ": " .. (ready.message or "")}
end
return {status = "Progressing", message = text(ready)}
