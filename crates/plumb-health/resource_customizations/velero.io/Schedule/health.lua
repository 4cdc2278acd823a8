-- Velero Schedule: spec.paused, and status.phase (New, Enabled, FailedValidation) with
-- validationErrors; lastBackup says when it last ran.
if obj.spec ~= nil and obj.spec.paused == true then
  return {status = "Suspended", message = "Schedule is paused (spec.paused)"}
end
local s = obj.status
local phase = s ~= nil and s.phase or nil
if phase == "Enabled" then
  if s.lastBackup ~= nil then
    return {status = "Healthy", message = "Enabled; last backup at " .. s.lastBackup}
  end
  return {status = "Healthy", message = "Enabled"}
end
if phase == "FailedValidation" then
  local errs = s.validationErrors or {}
  return {status = "Degraded", message = "Schedule failed validation: " .. table.concat(errs, "; ")}
end
return {status = "Progressing", message = "Waiting for Velero to validate the Schedule"}
