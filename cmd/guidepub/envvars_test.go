package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryFlagHasAnEnvVar walks every command and subcommand: each flag
// reads a GUIDEPUB_ environment variable, one no other flag of its command
// reads, as guidepub --help promises, except the flags that promise names
// as having none. A flag added without one fails here until it gets one or
// the help names it.
func TestEveryFlagHasAnEnvVar(t *testing.T) {
	app := newApp(nil, nil)
	none := regexp.MustCompile(`--[a-z-]+`).FindAllString(envVarExceptions(t, app.Description), -1)
	seen := map[string]bool{}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			vars := map[string]string{}
			for _, f := range c.Flags {
				flag := "--" + f.Names()[0]
				ev, ok := f.(interface{ GetEnvVars() []string })
				if !ok {
					t.Errorf("%s %s: cannot tell its environment variables", name, flag)
					continue
				}
				envs := ev.GetEnvVars()
				if slices.Contains(none, flag) {
					seen[flag] = true
					if len(envs) > 0 {
						t.Errorf("%s %s reads %v, but guidepub --help says it has no environment variable", name, flag, envs)
					}
					continue
				}
				if len(envs) == 0 {
					t.Errorf("%s %s has no environment variable (give it envVars(%q), or name it in guidepub --help)", name, flag, f.Names()[0])
				}
				for _, v := range envs {
					if want, ok := envVarNamedOtherwise[name+" "+flag]; ok {
						if v != want {
							t.Errorf("%s %s reads %s, want %s", name, flag, v, want)
						}
						continue
					}
					if want := envVars(f.Names()[0])[0]; v != want {
						t.Errorf("%s %s reads %s, not %s (GUIDEPUB_ and the flag's name); docs/cli.md names the exceptions", name, flag, v, want)
					}
					if other, ok := vars[v]; ok {
						t.Errorf("%s: %s and %s both read %s", name, other, flag, v)
					}
					vars[v] = flag
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", app.Commands)
	for _, flag := range none {
		if !seen[flag] {
			t.Errorf("guidepub --help names %s as having no environment variable, but no command has it", flag)
		}
	}
}

// envVarNamedOtherwise are the flags whose variable is not GUIDEPUB_ and
// the flag's name, as docs/cli.md says.
var envVarNamedOtherwise = map[string]string{
	"publish --jobs":        "GUIDEPUB_PUBLISH_JOBS",
	"healthcheck --timeout": "GUIDEPUB_HEALTHCHECK_TIMEOUT",
}

// TestEnvVarExceptionsDocumented: docs/cli.md names each flag whose
// variable is named otherwise.
func TestEnvVarExceptionsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, env, _ := strings.Cut(string(doc), "## Environment variables")
	env, _, _ = strings.Cut(env, "\n## ")
	for flag, v := range envVarNamedOtherwise {
		if !strings.Contains(env, "`"+v+"`") {
			t.Errorf("docs/cli.md's environment variables do not say that %s reads %s", flag, v)
		}
	}
}

// envVarExceptions returns the sentence of the application's description
// that names the flags without an environment variable.
func envVarExceptions(t *testing.T, description string) string {
	t.Helper()
	m := regexp.MustCompile(`Only the one-shot ([^.]*) have none\.`).FindStringSubmatch(strings.Join(strings.Fields(description), " "))
	if m == nil {
		t.Fatalf("guidepub --help does not say which flags have no environment variable:\n%s", description)
	}
	return m[1]
}
