// Package miniotest starts a real S3-compatible store (MinIO, built by
// `make test` into bin/minio and named by MINIO_BIN) for tests, with one
// bucket, on loopback.
package miniotest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Credentials of every server Start starts.
const (
	User   = "flsweep"
	Secret = "flsweep-secret"
	Bucket = "flsweep"
)

// Server is a running MinIO with the bucket Bucket.
type Server struct {
	// BlobURL is the bucket's gocloud URL; the credentials come from the
	// environment (Environ).
	BlobURL string

	bin, dir, port, consolePort string
	cmd                         *exec.Cmd
}

// Environ is the environment a process needs to reach the bucket.
func (s *Server) Environ() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + User, "AWS_SECRET_ACCESS_KEY=" + Secret}
}

// Start starts MinIO for the test and stops it at cleanup. Without
// MINIO_BIN the test is skipped, or fails under FLSWEEP_INTEGRATION=1,
// where `make test` always sets it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv("MINIO_BIN")
	if bin == "" {
		if os.Getenv("FLSWEEP_INTEGRATION") == "1" {
			t.Fatal("MINIO_BIN is unset; `make test` builds bin/minio and sets it")
		}
		t.Skip("MINIO_BIN unset")
	}
	s := &Server{bin: bin, dir: t.TempDir(), port: FreePort(t), consolePort: FreePort(t)}
	s.start(t)
	t.Cleanup(s.Stop)
	endpoint := "http://127.0.0.1:" + s.port
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(User, Secret, ""),
	})
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	s.BlobURL = fmt.Sprintf("s3://%s?endpoint=%s&region=us-east-1&use_path_style=true&disable_https=true", Bucket, endpoint)
	return s
}

// Dir is the server's data directory: an object's data lies under
// Dir()/<bucket>/<key>/.
func (s *Server) Dir() string { return s.dir }

// Stop kills the server (as a crash would); Restart starts it again.
func (s *Server) Stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts a stopped server again on the same port and data
// directory, and waits until it is ready.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t)
}

// start starts MinIO and waits until it answers its health check.
func (s *Server) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.bin, "server", s.dir, "--address", "127.0.0.1:"+s.port, "--console-address", "127.0.0.1:"+s.consolePort, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+User, "MINIO_ROOT_PASSWORD="+Secret)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd = cmd
	endpoint := "http://127.0.0.1:" + s.port
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := http.Get(endpoint + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinIO did not come up: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// FreePort returns a loopback TCP port that was free a moment ago, chosen
// below the kernel's ephemeral range (Linux's default is 32768–60999): a
// server a test stops and starts again on the same port (a MinIO outage, a
// Temporal server restart) could otherwise find the port taken, in
// between, as the local port of some process's outgoing connection (seen
// under load: "bind: address already in use" five seconds after a stop).
func FreePort(t testing.TB) string {
	t.Helper()
	for range 200 {
		port := strconv.Itoa(20000 + rand.IntN(12000))
		if l, err := net.Listen("tcp", "127.0.0.1:"+port); err == nil {
			l.Close()
			return port
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
