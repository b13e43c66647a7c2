package publish

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
)

// helperEnv names the mode of this test binary run as a helper process.
const helperEnv = "GUIDEPUB_LIVE_HELPER"

// TestMain runs the helper process when asked, else the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := liveHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// liveHelper exports the tree named by the environment and records it in
// the outbox ("record"), or only says that an export is under way
// ("exporting"), then prints "ready" and waits to be killed before any
// upload.
func liveHelper(mode string) error {
	src, out, priv, bucketURL := os.Getenv("HELPER_SRC"), os.Getenv("HELPER_OUT"), os.Getenv("HELPER_PRIVATE"), os.Getenv("HELPER_BUCKET")
	ctx := context.Background()
	b, err := OpenBucket(ctx, bucketURL)
	if err != nil {
		return err
	}
	cfg := DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.OutboxDir = afero.NewOsFs(), out, b, filepath.Join(priv, "outbox")
	l, err := NewLive(context.Background(), cfg)
	if err != nil {
		return err
	}
	ecfg := exporter.DefaultConfig()
	osfs := afero.NewOsFs()
	ecfg.Src, ecfg.SrcDir, ecfg.Out, ecfg.OutDir, ecfg.Private, ecfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	ex, err := exporter.New(ecfg)
	if err != nil {
		return err
	}
	if _, err := l.Exporting(context.Background(), ""); err != nil {
		return err
	}
	rep, err := ex.ExportAll(ctx)
	if err != nil {
		return err
	}
	if mode == "record" {
		for _, g := range rep.Guides {
			if err := l.Record(g); err != nil {
				return err
			}
		}
		// What follows in a real run removes the intent: recorded changes
		// need no reconcile.
		for _, name := range mustReadIntents(cfg.OutboxDir) {
			outbox{afero.NewOsFs(), cfg.OutboxDir}.remove(name)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	return nil
}

// TestLiveKilled: a process killed (SIGKILL) after an export and before
// its upload loses nothing: the next process uploads what the outbox
// recorded, or, when the export had not been recorded yet, reconciles the
// tree first.
func TestLiveKilled(t *testing.T) {
	st := startStore(t)
	for _, mode := range []string{"record", "exporting"} {
		t.Run(mode, func(t *testing.T) {
			b := newBucket(t, st.Endpoint, "killed-"+mode)
			s := newExportSite(t, "301-king-st-e", "ansi-us-house")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HELPER_SRC="+s.src, "HELPER_OUT="+s.out, "HELPER_PRIVATE="+s.priv,
				"HELPER_BUCKET=s3://killed-"+mode+"?endpoint="+st.Endpoint+"&use_path_style=true&disable_https=true&region=us-east-1")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if strings.TrimSpace(line) != "ready" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("helper: %q %s", line, stderr.String())
			}
			cmd.Process.Kill() // SIGKILL: no clean-up runs
			cmd.Wait()
			if n := len(keys(t, b)); n != 0 {
				t.Fatalf("%d objects uploaded before the kill", n)
			}

			l, err := NewLive(context.Background(), s.liveConfig(b, nil))
			if err != nil {
				t.Fatal(err)
			}
			runLive(t, l)
			idle(t, l, 60*time.Second)
			sameAsReconcile(t, s, b)
			statusesComplete(t, b, s.out)
			if left := mustReadIntents(l.cfg.OutboxDir); len(left) != 0 {
				t.Errorf("intents left: %v", left)
			}
		})
	}
}

// mustReadIntents returns the intent files in dir.
func mustReadIntents(dir string) []string {
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		if len(de.Name()) > len(intentPrefix) && de.Name()[:len(intentPrefix)] == intentPrefix {
			out = append(out, de.Name())
		}
	}
	return out
}

// TestReconcileKeepsNewIntents: the reconcile after an interrupted export
// removes the intents the last process left, not those of exports this
// process has under way (whose crash must still be noticed).
func TestReconcileKeepsNewIntents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out, outbox := filepath.Join(dir, "public"), filepath.Join(dir, "outbox")
	os.MkdirAll(filepath.Join(out, "v1/data"), 0o755)
	os.WriteFile(filepath.Join(out, "v1/data/status"), []byte(`{"status":"ready"}`), 0o644)
	os.MkdirAll(outbox, 0o700)
	os.WriteFile(filepath.Join(outbox, intentPrefix+"1-old.json"), nil, 0o600)
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.OutboxDir = afero.NewOsFs(), out, b, outbox
	l, err := NewLive(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Exporting(context.Background(), ""); err != nil { // this process's export, under way
		t.Fatal(err)
	}
	runLive(t, l)
	idle(t, l, 10*time.Second)
	left := mustReadIntents(outbox)
	if len(left) != 1 || strings.Contains(left[0], "old") {
		t.Fatalf("intents after the reconcile: %v", left)
	}
	if ok, _ := b.Exists(ctx, "v1/data/status"); !ok {
		t.Fatal("the reconcile uploaded nothing")
	}
}
