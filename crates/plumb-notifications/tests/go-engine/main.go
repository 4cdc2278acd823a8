// The real notifications-engine (pkg/triggers, Go's expr) over Argo CD's catalog triggers and
// the Application fixtures plumb-notifications' catalog test uses: prints, for each fixture and
// each trigger that fires, "index trigger conditionKey oncePer", for the Rust test to compare.
// Argo CD's `time` helpers are copied (Parse, Now, Minute): importing argo-cd would pull in all
// of Argo CD.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/triggers"
	"sigs.k8s.io/yaml"
)

func parse(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		panic(err)
	}
	ts := map[string][]triggers.Condition{}
	var names []string
	for k, v := range cm.Data {
		if name, ok := strings.CutPrefix(k, "trigger."); ok {
			var c []triggers.Condition
			if err := yaml.Unmarshal([]byte(v), &c); err != nil {
				panic(err)
			}
			ts[name] = c
			names = append(names, name)
		}
	}
	sort.Strings(names)
	svc, err := triggers.NewService(ts)
	if err != nil {
		panic(err)
	}
	fx, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	var fixtures []struct{ App map[string]any }
	if err := json.Unmarshal(fx, &fixtures); err != nil {
		panic(err)
	}
	for i, f := range fixtures {
		vars := map[string]any{"app": f.App, "time": map[string]any{"Parse": parse, "Now": time.Now, "Minute": time.Minute}}
		for _, n := range names {
			res, err := svc.Run(n, vars)
			if err != nil {
				panic(err)
			}
			for _, r := range res {
				if r.Triggered {
					fmt.Printf("%d %s %s %s\n", i, n, r.Key, r.OncePer)
				}
			}
		}
	}
}
