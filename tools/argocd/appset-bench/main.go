// appset-bench: the Argo CD side of crates/plumb-appset/benches/generate.rs. The same
// ApplicationSet (a list generator of 1,000 elements and the list-generator guestbook template
// of Argo's docs, `{{param}}` and goTemplate modes) through Argo CD's own code: the loop of
// template.GenerateApplications (generators.Transform, then Render.RenderTemplateParams on
// template.GetTempApplication per element), written out here without its logging so that this
// package needs no module the argocd build does not already require directly (a go.mod change
// would rebuild scripts/argocd's cached binary). Prints the best CPU milliseconds
// (user+system, getrusage) of 10 rounds per mode. Run by bench/appset-generate.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	argov1alpha1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// set builds the bench ApplicationSet exactly as benches/generate.rs does.
func set(goTemplate bool) argov1alpha1.ApplicationSet {
	p := func(name string) string {
		if goTemplate {
			return "{{." + name + "}}"
		}
		return "{{" + name + "}}"
	}
	elements := make([]map[string]string, 1000)
	for i := range elements {
		elements[i] = map[string]string{
			"cluster": fmt.Sprintf("cluster-%d", i),
			"url":     fmt.Sprintf("https://10.0.%d.%d", i/256, i%256),
		}
	}
	doc := map[string]any{
		"metadata": map[string]any{"name": "bench", "namespace": "argocd"},
		"spec": map[string]any{
			"goTemplate": goTemplate,
			"generators": []any{map[string]any{"list": map[string]any{"elements": elements}}},
			"template": map[string]any{
				"metadata": map[string]any{"name": p("cluster") + "-guestbook"},
				"spec": map[string]any{
					"project": "default",
					"source": map[string]any{
						"repoURL":        "https://github.com/argoproj/argo-cd.git",
						"targetRevision": "HEAD",
						"path":           "applicationset/examples/list-generator/guestbook/" + p("cluster"),
					},
					"destination": map[string]any{"server": p("url"), "namespace": "guestbook"},
				},
			},
		},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	var out argov1alpha1.ApplicationSet
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// generate is template.GenerateApplications without its logging and templatePatch step (the
// bench set has no templatePatch).
func generate(appSet argov1alpha1.ApplicationSet, gens map[string]generators.Generator, renderer *utils.Render) ([]argov1alpha1.Application, error) {
	var out []argov1alpha1.Application
	for _, requested := range appSet.Spec.Generators {
		results, err := generators.Transform(requested, gens, appSet.Spec.Template, &appSet, map[string]any{}, nil)
		if err != nil {
			return nil, err
		}
		for _, r := range results {
			tmpl := template.GetTempApplication(r.Template)
			for _, p := range r.Params {
				app, err := renderer.RenderTemplateParams(tmpl, appSet.Spec.SyncPolicy, p, appSet.Spec.GoTemplate, appSet.Spec.GoTemplateOptions)
				if err != nil {
					return nil, err
				}
				out = append(out, *app)
			}
		}
	}
	return out, nil
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	gens := map[string]generators.Generator{"List": generators.NewListGenerator()}
	renderer := &utils.Render{}
	for _, goTemplate := range []bool{false, true} {
		appSet := set(goTemplate)
		best := time.Duration(1 << 62)
		for round := 0; round < 10; round++ {
			start := cpuNow()
			apps, err := generate(appSet, gens, renderer)
			spent := cpuNow() - start
			if err != nil || len(apps) != 1000 {
				fmt.Fprintf(os.Stderr, "appset-bench: %d applications, error %v\n", len(apps), err)
				os.Exit(1)
			}
			if spent < best {
				best = spent
			}
		}
		name := "flat"
		if goTemplate {
			name = "go"
		}
		fmt.Printf("argo generate_list_1000_%s %.1f ms CPU\n", name, float64(best.Microseconds())/1000)
	}
}
