-- Health of a CronJob from its schedule history (Plumb's test library, Argo-compatible contract).
local hs = { status = "Progressing", message = "Waiting for CronJob" }

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Healthy"
  hs.message = "CronJob is Suspended"
  return hs
end

if obj.status == nil then
  return hs
end

local scheduled = obj.status.lastScheduleTime
local succeeded = obj.status.lastSuccessfulTime

if scheduled == nil then
  hs.status = "Healthy"
  hs.message = "CronJob has not been scheduled yet"
elseif succeeded == nil then
  hs.status = "Healthy"
  hs.message = "The CronJob never completed successfully. It may not be healthy"
elseif obj.status.active ~= nil and #obj.status.active > 0 then
  hs.status = "Healthy"
  hs.message = "The job is running. Its last execution may not have been successful"
elseif succeeded < scheduled then
  hs.status = "Degraded"
  hs.message = "CronJob has not completed its last execution successfully"
else
  hs.status = "Healthy"
  hs.message = "CronJob has completed its last execution successfully"
end
return hs
