package main

// No container engine runs where the tests run, so these tests check the
// container files by reading them: the Dockerfile with a small instruction
// parser, compose.yaml with a YAML decoder, and the binary the Dockerfile
// builds by building it the same way.

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the module root, relative to this package's folder.
const repoRoot = "../.."

// instruction is one Dockerfile instruction.
type instruction struct {
	Line  int      // line where it starts
	Cmd   string   // FROM, RUN... in capitals
	Flags []string // leading --name=value flags
	Args  string   // the rest, continuation lines joined
	Exec  []string // Args as a JSON array (exec form), or nil
}

// parseDockerfile splits a Dockerfile into instructions: comments and
// blank lines dropped, backslash continuations joined, leading --flags
// split off, exec-form arguments decoded. It returns an error for a line
// that is not an instruction.
func parseDockerfile(text string) ([]instruction, error) {
	var out []instruction
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			line = strings.TrimSuffix(line, `\`)
			i++
			next := strings.TrimSpace(lines[i])
			for strings.HasPrefix(next, "#") && i+1 < len(lines) {
				i++ // comment lines inside a continuation are dropped
				next = strings.TrimSpace(lines[i])
			}
			line += " " + next
		}
		cmd, rest, _ := strings.Cut(line, " ")
		if !regexp.MustCompile(`^[A-Za-z]+$`).MatchString(cmd) {
			return nil, fmt.Errorf("line %d: not an instruction: %q", start, line)
		}
		ins := instruction{Line: start, Cmd: strings.ToUpper(cmd)}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			flag, tail, _ := strings.Cut(rest, " ")
			ins.Flags = append(ins.Flags, flag)
			rest = strings.TrimSpace(tail)
		}
		ins.Args = rest
		if strings.HasPrefix(rest, "[") {
			var exec []string
			if err := json.Unmarshal([]byte(rest), &exec); err == nil {
				ins.Exec = exec
			}
		}
		out = append(out, ins)
	}
	return out, nil
}

// stage is one FROM and the instructions after it.
type stage struct {
	Image, Name string
	Body        []instruction
}

func stages(ins []instruction) []stage {
	var out []stage
	for _, in := range ins {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			st := stage{Image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			}
			out = append(out, st)
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Body = append(out[len(out)-1].Body, in)
		}
	}
	return out
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.Body {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// shellWords splits a command line into words, honouring single and double
// quotes (enough for the build commands compared here).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// buildCommand is a go build command line without its -o argument: the
// environment assignments before it and the arguments after "go".
type buildCommand struct {
	Env  []string
	Args []string
}

// parseBuild reads a "VAR=x go build ... -o out pkg" command; goCmd is
// what stands for the go tool ("go" or "$(GO)").
func parseBuild(words []string, goCmd string) (buildCommand, error) {
	var bc buildCommand
	i := 0
	for ; i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i++ {
		bc.Env = append(bc.Env, words[i])
	}
	if i >= len(words) || words[i] != goCmd || i+1 >= len(words) || words[i+1] != "build" {
		return bc, fmt.Errorf("not a %s build command: %q", goCmd, words)
	}
	for j := i + 1; j < len(words); j++ {
		if words[j] == "-o" {
			j++ // drop the output path
			continue
		}
		bc.Args = append(bc.Args, words[j])
	}
	return bc, nil
}

// makefileBuild returns the command of the Makefile's build target.
func makefileBuild(t *testing.T) buildCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "build:") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			bc, err := parseBuild(shellWords(strings.TrimSpace(lines[i+1])), "$(GO)")
			if err != nil {
				t.Fatalf("Makefile build target: %v", err)
			}
			return bc
		}
	}
	t.Fatal("Makefile has no build target with a recipe")
	return buildCommand{}
}

func readDockerfile(t *testing.T) []stage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ins, err := parseDockerfile(string(data))
	if err != nil {
		t.Fatal(err)
	}
	st := stages(ins)
	if len(st) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(st))
	}
	return st
}

// dockerBuild returns the go build command of the Dockerfile's build stage.
func dockerBuild(t *testing.T, build stage) buildCommand {
	t.Helper()
	for _, in := range build.all("RUN") {
		if !strings.Contains(in.Args, "go build") {
			continue
		}
		bc, err := parseBuild(shellWords(in.Args), "go")
		if err != nil {
			t.Fatalf("Dockerfile line %d: %v", in.Line, err)
		}
		return bc
	}
	t.Fatal("the Dockerfile's build stage runs no go build")
	return buildCommand{}
}

func TestParseDockerfile(t *testing.T) {
	text := "# syntax=docker/dockerfile:1\nFROM a AS b\nRUN --mount=type=cache,target=/x \\\n    # note\n    echo 'a b' \\\n    c\n\nCMD [\"x\", \"y\"]\n"
	ins, err := parseDockerfile(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []instruction{
		{Line: 2, Cmd: "FROM", Args: "a AS b"},
		{Line: 3, Cmd: "RUN", Flags: []string{"--mount=type=cache,target=/x"}, Args: "echo 'a b'  c"},
		{Line: 8, Cmd: "CMD", Args: `["x", "y"]`, Exec: []string{"x", "y"}},
	}
	if fmt.Sprint(ins) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", ins, want)
	}
	if w := shellWords(`A=0 go build -ldflags '-s -w' "x y"`); !slices.Equal(w, []string{"A=0", "go", "build", "-ldflags", "-s -w", "x y"}) {
		t.Errorf("shellWords: %q", w)
	}
	if _, err := parseDockerfile("FROM a\nnot-an instruction\n"); err == nil {
		t.Error("a line that is not an instruction was accepted")
	}
}

func TestDockerfile(t *testing.T) {
	st := readDockerfile(t)
	build, final := st[0], st[len(st)-1]

	t.Run("builder matches go.mod", func(t *testing.T) {
		mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^go (\d+\.\d+(\.\d+)?)\s*$`).FindSubmatch(mod)
		if m == nil {
			t.Fatal("go.mod has no go directive")
		}
		// The official images set GOTOOLCHAIN=local: an older Go than
		// go.mod asks for cannot build, so the tag names go.mod's version.
		if want := "golang:" + string(m[1]); build.Image != want && !strings.HasPrefix(build.Image, want+"-") {
			t.Errorf("build stage FROM %s, want %s (go.mod says go %s)", build.Image, want, m[1])
		}
		if build.Name == "" {
			t.Error("the build stage has no name (FROM ... AS build)")
		}
	})

	t.Run("build flags equal the Makefile's", func(t *testing.T) {
		mk, dk := makefileBuild(t), dockerBuild(t, build)
		if !slices.Equal(mk.Env, dk.Env) || !slices.Equal(mk.Args, dk.Args) {
			t.Errorf("Dockerfile builds with %q %q,\nMakefile with %q %q", dk.Env, dk.Args, mk.Env, mk.Args)
		}
		if !slices.Contains(dk.Env, "CGO_ENABLED=0") {
			t.Error("the build is not static: CGO_ENABLED=0 missing")
		}
	})

	t.Run("runtime base", func(t *testing.T) {
		if final.Image != "scratch" && !strings.HasPrefix(final.Image, "gcr.io/distroless/static") {
			t.Errorf("runtime stage FROM %s, want scratch or gcr.io/distroless/static*", final.Image)
		}
	})

	t.Run("non-root user", func(t *testing.T) {
		users := final.all("USER")
		if len(users) == 0 {
			t.Fatal("runtime stage sets no USER")
		}
		u := users[len(users)-1].Args
		if name, _, _ := strings.Cut(u, ":"); name != "65532" {
			t.Errorf("USER %s, want 65532 (distroless nonroot)", u)
		}
	})

	copied := map[string]bool{} // destinations of COPY in the runtime stage
	for _, in := range final.all("COPY") {
		f := strings.Fields(in.Args)
		copied[f[len(f)-1]] = true
		for _, fl := range in.Flags {
			if strings.HasPrefix(fl, "--chown=") && strings.HasPrefix(fl, "--chown=0") {
				t.Errorf("line %d: files for the runtime user are owned by root", in.Line)
			}
		}
	}

	t.Run("entrypoint", func(t *testing.T) {
		eps := final.all("ENTRYPOINT")
		if len(eps) != 1 || len(eps[0].Exec) != 1 {
			t.Fatalf("want one exec-form ENTRYPOINT naming the binary, got %+v", eps)
		}
		if !copied[eps[0].Exec[0]] {
			t.Errorf("ENTRYPOINT %s is not copied into the runtime stage", eps[0].Exec[0])
		}
		cmds := final.all("CMD")
		if len(cmds) != 1 || len(cmds[0].Exec) == 0 {
			t.Fatalf("want one exec-form CMD, got %+v", cmds)
		}
		if !hasCommand(cmds[0].Exec[0]) {
			t.Errorf("CMD runs %q, which is no guidepub command", cmds[0].Exec[0])
		}
	})

	t.Run("healthcheck", func(t *testing.T) {
		hcs := final.all("HEALTHCHECK")
		if len(hcs) != 1 {
			t.Fatalf("want one HEALTHCHECK, got %d", len(hcs))
		}
		args, ok := strings.CutPrefix(hcs[0].Args, "CMD ")
		if !ok {
			t.Fatalf("HEALTHCHECK %q: want CMD in exec form (there is no shell)", hcs[0].Args)
		}
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
			t.Fatalf("HEALTHCHECK CMD %q is not exec form: %v", args, err)
		}
		if !copied[argv[0]] {
			t.Errorf("HEALTHCHECK runs %s, which is not copied into the runtime stage", argv[0])
		}
		addr := envOf(final)["GUIDEPUB_ADDR"]
		_, port, _ := strings.Cut(addr, ":")
		if want := "http://127.0.0.1:" + port + "/healthz"; port == "" || argv[len(argv)-1] != want {
			t.Errorf("HEALTHCHECK asks %q, want %s (GUIDEPUB_ADDR %q)", argv[len(argv)-1], want, addr)
		}
	})

	t.Run("environment", func(t *testing.T) {
		for _, st := range st {
			if len(st.all("ARG")) > 0 && st.Name != build.Name {
				t.Errorf("stage %s takes build arguments: settings belong in GUIDEPUB_* at run time", st.Image)
			}
		}
		env := envOf(final)
		if len(env) == 0 {
			t.Fatal("runtime stage sets no GUIDEPUB_* defaults")
		}
		for k, v := range env {
			if !strings.HasPrefix(k, "GUIDEPUB_") {
				t.Errorf("ENV %s: configuration is GUIDEPUB_* only", k)
			}
			if looksSecret(k, v) {
				t.Errorf("ENV %s carries a secret; pass secrets at run time", k)
			}
			if strings.HasPrefix(v, "/") && v != "/data" && !strings.HasPrefix(v, "/data/") {
				t.Errorf("ENV %s=%s: the container writes only below /data", k, v)
			}
		}
		checkEnvRead(t, env, nil)
		vols := final.all("VOLUME")
		if len(vols) != 1 || !slices.Equal(vols[0].Exec, []string{"/data"}) {
			t.Errorf("want VOLUME [\"/data\"], got %+v", vols)
		}
	})
}

