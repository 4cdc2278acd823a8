-- Health of a CustomResourceDefinition from its conditions.
local hs = { status = "Progressing", message = "Status conditions not found" }
if obj.metadata.deletionTimestamp ~= nil then
  hs.message = "CRD is terminating"
  return hs
end
if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  return hs
end
local established = nil
for i, c in ipairs(obj.status.conditions) do
  if c.type == "NamesAccepted" and c.status == "False" then
    return { status = "Degraded", message = "CRD names are not accepted: " .. c.message }
  end
  if c.type == "NonStructuralSchema" and c.status == "True" then
    return { status = "Degraded", message = "CRD schema is not structural (" .. i .. "): " .. c.message }
  end
  if c.type == "Established" then
    established = c
  end
end
if established == nil or established.status ~= "True" then
  if established ~= nil and established.reason == "Installing" then
    return { status = "Progressing", message = "CRD is installing" }
  end
  return { status = "Degraded", message = "CRD is not established" }
end
return { status = "Healthy", message = "CRD is healthy" }
