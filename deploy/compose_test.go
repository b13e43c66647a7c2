package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

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
	Healthcheck map[string]any    `yaml:"healthcheck"`
	Deploy      struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(data, &cf); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return cf
}

var helpEnv = regexp.MustCompile(`\$(GUIDEPUB_[A-Z_]+)`)

// envRead returns the environment variables command reads, from its help.
func envRead(t *testing.T, command string) map[string]bool {
	t.Helper()
	out, err := exec.Command(binary(t), command, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("guidepub %s --help: %v\n%s", command, err, out)
	}
	read := map[string]bool{}
	for _, m := range helpEnv.FindAllStringSubmatch(string(out), -1) {
		read[m[1]] = true
	}
	return read
}

var secretName = regexp.MustCompile(`(?i)(secret|password|passwd|token|key|credential)`)

// looksSecret reports whether an environment setting names or carries a
// secret: a secret-like name, or a URL with a password in it.
func looksSecret(k, v string) bool {
	return secretName.MatchString(k) || regexp.MustCompile(`://[^/@\s]*:[^/@\s$]+@`).MatchString(v)
}

// TestCompose checks the example deployment: guidepub services use the
// image `make image` builds (nothing is built by compose), read-only and
// non-root, configured only by GUIDEPUB_* variables that their command
// reads, with no secret written in the file; two sidecars, one watcher.
func TestCompose(t *testing.T) {
	cf := readCompose(t)
	replicas := map[string]int{}
	for name, s := range cf.Services {
		if !strings.HasPrefix(s.Image, "guidepub") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if s.Build != nil || s.Image != "guidepub:latest" {
				t.Errorf("image %q build %v: want the image make image builds, guidepub:latest", s.Image, s.Build)
			}
			if len(s.Command) == 0 {
				t.Fatal("no command")
			}
			read := envRead(t, s.Command[0])
			if !s.ReadOnly {
				t.Error("read_only: true is missing")
			}
			if uid, _, _ := strings.Cut(s.User, ":"); uid == "" || uid == "0" || uid == "root" {
				t.Errorf("user %q: want the image's non-root user", s.User)
			}
			if s.Command[0] == "sidecar" && s.Healthcheck != nil {
				t.Errorf("the sidecar overrides the image's health check: %v", s.Healthcheck)
			}
			for k, v := range s.Environment {
				if !strings.HasPrefix(k, "GUIDEPUB_") {
					t.Errorf("%s: configuration is GUIDEPUB_* only", k)
				}
				if !read[k] {
					t.Errorf("%s is read by no flag of guidepub %s", k, s.Command[0])
				}
				if k != "GUIDEPUB_STORE" && looksSecret(k, v) {
					t.Errorf("%s carries a secret", k)
				}
			}
			if store := s.Environment["GUIDEPUB_STORE"]; store != "" && !strings.Contains(store, "${POSTGRES_PASSWORD") {
				t.Errorf("GUIDEPUB_STORE %q: the password must come from the environment", store)
			}
		})
		replicas[s.Command[0]] += max(s.Deploy.Replicas, 1)
	}
	if replicas["sidecar"] < 2 || replicas["watch"] != 1 {
		t.Errorf("want at least two sidecars and one watcher, got %v", replicas)
	}
	pg := cf.Services["postgres"]
	if !strings.HasPrefix(pg.Image, "postgres:") || !strings.HasPrefix(pg.Environment["POSTGRES_PASSWORD"], "${") {
		t.Errorf("want a postgres service whose password comes from the environment, got %+v", pg)
	}
}

// TestDockerfileEnv checks that every GUIDEPUB_* default the image sets is
// read by one of its commands.
func TestDockerfileEnv(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read := map[string]bool{}
	for _, c := range []string{"sidecar", "watch", "serve", "export", "publish", "healthcheck"} {
		for k := range envRead(t, c) {
			read[k] = true
		}
	}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, m := range regexp.MustCompile(`(GUIDEPUB_[A-Z_]+)=`).FindAllStringSubmatch(sc.Text(), -1) {
			n++
			if !read[m[1]] {
				t.Errorf("the Dockerfile sets %s, which no command reads", m[1])
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d GUIDEPUB_ settings in the Dockerfile, want the folders and the address", n)
	}
}

// TestComposeNginxConfig checks that the nginx configuration compose.yaml
// mounts is exactly what "guidepub serve --print-config nginx" prints for
// that deployment.
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
	got, err := os.ReadFile(filepath.Clean(confFile))
	if err != nil || len(ng.Ports) != 1 {
		t.Fatalf("nginx configuration %q (%v), ports %q", confFile, err, ng.Ports)
	}
	_, listen, _ := strings.Cut(ng.Ports[0], ":")
	var dir, sidecarPort string
	for _, s := range cf.Services {
		if len(s.Command) == 0 {
			continue
		}
		switch s.Command[0] {
		case "watch":
			dir = s.Environment["GUIDEPUB_OUT"]
		case "sidecar":
			_, sidecarPort, _ = strings.Cut(s.Environment["GUIDEPUB_ADDR"], ":")
		}
	}
	args := []string{"serve", "--print-config", "nginx", "--dir", dir, "--addr", listen, "--sidecar", "sidecar:" + sidecarPort}
	out, err := exec.Command(binary(t), args...).Output()
	if err != nil {
		t.Fatalf("guidepub %s: %v", strings.Join(args, " "), err)
	}
	if string(out) != string(got) {
		t.Errorf("%s differs from `guidepub %s`; regenerate it with that command", confFile, strings.Join(args, " "))
	}
	header, _ := os.ReadFile("compose.yaml")
	if !strings.Contains(string(header), "guidepub "+strings.Join(args, " ")) {
		t.Errorf("compose.yaml does not show the command that writes %s", confFile)
	}
}
