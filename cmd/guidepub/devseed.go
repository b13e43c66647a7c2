package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// seedSamples copies the embedded sample bundles into <work>/src (and the
// example into <work>/examples), once: an existing src folder is left
// alone. Their webhooks are pointed at receiver.
func seedSamples(work, receiver string) error {
	src := filepath.Join(work, devSrcDir)
	if _, err := os.Stat(src); err == nil {
		return nil
	}
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
