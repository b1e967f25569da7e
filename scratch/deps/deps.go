// Package deps pins every third-party package the project imports, so that
// go.mod and go.sum hold the full module graph while packages are written.
package deps

import (
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/stretchr/testify/require"
	_ "github.com/stretchr/testify/suite"
	_ "go.temporal.io/api/enums/v1"
	_ "go.temporal.io/api/operatorservice/v1"
	_ "go.temporal.io/sdk/activity"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/temporal"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
	_ "go.temporal.io/sdk/workflow"
	_ "gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
	_ "gocloud.dev/gcerrors"
	_ "golang.org/x/sync/errgroup"
	_ "golang.org/x/sync/singleflight"
	_ "gopkg.in/yaml.v3"
	_ "gorgonia.org/gorgonia"
	_ "gorgonia.org/tensor"
)
