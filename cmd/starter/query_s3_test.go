package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flsweep/flsweep/report/reporttest"
	"github.com/flsweep/flsweep/store"
)

// TestQueryS3: `starter query --all` over a real S3 bucket (MinIO, built
// by `make test` into bin/minio and named by MINIO_BIN) answers as over a
// local directory, the empty sweep skipped; and `starter report` reads a
// sweep from that bucket as from a local one.
func TestQueryS3(t *testing.T) {
	bin := os.Getenv("MINIO_BIN")
	if bin == "" {
		if os.Getenv("FLSWEEP_INTEGRATION") == "1" {
			t.Fatal("MINIO_BIN is unset; `make test` builds bin/minio and sets it")
		}
		t.Skip("MINIO_BIN unset")
	}
	const user, secret = "flsweep", "flsweep-secret"
	port := freeQueryPort(t)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", "127.0.0.1:"+port, "--console-address", "127.0.0.1:"+freeQueryPort(t), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+secret)
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
		Credentials: credentials.NewStaticCredentialsProvider(user, secret, ""),
	})
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("flsweep")}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", user)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	g := &globals{blob: fmt.Sprintf("s3://flsweep?endpoint=%s&region=us-east-1&use_path_style=true&disable_https=true", endpoint), out: &bytes.Buffer{}}
	st, err := store.Open(t.Context(), g.blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writeQuerySweeps(t, st)
	var stderr bytes.Buffer
	if err := runQuery(t.Context(), g, &stderr, querySel{all: true, flag: "--sweep"}, defaultQuerySweeps, formatTable); err != nil {
		t.Fatal(err)
	}
	if got := g.out.(*bytes.Buffer).String(); got != wantAcrossSweeps {
		t.Errorf("query --all on S3 printed\n%s\nwant\n%s", got, wantAcrossSweeps)
	}
	if got, want := stderr.String(), "starter: skipped 1 sweeps with no tables yet: empty\n"; got != want {
		t.Errorf("query --all on S3 said on stderr %q; want %q", got, want)
	}
	if err := reporttest.Write(t.Context(), g.blob); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, errOut bytes.Buffer
	if err := execute(t.Context(), root(), []string{"report", reporttest.Name, "-o", out, "--blob", g.blob}, &stdout, &errOut); err != nil {
		t.Fatalf("starter report on S3: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(stdout.String(), "8 points (3 unfinished), 4 methods") {
		t.Errorf("starter report on S3 printed %q; want the fixture's 8 points, 3 unfinished, 4 methods", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Errorf("starter report on S3 wrote no page: %v", err)
	}
}

func freeQueryPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
