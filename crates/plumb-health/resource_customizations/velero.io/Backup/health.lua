-- Velero Backup / Restore: status.phase (New, FailedValidation, InProgress,
-- WaitingForPluginOperations[PartiallyFailed], Finalizing[PartiallyFailed], Completed,
-- PartiallyFailed, Failed, Deleting), with validationErrors, failureReason, errors and warnings.
local s = obj.status
local phase = s ~= nil and s.phase or nil
if phase == nil or phase == "" or phase == "New" then
  return {status = "Progressing", message = "Waiting for Velero to start the " .. obj.kind}
end
if phase == "Completed" then
  if s.warnings ~= nil and s.warnings > 0 then
    return {status = "Healthy", message = obj.kind .. " completed with " .. s.warnings .. " warning(s)"}
  end
  return {status = "Healthy", message = obj.kind .. " completed"}
end
if phase == "FailedValidation" then
  local errs = s.validationErrors or {}
  return {status = "Degraded", message = obj.kind .. " failed validation: " .. table.concat(errs, "; ")}
end
if phase == "Failed" then
  return {status = "Degraded", message = obj.kind .. " failed: " .. (s.failureReason or "")}
end
if phase == "PartiallyFailed" then
  return {status = "Degraded", message = obj.kind .. " partially failed with " .. (s.errors or 0) .. " error(s)"}
end
return {status = "Progressing", message = obj.kind .. " is " .. phase}
