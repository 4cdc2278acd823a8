-- cert-manager CertificateRequest: Approved / Denied (approval), InvalidRequest, and Ready with
-- reason Pending, Issued or Failed.
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
local denied = condition("Denied")
if denied ~= nil and denied.status == "True" then
  return {status = "Degraded", message = "Request denied: " .. text(denied)}
end
local invalid = condition("InvalidRequest")
if invalid ~= nil and invalid.status == "True" then
  return {status = "Degraded", message = "Invalid request: " .. text(invalid)}
end
if ready ~= nil and ready.status == "True" then
  return {status = "Healthy", message = text(ready)}
end
if ready ~= nil and ready.status == "False" and ready.reason == "Failed" then
  return {status = "Degraded", message = text(ready)}
end
local approved = condition("Approved")
if approved == nil or approved.status ~= "True" then
  return {status = "Progressing", message = "Waiting for the request to be approved"}
end
if ready == nil then
  return {status = "Progressing", message = "Waiting for the issuer to sign the request"}
end
return {status = "Progressing", message = text(ready)}