// envOf returns the ENV settings of a stage (KEY=value form).
func envOf(s stage) map[string]string {
	env := map[string]string{}
	for _, in := range s.all("ENV") {
		for _, w := range shellWords(in.Args) {
			k, v, ok := strings.Cut(w, "=")
			if ok {
				env[k] = v
			}
		}
	}
	return env
}

var secretName = regexp.MustCompile(`(?i)(secret|password|passwd|token|key|credential)`)

// looksSecret reports whether an environment setting names or carries a
// secret: a secret-like name, or a URL with a password in it.
func looksSecret(k, v string) bool {
	if secretName.MatchString(k) {
		return true
	}
	return regexp.MustCompile(`://[^/@\s]*:[^/@\s$]+@`).MatchString(v)
}

// hasCommand reports whether guidepub has the command name.
func hasCommand(name string) bool {
	return command(name) != nil
}

func command(name string) *cli.Command {
	for _, c := range newApp(nil, nil).Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// checkEnvRead fails for an environment variable that no flag reads: of
// the commands named, or of any command when cmds is nil.
func checkEnvRead(t *testing.T, env map[string]string, cmds []string) {
	t.Helper()
	read := map[string]bool{}
	for _, c := range newApp(nil, nil).Commands {
		if cmds != nil && !slices.Contains(cmds, c.Name) {
			continue
		}
		for _, f := range c.Flags {
			if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
				for _, v := range ev.GetEnvVars() {
					read[v] = true
				}
			}
		}
	}
	for k := range env {
		if !read[k] {
			t.Errorf("%s is read by no flag of %v", k, cmdsOrAll(cmds))
		}
	}
}

