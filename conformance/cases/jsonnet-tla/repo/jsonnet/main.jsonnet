function(name, replicas=1)
  local env = std.extVar('env');
  [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: name + '-' + env },
      data: { replicas: std.toString(replicas), env: env },
    },
  ]
