-- Any acme.io kind without its own script: report the kind while waiting.
return { status = "Progressing", message = "wildcard acme script: " .. obj.kind }
