-- cert-manager Certificate: the Ready condition (with its observedGeneration), the Issuing
-- condition while a certificate is being issued, and lastFailureTime after a failed issuance
-- (cert-manager then backs off before retrying).
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
local issuing = condition("Issuing")
local generation = obj.metadata.generation
if ready ~= nil and ready.observedGeneration ~= nil and generation ~= nil and ready.observedGeneration < generation then
  return {status = "Progressing", message = "Waiting for cert-manager to observe generation " .. generation .. " (Ready is for " .. ready.observedGeneration .. ")"}
end
if issuing ~= nil and issuing.status == "True" then
  return {status = "Progressing", message = "Issuing certificate: " .. text(issuing)}
end
if ready ~= nil and ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if obj.status ~= nil and obj.status.lastFailureTime ~= nil then
  local why = ready ~= nil and text(ready) or ""
  if issuing ~= nil and issuing.status == "False" then why = text(issuing) end
  return {status = "Degraded", message = "Issuing failed at " .. obj.status.lastFailureTime .. ": " .. why}
end
if ready ~= nil and ready.reason == "Expired" then
  return {status = "Degraded", message = text(ready)}
end
if ready == nil then
  return {status = "Progressing", message = "Waiting for cert-manager to issue the certificate"}
end
return {status = "Progressing", message = text(ready)}
