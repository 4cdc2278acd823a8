-- Crossplane packages (Provider, Configuration): the Installed condition (UnpackPackage while the
-- package is fetched, InactivePackageRevision when activation is Manual) and Healthy.
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
local installed = condition("Installed")
local healthy = condition("Healthy")
if installed ~= nil and installed.status == "False" and installed.reason == "InactivePackageRevision" then
  return {status = "Suspended", message = "Package revision is inactive (revisionActivationPolicy: Manual): " .. text(installed)}
end
if healthy ~= nil and healthy.status == "False" then
  return {status = "Degraded", message = text(healthy)}
end
if installed ~= nil and installed.status == "False" and installed.reason ~= "UnpackPackage" then
  return {status = "Degraded", message = text(installed)}
end
if installed == nil or installed.status ~= "True" then
  return {status = "Progressing", message = "Waiting for the package to be installed" .. (installed ~= nil and (": " .. text(installed)) or "")}
end
if healthy == nil or healthy.status ~= "True" then
  return {status = "Progressing", message = "Waiting for the package revision to become healthy" .. (healthy ~= nil and (": " .. text(healthy)) or "")}
end
return {status = "Healthy", message = "Installed and healthy"}
