package deploy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
)

// forward accepts connections on every address of the host, on a free
// port, and forwards each to target (a loopback address): the pods, on
// podman's bridge, reach the host's PostgreSQL and versitygw through it.
// It returns the port.
func forward(t *testing.T, target string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go io.Copy(u, c)
				io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// bridgeGateway returns the host's address on podman's default network,
// the one the test plays the pods on (kube play's own default,
// podman-default-kube-network, may not exist before the first play).
func bridgeGateway(t *testing.T) string {
	t.Helper()
	out := ctr(t, "podman", "network", "inspect", "podman", "--format", "{{range .Subnets}}{{.Gateway}}{{end}}")
	gw := strings.TrimSpace(out)
	if net.ParseIP(gw) == nil {
		t.Fatalf("podman's default network has no gateway: %q", out)
	}
	return gw
}

// manifest reads a manifest of deploy/kubernetes with edits: each pair of
// edits replaces the first string by the second, and must match.
func manifest(t *testing.T, name string, edits ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%s has no %q to replace", name, edits[i])
		}
		s = strings.ReplaceAll(s, edits[i], edits[i+1])
	}
	return s
}

// podIPs returns the address of each running pod whose name starts with
// prefix.
func podIPs(t *testing.T, prefix string) []string {
	t.Helper()
	var ips []string
	for _, pod := range strings.Fields(ctr(t, "podman", "pod", "ps", "--format", "{{.Name}}")) {
		if !strings.HasPrefix(pod, prefix) {
			continue
		}
		infra := strings.TrimSpace(ctr(t, "podman", "pod", "inspect", pod, "--format", "{{.InfraContainerID}}"))
		ip := strings.TrimSpace(ctr(t, "podman", "inspect", infra, "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"))
		if ip != "" {
			ips = append(ips, ip)
		}
	}
	return ips
}

