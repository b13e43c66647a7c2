// Command lint writes the JSON schemas that `make lint` validates
// deploy/kubernetes/*.yaml against with kubeconform, offline. They are made
// from Kubernetes' own OpenAPI description of its API (api/openapi-spec/
// swagger.json in the module k8s.io/kubernetes, taken from the Go module
// proxy at KubernetesVersion) the way kubeconform's schemas are made from
// it (openapi2jsonschema): one file per kind, every $ref inlined
// ("standalone"), every object with properties closed to others
// ("strict": an unknown or misspelt field is an error), an int-or-string a
// string or an integer, a quantity a string or a number.
//
// Usage, from the module's root:
//
//	go run ./deploy/kubernetes/lint          # rewrite schemas/
//	go run ./deploy/kubernetes/lint -check   # exit 1 if schemas/ differs from what it would write
//	go run ./deploy/kubernetes/lint -print-version   # KubernetesVersion, for kubeconform
//
// Only the kinds of Kinds are written: add one there when a manifest needs
// it (kubeconform refuses a kind it has no schema for).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// KubernetesVersion is the release whose API the schemas describe.
const KubernetesVersion = "1.37.2"

// Kinds are the kinds written, as apiVersion and kind.
var Kinds = [][2]string{
	{"v1", "ConfigMap"},
	{"v1", "Secret"},
	{"v1", "Service"},
	{"v1", "PersistentVolumeClaim"},
	{"v1", "Pod"},
	{"apps/v1", "Deployment"},
	{"apps/v1", "StatefulSet"},
	{"batch/v1", "Job"},
	{"policy/v1", "PodDisruptionBudget"},
}

