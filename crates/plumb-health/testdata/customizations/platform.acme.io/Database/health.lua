-- Health of an acme Database: observedGeneration first, then its conditions.
-- Uses `goto continue`, as many of Argo CD's bundled scripts do.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the database operator"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= nil
    and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for spec generation " .. obj.metadata.generation .. " (seen " .. obj.status.observedGeneration .. ")"
  return hs
end
local replicas_ready = 0
for _, condition in ipairs(obj.status.conditions) do
  if condition.type ~= "Ready" then
    goto continue
  end
  if condition.status == "True" then
    hs.status = "Healthy"
    hs.message = condition.message
    return hs
  end
  if condition.reason == "ProvisioningFailed" then
    hs.status = "Degraded"
    hs.message = condition.message
    return hs
  end
  ::continue::
end
if obj.status.readyReplicas ~= nil then
  replicas_ready = obj.status.readyReplicas
end
hs.status = "Progressing"
hs.message = string.format("%d of %d replicas ready (%.0f%%)", replicas_ready, obj.spec.replicas, 100 * replicas_ready / obj.spec.replicas)
return hs
