package integration

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

// TestS3BlobStore runs the integration sweep with its checkpoints and tables
// in a real S3-compatible store (MinIO, built by `make test` into bin/minio),
// as the production deployment does, and compares with the run on a local
// directory: same models, same rows.
func TestS3BlobStore(t *testing.T) {
	bin := os.Getenv("MINIO_BIN")
	if bin == "" {
		if os.Getenv("FLSWEEP_INTEGRATION") == "1" {
			t.Fatal("MINIO_BIN is unset; `make test` builds bin/minio and sets it")
		}
		t.Skip("MINIO_BIN unset")
	}
	want := straightRun(t)
	port := freePort(t)
	const user, secret = "flsweep", "flsweep-secret"
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", "127.0.0.1:"+port, "--console-address", "127.0.0.1:"+freePort(t), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+secret)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	endpoint := "http://127.0.0.1:" + port
	deadline := time.Now().Add(time.Minute)
	for {
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
		Credentials: credentials.NewStaticCredentialsProvider(user, secret, ""),
	})
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("flsweep")}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}

	e := newEnv(t)
	e.blob = ""
	e.blobURL = fmt.Sprintf("s3://flsweep?endpoint=%s&region=us-east-1&use_path_style=true&disable_https=true", endpoint)
	e.environ = []string{"AWS_ACCESS_KEY_ID=" + user, "AWS_SECRET_ACCESS_KEY=" + secret}
	e.worker()
	if out, err := e.starter("sweep", "start", "-f", e.spec("on-s3"), "--wait"); err != nil {
		t.Fatalf("sweep on S3: %v\n%s", err, out)
	}
	sameResults(t, "S3 bucket vs local directory", e.results("on-s3"), want)
	if err := checkQuery(e, "on-s3"); err != nil {
		t.Error(err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
