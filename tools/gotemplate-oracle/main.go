// gotemplate-oracle renders a JSON corpus of Go templates exactly as Argo CD
// v3.6.1's ApplicationSet controller does (applicationset/utils/utils.go
// Render.Replace), so plumb-gotemplate can be compared with real Go.
//
// Usage: gotemplate-oracle CORPUS.json > EXPECTED.json
// CORPUS.json: {"cases": [{"name": "...", "template": "...", "data": {...}, "options": ["missingkey=error"]}]}
// EXPECTED.json: {"NAME": {"output": "..."} | {"output_bytes": N} | {"error": "..."}} (keys sorted
// by encoding/json; outputs over 1 MiB are recorded by length only).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"sigs.k8s.io/yaml"
)

type testCase struct {
	Name     string         `json:"name"`
	Template string         `json:"template"`
	Data     map[string]any `json:"data"`
	Options  []string       `json:"options"`
}

type corpus struct {
	Cases []testCase `json:"cases"`
}

type result struct {
	Output *string `json:"output,omitempty"`
	// OutputBytes replaces Output when it is longer than maxRecorded (hostile cases).
	OutputBytes int     `json:"output_bytes,omitempty"`
	Error       *string `json:"error,omitempty"`
}

// Outputs longer than this are recorded by length only.
const maxRecorded = 1 << 20

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go.
const tplFuncMaxRecursionDepth = 3

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go (SanitizeName).
func sanitizeName(name string) string {
	invalidDNSNameChars := regexp.MustCompile("[^-a-z0-9.]")
	maxDNSNameLength := 253
	name = strings.ToLower(name)
	name = invalidDNSNameChars.ReplaceAllString(name, "-")
	if len(name) > maxDNSNameLength {
		name = name[:maxDNSNameLength]
	}
	return strings.Trim(name, "-.")
}

// Copied from argo-cd v3.6.1 applicationset/utils/utils.go (SlugifyName).
func slugifyName(args ...any) string {
	maxSize := 50
	enableSmartTruncate := true
	name := ""
	for idx, arg := range args {
		switch idx {
		case len(args) - 1:
			name = arg.(string)
		case 0:
			maxSize = arg.(int)
		case 1:
			enableSmartTruncate = arg.(bool)
		}
	}
	sanitized := sanitizeName(name)
	slug.EnableSmartTruncate = enableSmartTruncate
	slug.MaxLength = maxSize
	return slug.Make(sanitized)
}

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go (toYAML).
func toYAML(v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go (fromYAML).
func fromYAML(str string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(str), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go (fromYAMLArray).
func fromYAMLArray(str string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(str), &a); err != nil {
		return nil, err
	}
	return a, nil
}

// Copied from argo-cd v3.6.1 applicationset/utils/template_functions.go (tplFun).
func tplFun(parent *template.Template) func(string, any) (string, error) {
	callDepth := 0
	return func(tpl string, vals any) (string, error) {
		callDepth++
		defer func() { callDepth-- }()
		if callDepth > tplFuncMaxRecursionDepth {
			return "", fmt.Errorf("maximum recursion depth %d exceeded in tpl function", tplFuncMaxRecursionDepth)
		}
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		t, err = t.New(parent.Name()).Parse(tpl)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", tpl, err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", tpl, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
}

func baseTemplate() *template.Template {
	// As argo-cd v3.6.1 applicationset/utils/utils.go init().
	funcs := sprig.GenericFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	delete(funcs, "getHostByName")
	funcs["normalize"] = sanitizeName
	funcs["slugify"] = slugifyName
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["fromYamlArray"] = fromYAMLArray
	return template.New("base").Funcs(funcs)
}

// render is argo-cd v3.6.1 Render.Replace's goTemplate branch.
func render(base *template.Template, c testCase) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	cloned, err := base.Clone()
	if err != nil {
		return "", err
	}
	for _, option := range c.Options {
		cloned = cloned.Option(option)
	}
	cloned = cloned.Funcs(template.FuncMap{"tpl": tplFun(cloned)})
	parsed, err := cloned.Parse(c.Template)
	if err != nil {
		return "", fmt.Errorf("failed to parse template %s: %w", c.Template, err)
	}
	var buf bytes.Buffer
	if err = parsed.Execute(&buf, c.Data); err != nil {
		return "", fmt.Errorf("failed to execute go template %s: %w", c.Template, err)
	}
	return buf.String(), nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gotemplate-oracle CORPUS.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var cp corpus
	if err := json.Unmarshal(raw, &cp); err != nil {
		fmt.Fprintln(os.Stderr, os.Args[1], err)
		os.Exit(1)
	}
	base := baseTemplate()
	results := map[string]result{}
	for _, c := range cp.Cases {
		if _, dup := results[c.Name]; dup {
			fmt.Fprintln(os.Stderr, "duplicate case name", c.Name)
			os.Exit(1)
		}
		out, err := render(base, c)
		if err != nil {
			msg := err.Error()
			results[c.Name] = result{Error: &msg}
		} else if len(out) > maxRecorded {
			results[c.Name] = result{OutputBytes: len(out)}
		} else {
			results[c.Name] = result{Output: &out}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
