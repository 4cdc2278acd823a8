-- Sealed Secrets SealedSecret: status.observedGeneration and the Synced condition (False with
-- the reason when the controller cannot decrypt or create the Secret).
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
  return {status = "Progressing", message = "Waiting for the controller to unseal generation " .. generation .. " (observed " .. observed .. ")"}
end
local synced = condition("Synced")
if synced == nil then
  return {status = "Progressing", message = "Waiting for the controller to unseal the secret"}
end
if synced.status == "True" then
  local said = text(synced)
  if said == "" then said = "Secret unsealed" end
  return {status = "Healthy", message = said}
end
return {status = "Degraded", message = text(synced)}
