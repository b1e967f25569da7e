// Command worker serves a sweep's workflows and activities. Start one per
// machine; several workers on several machines serve one sweep, each pulling
// as much work as it has training slots.
//
//	worker [--address host:port] [--namespace ns] [--queue fl] [--train-queue q]
//	       [--blob URL] [--data-dir DIR] [--slots N] [--workflows=false] [--pprof ADDR]
//	       [--tls] [--tls-client-cert-path F --tls-client-key-path F]
//	       [--tls-server-ca-cert-path F] [--tls-server-name N] [--api-key K]
//
// The Temporal client's settings come from the environment too, under the
// names of Temporal's envconfig (TEMPORAL_ADDRESS, TEMPORAL_TLS, TEMPORAL_API_KEY, ...).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof" // --pprof
	"os"
	"runtime"
	"strings"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/flsweep/flsweep/activities"
	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/temporalclient"
	"github.com/flsweep/flsweep/trainer"
	"github.com/flsweep/flsweep/workflows"
)

func main() {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	tc := temporalclient.FromEnv()
	tc.Flags(fs)
	queue := fs.String("queue", conf.Queue(), "task queue for workflows and activities (env "+conf.EnvQueue+")")
	trainQueue := fs.String("train-queue", "", "an extra activity-only task queue to serve, e.g. fl-train for a training fleet")
	blobURL := fs.String("blob", conf.BlobURL(), "blob bucket URL: file:///dir, s3://bucket?region=..&endpoint=.. (env "+conf.EnvBlob+")")
	dataDir := fs.String("data-dir", conf.DataDir(), "directory holding <dataset>/ IDX files (env "+conf.EnvDataDir+")")
	slots := fs.Int("slots", runtime.NumCPU(), "activities run at once (training slots); one per core by default")
	pollers := fs.Int("pollers", 8, "activity task pollers per queue")
	serveWorkflows := fs.Bool("workflows", true, "serve workflows and local activities on --queue (false: activities only)")
	pprofAddr := fs.String("pprof", "", "serve Go's profiles (net/http/pprof) on this address, e.g. localhost:6060; off by default")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: worker [flags]\n\nServes sweep workflows and activities until interrupted.\n\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if *slots < 1 || *pollers < 1 {
		log.Fatalf("worker: --slots = %d and --pollers = %d must be at least 1", *slots, *pollers)
	}

	if *pprofAddr != "" {
		ln, err := net.Listen("tcp", *pprofAddr)
		if err != nil {
			log.Fatalf("worker: --pprof %s: %v", *pprofAddr, err)
		}
		log.Printf("worker: profiles on http://%s/debug/pprof/", ln.Addr())
		go func() { log.Println("worker: pprof:", http.Serve(ln, nil)) }()
	}

	ctx := context.Background()
	st, err := store.Open(ctx, *blobURL)
	if err != nil {
		log.Fatalln("worker:", err)
	}
	defer st.Close()
	// Client and workers are heavyweight: one per process.
	c, err := tc.Dial(ctx, nil)
	if err != nil {
		log.Fatalln("worker:", err)
	}
	defer c.Close()

	// The build this worker records and routes by: the binary's version and
	// what else decides its bits on this machine.
	kernels, err := trainer.KernelChoiceFromEnv()
	if err != nil {
		log.Fatalln("worker:", err)
	}
	build := conf.Version + kernels.Numerics()
	acts := &activities.Activities{Engine: engine.New(st, &engine.Options{DataDir: *dataDir, Version: build, Kernels: kernels})}
	opts := worker.Options{
		MaxConcurrentActivityExecutionSize:      *slots,
		MaxConcurrentActivityTaskPollers:        *pollers,
		MaxConcurrentLocalActivityExecutionSize: *slots,
		WorkerStopTimeout:                       10 * time.Second,
		DisableWorkflowWorker:                   !*serveWorkflows,
		LocalActivityWorkerOnly:                 false,
	}
	// A sweep's points run on queues routed by its bucket and build
	// (steps.Routed): this worker serves its queues and their routed twins.
	id, err := acts.Engine.Identity(ctx)
	if err != nil {
		log.Fatalln("worker: bucket identity:", err)
	}
	var ws []worker.Worker
	serve := func(q string, workflowsToo bool) {
		o := opts
		o.DisableWorkflowWorker = !workflowsToo
		w := worker.New(c, q, o)
		if workflowsToo {
			workflows.Register(w)
		}
		acts.Register(w)
		ws = append(ws, w)
	}
	for _, q := range []string{*queue, *trainQueue} {
		if strings.Contains(q, "@") {
			log.Fatalf("worker: queue %q: names with '@' are reserved for routed queues; choose another --queue or --train-queue", q)
		}
	}
	serve(*queue, *serveWorkflows)
	serve(steps.Routed(*queue, id.String()), *serveWorkflows)
	if *trainQueue != "" && *trainQueue != *queue {
		serve(*trainQueue, false)
		serve(steps.Routed(*trainQueue, id.String()), false)
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			log.Fatalln("worker: start:", err)
		}
	}
	log.Printf("worker %s: serving queue %q (workflows: %v) and %q on %s/%s with %d slots; blob %s (bucket %s); data %s; BLAS %s (products %s), elementwise %s; sweeps of identity %s only",
		build, *queue, *serveWorkflows, *trainQueue, tc.Address, tc.Namespace, *slots, *blobURL, id.Bucket, *dataDir,
		trainer.BLAS, kernels.Core(), trainer.Kernels(), id)
	<-worker.InterruptCh()
	for _, w := range ws {
		w.Stop()
	}
}
