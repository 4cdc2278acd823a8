module plumb/notifications-engine-check

go 1.24.0

require (
	github.com/argoproj/notifications-engine v0.5.1-0.20260503100631-0cff13b8a717
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/expr-lang/expr v1.16.9 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	golang.org/x/sys v0.33.0 // indirect
)
