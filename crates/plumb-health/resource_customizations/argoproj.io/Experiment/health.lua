-- Argo Rollouts analysis and experiments: status.phase (Pending, Running, Successful, Failed,
-- Error, Inconclusive) and status.message. An inconclusive result pauses the rollout until someone
-- decides, so it reads Suspended.
local s = obj.status
local phase = s ~= nil and s.phase or nil
local message = s ~= nil and s.message or nil
local function say(default)
  if message ~= nil and message ~= "" then return message end
  return default
end
if phase == "Successful" then
  return {status = "Healthy", message = say(obj.kind .. " completed successfully")}
end
if phase == "Failed" or phase == "Error" then
  return {status = "Degraded", message = say(obj.kind .. " " .. string.lower(phase))}
end
if phase == "Inconclusive" then
  return {status = "Suspended", message = say(obj.kind .. " is inconclusive: waiting for a decision")}
end
if phase == "Running" then
  return {status = "Progressing", message = say(obj.kind .. " is running")}
end
return {status = "Progressing", message = say("Waiting for " .. obj.kind .. " to start")}
