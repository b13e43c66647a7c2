package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// seedSamples copies the embedded sample bundles into <work>/src (and the
// example into <work>/examples), once, with their webhooks pointed at
// receiver. When src exists, it is left alone but for the webhooks of the
// samples that still point at a receiver of dev on another address (a
// run on another --addr): they are pointed at receiver, and their number
// is returned.
func seedSamples(work, receiver string) (int, error) {
	src := filepath.Join(work, devSrcDir)
	if _, err := os.Stat(src); err == nil {
		return repointSamples(work, receiver)
	}
	return 0, copySamples(work, src, receiver)
}

// copySamples copies the samples into work: src, and the example aside.
func copySamples(work, src, receiver string) error {
	tmp, err := os.MkdirTemp(work, ".seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(fixtures.Bundles, "bundles", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "bundles"), "/")
		if rel == "" {
			return nil
		}
		folder, _, _ := strings.Cut(rel, "/")
		into := devSrcDir
		if folder == devExample {
			into = devExamplesDir
		}
		dst := filepath.Join(tmp, into, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		if path.Base(p) == bundle.FileName {
			if data, err = pointWebhooks(data, receiver); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, devSrcDir), 0o755); err != nil {
		return err
	}
	ex := filepath.Join(work, devExamplesDir)
	if _, err := os.Stat(filepath.Join(tmp, devExamplesDir)); err == nil {
		if err := os.RemoveAll(ex); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, devExamplesDir), ex); err != nil {
			return err
		}
	}
	return os.Rename(filepath.Join(tmp, devSrcDir), src)
}

// repointSamples points at receiver the webhooks of the bundles in work's
// src and examples folders whose only webhook is another receiver of dev
// (http, a loopback host, devReceiverPath), and returns how many it
// changed. Only the address changes in the file, which is replaced
// atomically.
func repointSamples(work, receiver string) (int, error) {
	var guides []string
	for _, dir := range []string{devSrcDir, devExamplesDir} {
		found, err := filepath.Glob(filepath.Join(work, dir, "*", bundle.FileName))
		if err != nil {
			return 0, err
		}
		guides = append(guides, found...)
	}
	moved := 0
	for _, p := range guides {
		data, err := os.ReadFile(p)
		if err != nil {
			return moved, err
		}
		var g struct{ Webhooks []struct{ URL string } }
		if json.Unmarshal(data, &g) != nil || len(g.Webhooks) != 1 || g.Webhooks[0].URL == receiver || !isDevReceiver(g.Webhooks[0].URL) {
			continue // not a sample as dev left it: the user's
		}
		old, _ := json.Marshal(g.Webhooks[0].URL)
		now, _ := json.Marshal(receiver)
		if err := writeFileAtomic(p, bytes.ReplaceAll(data, old, now)); err != nil {
			return moved, err
		}
		moved++
	}
	return moved, nil
}

// isDevReceiver reports whether u is the address of dev's receiver on a
// loopback host.
func isDevReceiver(u string) bool {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "http" || parsed.Path != devReceiverPath || parsed.RawQuery != "" {
		return false
	}
	host := parsed.Hostname()
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// writeFileAtomic replaces p with data (0644) through a temporary file in
// its folder, so the watcher never reads half a guide.json.
func writeFileAtomic(p string, data []byte) error { return writeFileMode(p, data, 0o644) }

// pointWebhooks returns guide.json data with its webhooks replaced by one,
// to url, keeping the first secret (or making one, so deliveries are
// signed).
func pointWebhooks(data []byte, url string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var g map[string]any
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	secret := ""
	if hooks, ok := g["webhooks"].([]any); ok {
		for _, h := range hooks {
			if m, ok := h.(map[string]any); ok {
				if s, ok := m["secret"].(string); ok && s != "" {
					secret = s
					break
				}
			}
		}
	}
	if secret == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		secret = bundle.SecretPrefix + base64.StdEncoding.EncodeToString(key)
	}
	g["webhooks"] = []any{map[string]any{"url": url, "secret": secret}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