func cmdsOrAll(cmds []string) any {
	if cmds == nil {
		return "any command"
	}
	return cmds
}

// TestDockerBinaryIsStatic builds the binary with the Dockerfile's command
// and checks that it runs on an image without a C library.
func TestDockerBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole binary; skipped with -short")
	}
	bc := dockerBuild(t, readDockerfile(t)[0])
	out := filepath.Join(t.TempDir(), "guidepub")
	args := append([]string{"build", "-o", out}, bc.Args[1:]...)
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), bc.Env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}

	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %q (%v)", libs, err)
	}
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("the binary has a symbol table: -ldflags -s not applied (%v)", err)
	}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("the binary has DWARF section %s: -ldflags -w not applied", s.Name)
		}
	}

	info, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	// With -trimpath the go command does not record -ldflags; the symbol
	// and DWARF checks above stand for it.
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}

	t.Run("runs as the image runs it", func(t *testing.T) {
		runLikeTheImage(t, out)
	})
}

// runLikeTheImage starts the binary as the image's ENTRYPOINT and CMD
// with the image's environment, /data mapped to a temporary folder and the
// port to a free loopback one; the HEALTHCHECK URL must answer 200, and
// SIGTERM must end the process cleanly.
func runLikeTheImage(t *testing.T, bin string) {
	st := readDockerfile(t)
	build, final := st[0], st[len(st)-1]
	data := t.TempDir()
	// The folders the build stage creates for the volume.
	for _, in := range build.all("RUN") {
		if f := shellWords(in.Args); len(f) > 2 && f[0] == "mkdir" && f[1] == "-p" {
			for _, d := range f[2:] {
				if rel, ok := strings.CutPrefix(d, "/out/data"); ok {
					if err := os.MkdirAll(filepath.Join(data, rel), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	env := os.Environ()
	imageAddr := ""
	for k, v := range envOf(final) {
		if k == "GUIDEPUB_ADDR" {
			imageAddr, v = v, addr
		}
		env = append(env, k+"="+strings.Replace(v, "/data", data, 1))
	}
	cmds := final.all("CMD")
	hcs := final.all("HEALTHCHECK")
	if len(cmds) != 1 || len(hcs) != 1 {
		t.Fatal("want one CMD and one HEALTHCHECK")
	}
	var hc []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(hcs[0].Args, "CMD ")), &hc); err != nil {
		t.Fatal(err)
	}
	_, imagePort, _ := strings.Cut(imageAddr, ":")
	health := strings.Replace(hc[len(hc)-1], "127.0.0.1:"+imagePort, addr, 1)

	var stderr bytes.Buffer
	cmd := exec.Command(bin, cmds[0].Exec...)
	cmd.Env, cmd.Dir, cmd.Stderr = env, data, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	}()

	// Poll as the health check would during its start period.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case werr := <-done:
			t.Fatalf("%s %v exited before it was healthy: %v\n%s", bin, cmds[0].Exec, werr, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the health check %s never answered 200: %v\n%s", health, err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("still running 30 s after SIGTERM")
	}
}

// composeFile is the part of compose.yaml the tests look at.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	User        string            `yaml:"user"`
	ReadOnly    bool              `yaml:"read_only"`
	Deploy      struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(data, &cf); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return cf
}

func TestCompose(t *testing.T) {
	cf := readCompose(t)
	byCommand := map[string][]string{} // guidepub command -> services
	replicas := map[string]int{}
	for name, s := range cf.Services {
		if s.Build == nil && !strings.HasPrefix(s.Image, "guidepub") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if len(s.Command) == 0 || !hasCommand(s.Command[0]) {
				t.Fatalf("command %q is no guidepub command", s.Command)
			}
			if !s.ReadOnly {
				t.Error("read_only: true is missing")
			}
			if uid, _, _ := strings.Cut(s.User, ":"); uid == "" || uid == "0" || uid == "root" {
				t.Errorf("user %q: want the image's non-root user", s.User)
			}
			for k, v := range s.Environment {
				if !strings.HasPrefix(k, "GUIDEPUB_") {
					t.Errorf("%s: configuration is GUIDEPUB_* only", k)
				}
				if k != "GUIDEPUB_STORE" && looksSecret(k, v) {
					t.Errorf("%s carries a secret", k)
				}
			}
			if store := s.Environment["GUIDEPUB_STORE"]; store != "" && !strings.Contains(store, "${POSTGRES_PASSWORD") {
				t.Errorf("GUIDEPUB_STORE %q: the password must come from the environment (${POSTGRES_PASSWORD})", store)
			}
			checkEnvRead(t, s.Environment, s.Command[:1])
		})
		byCommand[s.Command[0]] = append(byCommand[s.Command[0]], name)
		n := max(s.Deploy.Replicas, 1)
		replicas[s.Command[0]] += n
	}
	if replicas["sidecar"] < 2 {
		t.Errorf("want at least two sidecars, got %d", replicas["sidecar"])
	}
	if replicas["watch"] != 1 {
		t.Errorf("want one watcher, got %d", replicas["watch"])
	}
	pg, ok := cf.Services["postgres"]
	if !ok || !strings.HasPrefix(pg.Image, "postgres:") {
		t.Errorf("want a postgres service, got %+v", pg)
	}
	if pw := pg.Environment["POSTGRES_PASSWORD"]; !strings.HasPrefix(pw, "${") {
		t.Errorf("POSTGRES_PASSWORD %q is written in the file", pw)
	}
	for _, s := range cf.Services {
		if st := s.Environment["GUIDEPUB_STORE"]; st != "" && !strings.Contains(st, "@postgres:") {
			t.Errorf("GUIDEPUB_STORE %q does not point at the postgres service", s.Environment["GUIDEPUB_STORE"])
		}
	}
}

