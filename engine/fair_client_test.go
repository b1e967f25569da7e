package engine

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/steps"
)

// fairClientSpec runs the client-side fairness baselines on the synthetic
// dataset: PropFair with the defaults (M = thres = 0.2) and with M = 5 and
// huber, FedFV with τ = 2 (so its external projection runs from round 3,
// or 2 with external: current) in both windows; 4 points, 6 rounds, 12
// clients, 4 per round. client_losses is off: FedFV's losses before
// training are measured because its server reads them.
const fairClientSpec = `
name: fair
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 6
clients_per_round: 4
eval_every: 2
checkpoint_every: 3
metrics: {client_losses: false}
seeds: [3]
grid:
  algorithm:
    - propfair
    - {name: propfair, m: 5, huber: true}
    - {name: fedfv, tau: 2}
    - {name: fedfv, tau: 2, external: current}
`

var fairClientLabels = []string{"algorithm=propfair ", "propfair(huber=true,m=5)", "fedfv(tau=2)", "fedfv(external=current,tau=2)"}

// TestFairClientDeterministic: PropFair and FedFV give bit-identical models
// and rows run twice, run step by step one client per activity, and
// crashed mid-round and resumed; the four points end with different models.
func TestFairClientDeterministic(t *testing.T) {
	_, plan, want := runSpec(t, fairClientSpec, nil)
	if len(plan.Points) != len(fairClientLabels) {
		t.Fatalf("%d points; want %d", len(plan.Points), len(fairClientLabels))
	}
	for _, l := range fairClientLabels {
		pointByLabel(t, plan, l)
	}
	checkDeterministic(t, fairClientSpec, plan, want)
}

// TestFedFVEngineState: FedFV's trained clients report F_k(θ^t) although
// the point does not ask for client losses (PropFair's do not), and the
// server state of each kept round remembers exactly the clients a later
// window can read, each at the round it last trained in: after round t,
// those last seen in t−τ+1 … t ("previous") or t−τ+2 … t ("current").
func TestFedFVEngineState(t *testing.T) {
	e, plan, s := runSpec(t, fairClientSpec, nil)
	ctx := context.Background()
	for _, p := range plan.Points {
		fedfv := strings.Contains(p.Label, "fedfv")
		trained := 0
		for _, c := range s.Clients {
			if c.Point == p.ID && c.Selected {
				trained++
				if (c.TrainLossBefore != nil) != fedfv {
					t.Errorf("%s round %d client %d: loss before training %v; want one only for fedfv", p.Label, c.Round, c.Client, c.TrainLossBefore)
				}
			}
		}
		if trained != 6*4 {
			t.Errorf("%s: %d clients trained; want 24", p.Label, trained)
		}
	}
	for _, tt := range []struct {
		label string
		keep  int // after round t, keep the clients last seen in round t − keep or later
	}{
		{"fedfv(tau=2)", 1},
		{"fedfv(external=current,tau=2)", 0},
	} {
		id := pointByLabel(t, plan, tt.label)
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
		if err != nil {
			t.Fatal(err)
		}
		files, err := e.Store.List(ctx, env.keys.ServerVectors())
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}      // the server-memory files the kept checkpoints name
		for _, q := range []int{3, 6} { // the kept checkpoints after round 0
			last := map[int]int{}
			for _, c := range s.Clients {
				if c.Point == id && c.Selected && int(c.Round) <= q {
					last[int(c.Client)] = int(c.Round)
				}
			}
			want := map[int]int{}
			for k, r := range last {
				if r >= q-tt.keep {
					want[k] = r
				}
			}
			st, err := e.loadFullState(ctx, env, q)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Seen map[int]int `json:"seen"`
			}
			if err := st.Algorithm.DecodeMeta(&m); err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || !maps.Equal(m.Seen, want) || len(st.Algorithm.Vectors) != len(want) {
				t.Errorf("%s round %d: state remembers %v in %d vectors; want %v", tt.label, q, m.Seen, len(st.Algorithm.Vectors), want)
			}
			// The history is server memory: what the selection and
			// training steps read (state.bin) holds none, and each update
			// stays in the file of the round the client trained in.
			part, err := e.loadState(ctx, env, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(part.Algorithm.Vectors) != 0 {
				t.Errorf("%s round %d: state.bin holds %d algorithm vectors; want them all in server memory", tt.label, q, len(part.Algorithm.Vectors))
			}
			for k, r := range want {
				section := "algorithm/g/" + strconv.Itoa(k)
				if st.Held[section] != r {
					t.Errorf("%s round %d: %s is held in round %d's file (%v); want %d, the round client %d trained in", tt.label, q, section, st.Held[section], st.Held, r, k)
				}
				key, err := env.keys.ServerVector(section, r)
				if err != nil {
					t.Fatal(err)
				}
				named[key] = true
			}
		}
		// Rounds not kept leave no server memory behind.
		if len(files) != len(named) {
			t.Errorf("%s: %d server-memory files are left %v; want the %d the kept checkpoints name", tt.label, len(files), files, len(named))
		}
		for _, key := range files {
			if !named[key] {
				t.Errorf("%s: %s is left, and no kept checkpoint names it", tt.label, key)
			}
		}
	}
}
