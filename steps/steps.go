// Package steps declares the steps of a sweep as data, and the order of a
// round's phases as code that runs once for both runners.
//
// Each step is a Step[In, Out]: the name of its activity, where it runs, its
// timeout and attempts, and its payload types. Round walks a round's phases
// (plan, query, select, broadcast, train, inspect, aggregate, evaluate,
// commit; docs/architecture.md) through an Exec: the RoundWorkflow's Exec
// runs the steps as Temporal activities, the engine's runs them in-process.
// The phase order is written here and nowhere else.
//
// Workflows depend on nothing heavier than this package (no blob storage, no
// Parquet, no gorgonia); archtest_test.go checks that. Every payload carries
// identifiers, seeds and small summaries only: model weights and every other
// vector stay in blob storage (docs/architecture.md, "State").
package steps

import (
	"encoding/json"
	"time"

	"github.com/flsweep/flsweep/fl"
)

// The steps, with their payload types. Timeouts bound one attempt; the
// attempts bound the retries of anything but bad input and divergence.
var (
	// PlanSweep writes one config.json per point (concurrently) and the
	// plan's pages: 10 minutes holds 20,000 points on a slow bucket.
	PlanSweep    = Step[PlanSweepInput, PlanSweepOutput]{Info{"PlanSweep", Worker, 10 * time.Minute, 5}}
	ReadPlan     = Step[PlanPageInput, PlanPage]{Info{"ReadPlan", Worker, 2 * time.Minute, 5}}
	PreparePoint = Step[PointRef, PrepareOutput]{Info{"PreparePoint", Worker, 30 * time.Minute, 5}}
	FinishPoint  = Step[FinishInput, PointResult]{Info{"FinishPoint", Worker, 30 * time.Minute, 5}}

	// SelectClients stays a local activity (no task-queue round trip), but
	// samplers that read model-sized vectors (clustered-similarity, DivFL)
	// or fit a model (FedCor) may take minutes at large N; the SDK keeps the
	// workflow task alive meanwhile.
	SelectClients  = Step[SelectInput, fl.Plan]{Info{"SelectClients", Server, 10 * time.Minute, 5}}
	QueryClients   = Step[QueryInput, []fl.Answer]{Info{"QueryClients", Worker, time.Hour, 5}}
	Broadcast      = Step[BroadcastInput, BroadcastOutput]{Info{"Broadcast", Worker, 10 * time.Minute, 10}}
	TrainClients   = Step[TrainInput, []fl.ClientSummary]{Info{"TrainClients", Worker, time.Hour, 5}}
	InspectUpdates = Step[InspectInput, []Finding]{Info{"InspectUpdates", Worker, 30 * time.Minute, 5}}
	RefineUpdates  = Step[RefineInput, RefineOutput]{Info{"RefineUpdates", Worker, time.Hour, 5}}
	Aggregate      = Step[AggregateInput, AggregateOutput]{Info{"Aggregate", Worker, 10 * time.Minute, 10}}
	Evaluate       = Step[RoundRef, EvalSummary]{Info{"Evaluate", Worker, 30 * time.Minute, 5}}
	CommitRound    = Step[CommitInput, RoundSummary]{Info{"CommitRound", Server, time.Minute, 5}}

	// RunRound runs a whole small round in one activity: Round with every
	// step called in the worker's process, as the in-process runner does
	// (docs/architecture.md, "The cost of a round"). Its timeout is
	// TrainClients's: the round's training is most of it.
	RunRound = Step[RoundInput, RoundOutput]{Info{"RunRound", Worker, time.Hour, 5}}
)

// All lists every step; the worker registers each as an activity and the
// engine implements each (tests check both).
var All = []Info{
	PlanSweep.Info, ReadPlan.Info, PreparePoint.Info, FinishPoint.Info,
	SelectClients.Info, QueryClients.Info, Broadcast.Info, TrainClients.Info,
	InspectUpdates.Info, RefineUpdates.Info, Aggregate.Info, Evaluate.Info, CommitRound.Info,
	RunRound.Info,
}

