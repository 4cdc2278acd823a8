-- cert-manager issuers: the Ready condition (False when the issuer cannot issue, e.g. an ACME
-- account that failed to register or a missing CA secret), with its observedGeneration.
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
local ready = condition("Ready")
local generation = obj.metadata.generation
if ready ~= nil and ready.observedGeneration ~= nil and generation ~= nil and ready.observedGeneration < generation then
  return {status = "Progressing", message = "Waiting for cert-manager to observe generation " .. generation .. " (Ready is for " .. ready.observedGeneration .. ")"}
end
if ready == nil then
  return {status = "Progressing", message = "Waiting for cert-manager to check the " .. obj.kind}
end
if ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
return {status = "Progressing", message = text(ready)}
