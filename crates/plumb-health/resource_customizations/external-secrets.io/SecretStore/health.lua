-- External Secrets stores: the Ready condition (StoreValidated, or InvalidStoreConfiguration /
-- InvalidProviderConfig / ValidationFailed when the provider cannot be reached or configured).
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
if ready == nil then
  return {status = "Progressing", message = "Waiting for the " .. obj.kind .. " to be validated"}
end
if ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
return {status = "Progressing", message = text(ready)}
