-- CloudNativePG Cluster: status.phase (a sentence such as "Cluster in healthy state" or
-- "Setting up primary") with status.phaseReason, and the cnpg.io/hibernation condition while
-- the cluster is hibernated (the cnpg.io/hibernation annotation).
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
local hibernation = condition("cnpg.io/hibernation")
if hibernation ~= nil and hibernation.status == "True" then
  return {status = "Suspended", message = "Cluster is hibernated: " .. text(hibernation)}
end
local s = obj.status
local phase = s ~= nil and s.phase or nil
if phase == nil or phase == "" then
  return {status = "Progressing", message = "Waiting for CloudNativePG to reconcile the cluster"}
end
local message = phase
if s.phaseReason ~= nil and s.phaseReason ~= "" then message = phase .. ": " .. s.phaseReason end
if phase == "Cluster in healthy state" then
  return {status = "Healthy", message = message}
end
local lower = string.lower(phase)
local failures = {"unrecoverable", "unable to", "cannot proceed", "failed", "not supported"}
for _, word in ipairs(failures) do
  if string.find(lower, word, 1, true) ~= nil then
    return {status = "Degraded", message = message}
  end
end
return {status = "Progressing", message = message}