// TestKubePlay plays deploy/kubernetes with podman kube play against
// versitygw and PostgreSQL on this machine: the watcher (its StatefulSet
// given as the Deployment podman 4.3 plays) exports the fixtures from the
// bundles' volume into both buckets, and each of the sidecar Deployment's
// two replicas, with no volume, answers the Portal API's event object and
// a private document from the private bucket, alike.
func TestKubePlay(t *testing.T) {
	eng := engine(t)
	if eng != "podman" {
		fixtures.Missing(t, "podman", "podman kube play plays the manifests (Debian: podman runc catatonit)")
	}
	img := image(t, eng)
	dsn := storetest.Postgres(t)
	st := publishtest.StartStore(t)
	priv := publishtest.NewBucket(t, st.Endpoint, "kube-private")
	publishtest.NewBucket(t, st.Endpoint, "kube-public")
	gw := bridgeGateway(t)
	s3 := fmt.Sprintf("http://%s:%d", gw, forward(t, strings.TrimPrefix(st.Endpoint, "http://")))
	pg, _ := url.Parse(dsn)
	storeHost := pg.Host
	pg.Host = fmt.Sprintf("%s:%d", gw, forward(t, storeHost))
	bucketURL := func(name string) string {
		return "s3://" + name + "?endpoint=" + s3 + "&use_path_style=true&disable_https=true&region=us-east-1"
	}

	// The bundles' volume, filled with the fixtures as an uploader would.
	suffix := randomName()
	volume := "guidepub-bundles-" + suffix
	ctr(t, eng, "volume", "create", volume)
	t.Cleanup(func() { ctrErr(eng, "volume", "rm", "--force", volume) })
	mount := strings.TrimSpace(ctr(t, eng, "volume", "inspect", volume, "--format", "{{.Mountpoint}}"))
	if err := os.CopyFS(mount, os.DirFS(fixtures.BundlesDir())); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(mount, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[fi.IsDir()])
		}
		return err
	})

	// The Secret as podman takes one (a JSON map of base64 values): played
	// from secret.yaml it would be stored as YAML, which podman 4.3's
	// secretRef cannot read.
	secret := "guidepub-secrets-" + suffix
	values := map[string]string{}
	for k, v := range map[string]string{"GUIDEPUB_STORE": pg.String(), "AWS_ACCESS_KEY_ID": os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY": st.Secret} {
		values[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	secretJSON, _ := json.Marshal(values)
	cmd := exec.Command(eng, "secret", "create", secret, "-")
	cmd.Stdin = strings.NewReader(string(secretJSON))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("podman secret create: %v\n%s", err, out)
	}
	t.Cleanup(func() { ctrErr(eng, "secret", "rm", secret) })

	config := manifest(t, "config.yaml",
		"s3://guidepub-private?region=eu-west-1", bucketURL("kube-private"),
		"s3://guidepub-public?region=eu-west-1", bucketURL("kube-public"),
		"name: guidepub-config", "name: guidepub-config-"+suffix)
	rename := []string{"image: guidepub:latest", "image: " + img, "name: guidepub-config", "name: guidepub-config-" + suffix,
		"name: guidepub-secrets", "name: " + secret}
	watcher := manifest(t, "watcher.yaml", append(rename, "kind: StatefulSet", "kind: Deployment",
		"  serviceName: guidepub-watcher\n", "", "claimName: guidepub-bundles", "claimName: "+volume,
		"name: guidepub-watcher", "name: guidepub-watcher-"+suffix, "- 5s", "- 1s")...)
	sidecar := manifest(t, "sidecar.yaml", append(rename, "name: guidepub-sidecar", "name: guidepub-sidecar-"+suffix)...)
	play := filepath.Join(t.TempDir(), "play.yaml")
	if err := os.WriteFile(play, []byte(config+"\n---\n"+watcher+"\n---\n"+sidecar), 0o644); err != nil {
		t.Fatal(err)
	}
	ctr(t, eng, "kube", "play", "--network", "podman", play)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := ctrErr(eng, "ps", "-a", "--format", "{{.Names}} {{.Status}}")
			t.Logf("containers:\n%s", out)
			for _, name := range strings.Fields(out) {
				if strings.HasPrefix(name, "guidepub-") && !strings.Contains(name, "infra") {
					t.Logf("%s:\n%s", name, logs(eng, name))
				}
			}
		}
		ctrErr(eng, "kube", "down", play)
	})

	waitFor(t, "the watcher's records in the private bucket", 3*time.Minute, func() bool {
		for _, id := range []string{"gKT301KINGE1", "gUS123MAPLE", "gMTL4321DENIS", "gLDN-NOTDRAFTED"} {
			if ok, _ := priv.Exists(context.Background(), "exported/"+id+".json"); !ok {
				return false
			}
		}
		return true
	})

	sidecars := podIPs(t, "guidepub-sidecar-"+suffix)
	if len(sidecars) != 2 {
		t.Fatalf("%d sidecar pods, want the Deployment's 2", len(sidecars))
	}
	for _, ip := range sidecars {
		waitFor(t, "sidecar "+ip+" ready", time.Minute, func() bool {
			resp, err := http.Get("http://" + ip + ":8080/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	out := ctr(t, eng, "run", "--rm", "--read-only", "--network", "host", "-e", "GUIDEPUB_STORE="+dsn, img,
		"token", "create", "--owner", "user-1001", "--scopes", "guide.events", "--json")
	var cred struct{ AppID, Token string }
	if err := json.Unmarshal([]byte(out), &cred); err != nil || cred.Token == "" {
		t.Fatalf("token create printed %q (%v)", out, err)
	}
	var answers []string
	for _, ip := range sidecars {
		code, body := portal(t, "GET", "http://"+ip+":8080/api/v1/guides/gKT301KINGE1/events/ready/object", cred.AppID, cred.Token)
		if code != 200 {
			t.Fatalf("event object from %s: %d %s", ip, code, body)
		}
		var ev map[string]any
		json.Unmarshal([]byte(body), &ev)
		token, _ := ev["authtoken"].(string)
		delete(ev, "authtoken")
		m := regexp.MustCompile(`/private/gKT301KINGE1/[^"?]+`).FindString(body)
		if m == "" {
			t.Fatalf("no private document in the event: %s", body)
		}
		resp, err := http.Get("http://" + ip + ":8080" + m + "?accessToken=" + token)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(doc) == 0 {
			t.Fatalf("%s from %s: %d", m, ip, resp.StatusCode)
		}
		evJSON, _ := json.Marshal(ev)
		answers = append(answers, fmt.Sprintf("%s %s %d", evJSON, resp.Header.Get("ETag"), len(doc)))
	}
	if answers[0] != answers[1] {
		t.Errorf("the two sidecars answer differently:\n%s\n%s", answers[0], answers[1])
	}
}