// PlanSweepInput carries the spec as the user wrote it; the activity parses
// and validates it again (the worker's registry is the authority).
type PlanSweepInput struct {
	File string `json:"file"`
	Spec []byte `json:"spec"`
	// PageSize, when > 0, makes PlanSweep write the point list to the blob
	// store in pages of PageSize points (ReadPlan reads them) and return
	// only a summary (with Points only for a sweep of at most MaxListed
	// points). 0 returns every point in Points (the in-process runner, and
	// the sweep workflows recorded before the plan was paged).
	PageSize int `json:"page_size,omitempty"`
}

// Plan pages: the default and largest page sizes, and the largest sweep
// whose points PlanSweepOutput.Points lists with a page size set.
const (
	DefaultPageSize = 500
	MaxPageSize     = 2000
	MaxListed       = 100
)

// PlanPageInput names one page of a planned sweep's points: points
// [Page·PageSize, (Page+1)·PageSize) in spec order.
type PlanPageInput struct {
	Sweep    string `json:"sweep"`
	PageSize int    `json:"page_size"`
	Page     int    `json:"page"`
}

// PointInfo describes one point of a planned sweep.
type PointInfo struct {
	Index      int    `json:"index"`
	ID         string `json:"id"`
	Label      string `json:"label"`
	Seed       uint64 `json:"seed"`
	Rounds     int    `json:"rounds"`
	Dataset    string `json:"dataset"`
	Model      string `json:"model"`
	Sampler    string `json:"sampler"`
	Aggregator string `json:"aggregator"`
	Algorithm  string `json:"algorithm"`
}

// PlanPage is one page of a planned sweep's points, and for each the
// status it ended with for good (done or diverged: it has DONE.json), or
// "" when it has not (yet): a resumed sweep starts no workflow for the
// points that have ended.
type PlanPage struct {
	Points []PointInfo `json:"points"`
	Ended  []string    `json:"ended"`
}

// PlanSweepOutput summarises a planned sweep: its name, hash, number of
// points and run settings, and its points in spec order (every point when
// the input's PageSize is 0; else only for a sweep of at most MaxListed
// points, the others being read page by page with ReadPlan).
type PlanSweepOutput struct {
	Name               string      `json:"name"`
	Hash               string      `json:"hash"`
	Count              int         `json:"count,omitempty"`
	PageSize           int         `json:"page_size,omitempty"`
	Points             []PointInfo `json:"points"`
	Concurrency        int         `json:"concurrency"`
	ContinueAsNewEvery int         `json:"continue_as_new_every"`
	TrainQueue         string      `json:"train_queue,omitempty"`
	KeepUpdates        bool        `json:"keep_updates,omitempty"`
	ClientsPerActivity int         `json:"clients_per_activity,omitempty"`
	// Identity is the bucket and build the sweep runs on ("<build>@<bucket
	// id>"): its points run on queues routed by it (Routed), which only
	// workers of that bucket and build poll. Empty in sweeps planned before
	// identities existed.
	Identity string `json:"identity,omitempty"`
}

// Routed returns the task queue of queue's workers with the given identity:
// "<queue>@<identity>", or queue itself for an empty identity.
func Routed(queue, identity string) string {
	if identity == "" || queue == "" {
		return queue
	}
	return queue + "@" + identity
}

// PointRef names a point.
type PointRef struct {
	Sweep string `json:"sweep"`
	Point string `json:"point"`
}

// Phases says which optional phases a point's methods use (the query phase
// needs no flag: a sampler asks for it round by round).
type Phases struct {
	Broadcast bool `json:"broadcast,omitempty"` // the algorithm computes a vector for the round's clients
	Inspect   bool `json:"inspect,omitempty"`   // inspectors look at the updates before aggregation
	Refine    bool `json:"refine,omitempty"`    // the algorithm's server refines some updates before aggregation
	// Probe lists the rounds whose unselected clients train probe updates
	// for the attacks (attack.clients: all), ascending.
	Probe []int `json:"probe,omitempty"`
	// Population is the point's number of clients when Probe is set: a
	// probe round trains every client it did not select, in chunks of
	// ClientsPerActivity as the training does.
	Population int `json:"population,omitempty"`
}

