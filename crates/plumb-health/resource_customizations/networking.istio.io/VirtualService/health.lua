-- Istio VirtualService: istiod writes status only when config status is enabled; then
-- status.validationMessages holds analyzer findings (level ERROR, WARNING or INFO, and a code
-- such as IST0101) and status.observedGeneration the generation analysed. No status is normal.
local s = obj.status
if s == nil then
  return {status = "Healthy", message = ""}
end
local generation = obj.metadata.generation
if s.observedGeneration ~= nil and generation ~= nil and tonumber(s.observedGeneration) < generation then
  return {status = "Progressing", message = "Waiting for istiod to validate generation " .. generation .. " (observed " .. tostring(s.observedGeneration) .. ")"}
end
local function describe(m)
  local code = ""
  if m.type ~= nil and m.type.code ~= nil then code = m.type.code .. " " end
  return code .. (m.description or "")
end
local warnings = {}
if s.validationMessages ~= nil then
  for _, m in ipairs(s.validationMessages) do
    if m.level == "ERROR" or m.level == "Error" or m.level == 3 then
      return {status = "Degraded", message = describe(m)}
    end
    if m.level == "WARNING" or m.level == "Warning" or m.level == 8 then
      table.insert(warnings, describe(m))
    end
  end
end
return {status = "Healthy", message = table.concat(warnings, "; ")}
