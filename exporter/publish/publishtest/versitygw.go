// Package publishtest runs an S3-compatible server (versitygw) for tests
// and benchmarks of publishing, skipping (or failing under
// GUIDEPUB_TEST_REQUIRE=1) where it is not installed.
package publishtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // s3:// URLs

	"github.com/guidepub/guidepub/fixtures"
)

// Store is a versitygw process that a test can stop and start again on
// the same address and folder.
type Store struct {
	t              testing.TB
	bin, addr, dir string
	Endpoint       string // http://127.0.0.1:port
	access         string
	Secret         string // the secret key the AWS SDK is given
	cmd            *exec.Cmd
	exited         chan struct{}
	logs           *bytes.Buffer
}

// StartStore starts versitygw (POSIX backend) on a random loopback port,
// with its access keys in the environment for the AWS SDK; it is killed when the test ends.
func StartStore(t testing.TB) *Store {
	t.Helper()
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		bin = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "versitygw")
		if _, err := os.Stat(bin); err != nil {
			fixtures.Missing(t, "versitygw", "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Store{t: t, bin: bin, addr: addr, dir: t.TempDir(), Endpoint: "http://" + addr,
		access: "guidepubtest", Secret: fmt.Sprintf("secret-%d", time.Now().UnixNano())}
	t.Setenv("AWS_ACCESS_KEY_ID", s.access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.Secret)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	s.Start(s.Secret)
	t.Cleanup(s.Stop)
	return s
}

// Start runs the server with secret as its secret key and waits until it
// answers.
func (s *Store) Start(secret string) {
	t := s.t
	t.Helper()
	s.logs = &bytes.Buffer{}
	s.cmd = exec.Command(s.bin, "--port", s.addr, "--access", s.access, "--secret", secret, "--quiet", "posix", s.dir)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		select {
		case <-s.exited:
			t.Fatalf("versitygw exited: %s", s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw does not answer on %s: %s", s.addr, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (as an outage would) and waits for it to exit.
func (s *Store) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// NewBucket creates bucket name on the server and opens it.
func NewBucket(t testing.TB, endpoint, name string) *blob.Bucket {
	t.Helper()
	ctx := context.Background()
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}, nil
		}),
	})
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	b, err := blob.OpenBucket(ctx, "s3://"+name+"?endpoint="+endpoint+"&use_path_style=true&disable_https=true&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