// PrepareOutput is a point's state when its workflow (re)starts.
type PrepareOutput struct {
	Rounds        int     `json:"rounds"`
	EvalEvery     int     `json:"eval_every"`
	LastCommitted int     `json:"last_committed"` // 0 after a fresh start (round 0 is the initial model)
	Done          bool    `json:"done"`
	Status        string  `json:"status,omitempty"`
	TestAcc       float64 `json:"test_acc"` // at LastCommitted's latest evaluation
	NumParams     int     `json:"num_params"`
	DataDigest    string  `json:"data_digest"`
	Phases        Phases  `json:"phases"`
	// ClientsPerRound is the point's clients_per_round: the clients a
	// round selects (on average, for samplers whose count varies). The
	// point workflow runs a round whose clients fit in one activity as one
	// RunRound activity. 0 from builds before RunRound.
	ClientsPerRound int `json:"clients_per_round,omitempty"`
	// Recovered says which committed rounds were withdrawn, and why, when
	// the point resumes from an earlier checkpoint than its last because a
	// stored file was damaged (empty otherwise).
	Recovered string `json:"recovered,omitempty"`
}

// RoundRef names one round of a point. DataDigest is the digest of the data
// the point started with; a worker holding other data refuses the step.
type RoundRef struct {
	PointRef
	Round      int    `json:"round"`
	DataDigest string `json:"data_digest"`
}

// ShouldEval reports whether round r of a point with the given rounds and
// eval_every is evaluated: every eval_every-th round and always the last.
func ShouldEval(r, evalEvery, rounds int) bool {
	return r == rounds || (evalEvery > 0 && r%evalEvery == 0)
}

// SelectInput asks the sampler for round Round's decision, given the answers
// to the questions it asked so far in the round.
type SelectInput struct {
	RoundRef
	Answers []fl.Answer `json:"answers,omitempty"`
	// Note is the last query's fl.Query.Note, handed back to the sampler.
	Note json.RawMessage `json:"note,omitempty"`
}

// QueryInput asks a chunk of clients the round's Query-th question at the
// global model θ^{Round−1}. Vector answers go to blob storage.
type QueryInput struct {
	RoundRef
	Query   int    `json:"query"` // 1-based index within the round
	Ask     fl.Ask `json:"ask"`
	Clients []int  `json:"clients"`
}

func (q QueryInput) Label() string { return label("query "+string(q.Ask)+",", q.Clients, q.Round) }

// BroadcastInput asks the algorithm for the vector the round's clients train
// with, given the selection and every answer so far.
type BroadcastInput struct {
	RoundRef
	Selection fl.Selection `json:"selection"`
	Answers   []fl.Answer  `json:"answers,omitempty"`
}

// BroadcastOutput is the algorithm's decision: ask Query first, or (Query
// nil) the round's broadcast is written (Sent) or there is none this round.
type BroadcastOutput struct {
	Query *fl.Query `json:"query,omitempty"`
	Sent  bool      `json:"sent"`
}

// TrainInput asks a chunk of a round's clients to train. Answers are the
// round's loss answers of these clients: a client's F_k(θ^t) is taken from
// them instead of computed again.
type TrainInput struct {
	RoundRef
	Clients   []int       `json:"clients"`
	Broadcast bool        `json:"broadcast,omitempty"`
	Answers   []fl.Answer `json:"answers,omitempty"`
}

func (t TrainInput) Label() string { return label("train", t.Clients, t.Round) }

// Heartbeat is the progress a training activity reports.
type Heartbeat struct {
	Client int     `json:"client"`
	Step   int     `json:"step"`
	Steps  int     `json:"steps"`
	Loss   float64 `json:"loss"`
}

// RoundPhase is the progress RunRound reports: the phase its round is in
// (the round workflow's current details in a fanned-out round).
type RoundPhase struct {
	Round int    `json:"round"`
	Phase string `json:"phase"`
}

// InspectInput asks the point's inspectors to look at a chunk of the round's
// updates before aggregation.
type InspectInput struct {
	RoundRef
	Clients []int `json:"clients"`
	// Summaries are the clients' summaries as TrainClients returned them,
	// in Clients order: the one copy of them (update files hold the
	// uploads only).
	Summaries []fl.ClientSummary `json:"summaries,omitempty"`
	// Probe asks instead for probe updates of Clients, a chunk of the
	// clients the round did not select, attacked and dropped
	// (attack.clients: all). Broadcast says whether the round sent a
	// broadcast vector, which probes train with.
	Probe     bool `json:"probe,omitempty"`
	Broadcast bool `json:"broadcast,omitempty"`
}

