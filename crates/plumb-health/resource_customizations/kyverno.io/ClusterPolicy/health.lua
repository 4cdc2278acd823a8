-- Kyverno policies: the Ready condition (reason Succeeded once the webhooks are configured and
-- every rule loaded; False with the reason otherwise).
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
  return {status = "Progressing", message = "Waiting for Kyverno to load the policy"}
end
if ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if ready.status == "False" then
  return {status = "Degraded", message = text(ready)}
end
return {status = "Progressing", message = text(ready)}
