// Package miniotest starts a real S3-compatible store (MinIO, built by
// `make test` into bin/minio and named by MINIO_BIN) for tests, with one
// bucket, on loopback.
package miniotest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
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
	port := FreePort(t)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", "127.0.0.1:"+port, "--console-address", "127.0.0.1:"+FreePort(t), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+User, "MINIO_ROOT_PASSWORD="+Secret)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	endpoint := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := http.Get(endpoint + "/minio/health/live")
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinIO did not come up: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(User, Secret, ""),
	})
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return &Server{BlobURL: fmt.Sprintf("s3://%s?endpoint=%s&region=us-east-1&use_path_style=true&disable_https=true", Bucket, endpoint)}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
