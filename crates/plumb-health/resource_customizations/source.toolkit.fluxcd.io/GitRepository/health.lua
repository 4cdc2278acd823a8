-- Flux (toolkit.fluxcd.io): every Flux object publishes status.observedGeneration and the
-- Ready, Reconciling and Stalled conditions (Flux "status conventions"), and spec.suspend stops it.
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
local kind = obj.kind
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = kind .. " reconciliation is suspended (spec.suspend)"}
end
local generation = obj.metadata.generation
local observed = obj.status ~= nil and obj.status.observedGeneration or nil
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = "Waiting for the Flux controller to observe generation " .. generation .. " (observed " .. observed .. ")"}
end
local stalled = condition("Stalled")
local ready = condition("Ready")
if stalled ~= nil and stalled.status == "True" then
  -- Ready=False carries the failure itself; Stalled often only says retries ran out.
  if ready ~= nil and ready.status == "False" then
    return {status = "Degraded", message = text(ready)}
  end
  return {status = "Degraded", message = text(stalled)}
end
local reconciling = condition("Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  return {status = "Progressing", message = text(reconciling)}
end
if ready == nil then
  return {status = "Progressing", message = "Waiting for the Flux controller to reconcile " .. kind}
end
if ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if ready.status == "False" and ready.reason ~= "DependencyNotReady" then
  return {status = "Degraded", message = text(ready)}
end
return {status = "Progressing", message = text(ready)}