func (i InspectInput) Label() string { return label("inspect", i.Clients, i.Round) }

// Finding is what an inspector reports about one client's update.
type Finding struct {
	Inspector string          `json:"inspector"`
	Client    int             `json:"client"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// AggregateInput asks for round Round's new global model and server state.
type AggregateInput struct {
	RoundRef
	Selection fl.Selection       `json:"selection"`
	Clients   []fl.ClientSummary `json:"clients"` // in Selection.Clients order
	Answers   []fl.Answer        `json:"answers,omitempty"`
	// Refined lists the clients whose refined update (the refine phase's)
	// is aggregated in place of the one they uploaded.
	Refined []int `json:"refined,omitempty"`
}

// RefineInput asks the algorithm's server to refine round Round's updates
// before aggregation (FNR-FL).
type RefineInput struct {
	RoundRef
	Selection fl.Selection       `json:"selection"`
	Clients   []fl.ClientSummary `json:"clients"` // in Selection.Clients order
}

// RefineOutput is the refine phase's decision: the clients whose updates it
// replaced (their refined updates are in blob storage), what it measured
// per client, and the phase's traffic and work.
type RefineOutput struct {
	Refined []int `json:"refined,omitempty"`
	// Clients are per-client values in Selection.Clients order: FNR-FL's
	// accuracy A_i on the public set.
	Clients []RefinedClient `json:"clients,omitempty"`
	// Down and Up count the values the phase sent to and received from
	// clients; Samples the samples it passed forward (and, when training,
	// backward) through models.
	Down    int64 `json:"down,omitempty"`
	Up      int64 `json:"up,omitempty"`
	Samples int64 `json:"samples,omitempty"`
	// Penalty is the refinement's regularisation term summed over its
	// steps (FNR-FL's λ·J; in the paper's form it changes no weight).
	Penalty float64 `json:"penalty,omitempty"`
	// Leak is set when the server's "public" data was the test split.
	Leak bool `json:"leak,omitempty"`
}

// RefinedClient is what the refine phase measured on one client.
type RefinedClient struct {
	Client    int     `json:"client"`
	PublicAcc float64 `json:"public_acc"`
	Refined   bool    `json:"refined,omitempty"`
}

// AggregateOutput identifies the new global model. Superseded lists, per
// client that wrote new client state, the round of the version it replaced:
// the commit drops those no kept checkpoint needs.
type AggregateOutput struct {
	ModelSHA256 string      `json:"model_sha256"`
	Superseded  map[int]int `json:"superseded,omitempty"`
	// Forgotten lists, per client, the version of the sampler's memory of
	// it that the round replaced.
	Forgotten map[int]int `json:"forgotten,omitempty"`
	// Released lists, per section of the server memory ("<owner>/<name>",
	// keys.ServerVector) that the round replaced or dropped, the round of
	// the file that held it.
	Released map[string]int `json:"released,omitempty"`
	// Report is what the algorithm's server decided (its weights, FedEBA+'s
	// angle); nil for algorithms that aggregate by the selection's ω_k.
	Report *fl.AggReport `json:"report,omitempty"`
}

// EvalSummary is the evaluation of a global model; per-client results stay
// in blob storage.
type EvalSummary struct {
	TestLoss float64 `json:"test_loss"`
	TestAcc  float64 `json:"test_acc"`
	// The client-accuracy metrics are over the clients with a local test
	// set, accuracies as fractions (package fairness); 0, and nil for the
	// pointers, when no client has one. The pointers are nil in summaries
	// from builds that did not compute them.
	ClientAccMean    float64  `json:"client_acc_mean"`
	ClientAccVar     float64  `json:"client_acc_var"`
	ClientAccWorst   float64  `json:"client_acc_worst5"`
	ClientAccBest    float64  `json:"client_acc_best5"`
	ClientAccVarPct2 *float64 `json:"client_acc_var_pct2,omitempty"` // 10⁴·ClientAccVar: the variance in %²
	ClientAccStd     *float64 `json:"client_acc_std,omitempty"`
	ClientAccWorst10 *float64 `json:"client_acc_worst10,omitempty"`
	ClientAccBest10  *float64 `json:"client_acc_best10,omitempty"`
	ClientAccCV      *float64 `json:"client_acc_cv,omitempty"`
	ClientAccAngle   *float64 `json:"client_acc_angle,omitempty"` // degrees
	ClientAccKL      *float64 `json:"client_acc_kl,omitempty"`
	// GlobalTrainLoss is Σ_k p_k L_k(θ) over every client's full training
	// set (Fraboni et al. 2022's evaluation metric); nil when not measured.
	GlobalTrainLoss *float64 `json:"global_train_loss,omitempty"`
}

// CommitInput closes a round.
type CommitInput struct {
	RoundRef
	Selection   fl.Selection       `json:"selection"`
	Clients     []fl.ClientSummary `json:"clients"`
	Answers     []fl.Answer        `json:"answers,omitempty"`
	Queries     int                `json:"queries,omitempty"`   // query fan-outs in the round
	Broadcast   bool               `json:"broadcast,omitempty"` // a broadcast vector was sent
	Findings    []Finding          `json:"findings,omitempty"`
	Refine      *RefineOutput      `json:"refine,omitempty"`
	Model       AggregateOutput    `json:"model"`
	Eval        *EvalSummary       `json:"eval,omitempty"`
	KeepUpdates bool               `json:"keep_updates,omitempty"`
}

// RoundSummary is what a point's workflow learns about a committed round.
type RoundSummary struct {
	Round       int          `json:"round"`
	Clients     int          `json:"clients"`
	BatchLoss   float64      `json:"batch_loss"`
	ModelSHA256 string       `json:"model_sha256"`
	Eval        *EvalSummary `json:"eval,omitempty"`
}

// RoundOutput is the result of RunRound: the rounds it committed, in
// order, or (none) FanOut, the activities of the first fan-out of round
// Round that did not fit in one (more than RoundInput.ClientsPerActivity
// clients). Such a round has written nothing that its fanned-out run does
// not overwrite with the same bytes (its selection, queries and broadcast at
// most); the workflow runs it again with its fan-outs.
type RoundOutput struct {
	Rounds []RoundSummary `json:"rounds,omitempty"`
	FanOut int            `json:"fan_out,omitempty"`
}

// RunRoundBatch bounds the work of one RunRound activity that may run
// several rounds (RoundInput.Until): it starts another round only while the
// rounds it ran took less than this. Signals, the point's progress and
// FLRound therefore act and show at most this late (plus one round).
const RunRoundBatch = time.Second

// FinishInput closes a point.
type FinishInput struct {
	PointRef
	Status      string `json:"status"` // done, diverged or stopped
	KeepUpdates bool   `json:"keep_updates,omitempty"`
}

// PointResult is a finished point.
type PointResult struct {
	Point       string  `json:"point"`
	Status      string  `json:"status"`
	RoundsDone  int     `json:"rounds_done"`
	TestAcc     float64 `json:"test_acc"`
	TestLoss    float64 `json:"test_loss"`
	ModelSHA256 string  `json:"model_sha256"`
}

// Point statuses. Done and diverged are final (the point has DONE.json);
// stopped means the point ended early on request with its committed rounds
// kept, and a later run continues it (docs/architecture.md, "Temporal").
const (
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusPaused   = "paused"
	StatusStopped  = "stopped"
	StatusDone     = "done"
	StatusDiverged = "diverged"
	StatusFailed   = "failed"
)

// Application error types that activities return and workflows match.
const (
	ErrTypeInvalid  = "InvalidArgument" // bad input: never retried
	ErrTypeDiverged = "Diverged"        // NaN/Inf: the point's outcome, never retried
	// ErrTypeRefused: a worker of another bucket or build refused the task;
	// retried after a delay, for a worker of the sweep's identity.
	ErrTypeRefused = "Refused"
	// ErrTypeCorrupt: a stored file failed its checks (or is missing
	// although the protocol guarantees it); never retried as is: the point
	// restarts from its last good checkpoint.
	ErrTypeCorrupt = "Corrupt"
)