// TestComposeNginxConfig checks that the nginx configuration compose.yaml
// mounts is exactly what "guidepub serve --print-config nginx" prints for
// that deployment: the tree the watcher writes, the port nginx publishes,
// the sidecars' name and port.
func TestComposeNginxConfig(t *testing.T) {
	cf := readCompose(t)
	ng, ok := cf.Services["nginx"]
	if !ok {
		t.Fatal("compose.yaml has no nginx service")
	}
	var confFile string
	for _, v := range ng.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && strings.HasPrefix(parts[1], "/etc/nginx/") {
			confFile = parts[0]
		}
	}
	if confFile == "" {
		t.Fatal("nginx mounts no configuration file")
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, confFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(ng.Ports) != 1 {
		t.Fatalf("nginx ports %q: want one", ng.Ports)
	}
	_, listen, _ := strings.Cut(ng.Ports[0], ":")
	var dir string
	for _, s := range cf.Services {
		if len(s.Command) > 0 && s.Command[0] == "watch" {
			dir = s.Environment["GUIDEPUB_OUT"]
		}
	}
	var sidecarPort string
	for name, s := range cf.Services {
		if len(s.Command) > 0 && s.Command[0] == "sidecar" {
			_, sidecarPort, _ = strings.Cut(s.Environment["GUIDEPUB_ADDR"], ":")
			if name != "sidecar" {
				t.Errorf("nginx reaches the sidecars as \"sidecar\", but the service is %q", name)
			}
		}
	}
	args := []string{"guidepub", "serve", "--print-config", "nginx", "--dir", dir, "--addr", listen, "--sidecar", "sidecar:" + sidecarPort}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if stdout.String() != string(got) {
		t.Errorf("%s differs from `%s`; regenerate it with that command", confFile, strings.Join(args, " "))
	}
	header, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(header), strings.Join(args, " ")) {
		t.Errorf("compose.yaml does not show the command that writes %s: %s", confFile, strings.Join(args, " "))
	}
}

// TestDockerignoreKeepsTheModule checks that .dockerignore leaves in the
// build context every file the build reads: Go files, go.mod and go.sum,
// and everything inside a Go package's folder (what //go:embed may take).
func TestDockerignoreKeepsTheModule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(l, "/"))
		}
	}
	ignored := func(rel string) bool {
		for _, p := range patterns {
			// A pattern excludes a path it matches and everything below it.
			for prefix := rel; prefix != "."; prefix = filepath.Dir(prefix) {
				if ok, _ := filepath.Match(p, prefix); ok {
					return true
				}
			}
		}
		return false
	}
	pkgDirs := map[string]bool{}
	err = filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(repoRoot, filepath.Dir(p))
			pkgDirs[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"go.mod", "go.sum"} {
		if ignored(must) {
			t.Errorf(".dockerignore leaves out %s", must)
		}
	}
	err = filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		for dir := filepath.Dir(rel); ; dir = filepath.Dir(dir) {
			if pkgDirs[dir] && !strings.HasSuffix(rel, "_test.go") && ignored(rel) {
				t.Errorf(".dockerignore leaves out %s, inside the Go package %s", rel, dir)
			}
			if dir == "." {
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
