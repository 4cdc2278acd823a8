-- External Secrets ExternalSecret: the Ready condition (SecretSynced / SecretSyncedError /
-- SecretDeleted) and status.syncedResourceVersion, "<generation>-<hash>" of the spec last synced.
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
  return {status = "Progressing", message = "Waiting for the secret to be synced"}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
if ready.status ~= "True" then
  return {status = "Progressing", message = text(ready)}
end
local synced = obj.status.syncedResourceVersion
local generation = obj.metadata.generation
if synced ~= nil and generation ~= nil and string.find(synced, "^" .. generation .. "%-") == nil then
  return {status = "Progressing", message = "Waiting for generation " .. generation .. " to be synced (synced: " .. synced .. ")"}
end
return {status = "Healthy", message = text(ready)}
