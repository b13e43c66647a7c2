package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
)

// repoRoot is the module's root, seen from this package's folder.
const repoRoot = ".."

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds guidepub once per test run exactly as `make build` does
// (static, trimmed, stripped) and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guidepub-deploy-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "guidepub")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binPath, "./cmd/guidepub")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if imageTag != "" && imageErr == nil {
		ctrErr(imageEngine, "rmi", "--force", imageTag)
	}
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// engine returns the container engine to test with: podman or docker,
// whichever answers `info`. Without one the test is skipped, or fails under
// GUIDEPUB_TEST_REQUIRE=1.
func engine(t *testing.T) string {
	t.Helper()
	for _, e := range []string{"podman", "docker"} {
		if _, err := exec.LookPath(e); err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exec.CommandContext(ctx, e, "info").Run()
		cancel()
		if err == nil {
			return e
		}
	}
	fixtures.Missing(t, "a container engine", "install podman (Debian: podman runc; see docs/container.md) or run a Docker engine")
	return ""
}

// ctr runs the engine with args and returns its standard output, failing
// the test on an error.
func ctr(t *testing.T, eng string, args ...string) string {
	t.Helper()
	out, err := ctrErr(eng, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", eng, strings.Join(args, " "), err)
	}
	return out
}

func ctrErr(eng string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, eng, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

var (
	imageOnce   sync.Once
	imageEngine string
	imageTag    string
	imageErr    error
)

// image builds the image once per test run with deploy/image.sh (what
// `make image` runs); TestMain removes it when the tests end.
func image(t *testing.T, eng string) string {
	t.Helper()
	bin := binary(t)
	imageOnce.Do(func() {
		imageEngine, imageTag = eng, "localhost/guidepub-test:"+randomName()
		cmd := exec.Command("./image.sh", bin, imageTag)
		cmd.Env = append(os.Environ(), "GUIDEPUB_ENGINE="+eng)
		if out, err := cmd.CombinedOutput(); err != nil {
			imageErr = fmt.Errorf("image.sh: %v\n%s", err, out)
		}
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
	return imageTag
}

func randomName() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
