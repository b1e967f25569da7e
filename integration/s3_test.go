package integration

import (
	"testing"

	"github.com/flsweep/flsweep/store/miniotest"
)

// TestS3BlobStore runs the integration sweep with its checkpoints and tables
// in a real S3-compatible store (MinIO, built by `make test` into bin/minio),
// as the production deployment does, and compares with the run on a local
// directory: same models, same rows.
func TestS3BlobStore(t *testing.T) {
	requireEnv(t)
	srv := miniotest.Start(t)
	want := straightRun(t)

	e := newEnv(t)
	e.blob = ""
	e.blobURL = srv.BlobURL
	e.environ = srv.Environ()
	e.worker()
	if out, err := e.starter("sweep", "start", "-f", e.spec("on-s3"), "--wait"); err != nil {
		t.Fatalf("sweep on S3: %v\n%s", err, out)
	}
	sameResults(t, "S3 bucket vs local directory", e.results("on-s3"), want)
	if err := checkQuery(e, "on-s3"); err != nil {
		t.Error(err)
	}
}