func main() {
	check := flag.Bool("check", false, "compare with the schemas in -dir instead of writing them")
	dir := flag.String("dir", "deploy/kubernetes/lint/schemas", "folder of the schemas (kubeconform's -schema-location)")
	printVersion := flag.Bool("print-version", false, "print the Kubernetes version of the schemas and exit")
	flag.Parse()
	if *printVersion {
		fmt.Println(KubernetesVersion)
		return
	}
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "deploy/kubernetes/lint:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	defs, err := loadDefinitions()
	if err != nil {
		return err
	}
	files, err := schemas(defs)
	if err != nil {
		return err
	}
	sub := filepath.Join(dir, "v"+KubernetesVersion+"-standalone-strict")
	if check {
		if err := onlyFolder(dir, filepath.Base(sub)); err != nil {
			return err
		}
		return compare(sub, files)
	}
	old, err := filepath.Glob(filepath.Join(dir, "v*-standalone-strict"))
	if err != nil {
		return err
	}
	for _, o := range old {
		if err := os.RemoveAll(o); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(sub, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// onlyFolder returns an error unless dir holds the folder name alone
// (schemas of another version left behind).
func onlyFolder(dir, name string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != name {
			return fmt.Errorf("%s: %s is not written by `go run ./deploy/kubernetes/lint` (it writes %s)", dir, e.Name(), name)
		}
	}
	return nil
}

// compare returns an error naming each file of dir that differs from
// files, is missing, or is not one of them.
func compare(dir string, files map[string][]byte) error {
	var problems []string
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			problems = append(problems, name+" differs or is missing")
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok {
			problems = append(problems, e.Name()+" is not written by this command")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%s is not what `go run ./deploy/kubernetes/lint` writes:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	return nil
}

// loadDefinitions reads the definitions of swagger.json from the module
// k8s.io/kubernetes, downloaded by the go command into its module cache
// (outside any module, so that no go.mod or go.sum is touched).
func loadDefinitions() (map[string]any, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@v"+KubernetesVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@v%s: %v", KubernetesVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@v%s: %s %v", KubernetesVersion, mod.Error, err)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, "api", "openapi-spec", "swagger.json"))
	if err != nil {
		return nil, err
	}
	var spec struct{ Definitions map[string]any }
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("swagger.json: %v", err)
	}
	return spec.Definitions, nil
}

// schemas returns each kind's schema by the file name kubeconform looks
// for: the kind, the group's first label and the version, in lower case
// (deployment-apps-v1.json, configmap-v1.json).
func schemas(defs map[string]any) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, k := range Kinds {
		apiVersion, kind := k[0], k[1]
		name, err := definitionOf(defs, apiVersion, kind)
		if err != nil {
			return nil, err
		}
		s, err := standalone(defs, name, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		root := s.(map[string]any)
		root["$schema"] = "http://json-schema.org/schema#"
		props := root["properties"].(map[string]any)
		props["apiVersion"].(map[string]any)["enum"] = []any{apiVersion}
		props["kind"].(map[string]any)["enum"] = []any{kind}
		data, err := json.MarshalIndent(root, "", " ")
		if err != nil {
			return nil, err
		}
		files[fileName(apiVersion, kind)] = append(data, '\n')
	}
	return files, nil
}

func fileName(apiVersion, kind string) string {
	group, version, ok := strings.Cut(apiVersion, "/")
	suffix := "-" + group
	if ok {
		group, _, _ = strings.Cut(group, ".")
		suffix = "-" + group + "-" + version
	}
	return strings.ToLower(kind + suffix + ".json")
}

// definitionOf returns the name of the definition whose
// x-kubernetes-group-version-kind is apiVersion and kind alone.
func definitionOf(defs map[string]any, apiVersion, kind string) (string, error) {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	for name, d := range defs {
		gvks, _ := d.(map[string]any)["x-kubernetes-group-version-kind"].([]any)
		if len(gvks) != 1 {
			continue
		}
		g := gvks[0].(map[string]any)
		if g["group"] == group && g["version"] == version && g["kind"] == kind {
			return name, nil
		}
	}
	return "", fmt.Errorf("swagger.json of Kubernetes %s defines no %s %s", KubernetesVersion, apiVersion, kind)
}

// special are the definitions whose JSON form the OpenAPI description
// gives as a string with a format, where manifests write numbers too.
var special = map[string]any{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": map[string]any{
		"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}},
	},
	"io.k8s.apimachinery.pkg.api.resource.Quantity": map[string]any{
		"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}},
	},
}

// standalone returns the definition name as a JSON schema with every
// $ref replaced by what it names, and additionalProperties false on
// every object schema with properties; path holds the definitions being
// inlined, to refuse a cycle.
func standalone(defs map[string]any, name string, path []string) (any, error) {
	if s, ok := special[name]; ok {
		return s, nil
	}
	if slices.Contains(path, name) {
		return nil, fmt.Errorf("definitions refer to themselves: %s", strings.Join(append(path, name), " → "))
	}
	d, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("no definition %s", name)
	}
	return convert(defs, d, append(path, name))
}

// convert converts one schema node of a definition.
func convert(defs map[string]any, node any, path []string) (any, error) {
	m, ok := node.(map[string]any)
	if !ok {
		return node, nil
	}
	if ref, ok := m["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/definitions/")
		if !found {
			return nil, fmt.Errorf("unexpected $ref %s", ref)
		}
		return standalone(defs, name, path)
	}
	out := map[string]any{}
	for k, v := range m {
		if k == "description" || strings.HasPrefix(k, "x-kubernetes-") {
			continue // for people and clients, not validation: two thirds of the size
		}
		out[k] = v
	}
	if err := convertChildren(defs, m, out, path); err != nil {
		return nil, err
	}
	return out, nil
}

// convertChildren converts the schemas under a node: its properties, items
// and additionalProperties.
func convertChildren(defs map[string]any, m, out map[string]any, path []string) error {
	if props, ok := m["properties"].(map[string]any); ok {
		converted := map[string]any{}
		for name, p := range props {
			c, err := convert(defs, p, path)
			if err != nil {
				return err
			}
			converted[name] = c
		}
		out["properties"] = converted
		if _, set := m["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := m[k]; ok {
			c, err := convert(defs, v, path)
			if err != nil {
				return err
			}
			out[k] = c
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if _, ok := m[k]; ok {
			return errors.New(k + " is not converted")
		}
	}
	return nil
}
