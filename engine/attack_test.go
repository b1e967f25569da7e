package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// attackBase runs one algorithm of each kind the attacks meet: FedAvg,
// SCAFFOLD and FedDyn (a linear term), FedDC
// (whose upload carries its drift) and MOON (outside the attacks' model),
// on the synthetic dataset: 5 points, 4 rounds, 8 clients, 3 per round,
// m = 4 local steps of 16.
const attackBase = `
name: atk
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.05, batch_size: 16, local_steps: 4}
rounds: 4
clients_per_round: 3
eval_every: 2
checkpoint_every: 2
seeds: [5]
grid:
  algorithm:
    - fedavg
    - scaffold
    - {name: feddyn, alpha: 0.1}
    - feddc
    - {name: moon, mu: 1}
`

// attackSpec is attackBase with attacks at rounds 2 and 3 (round 3 is where crashAndResume crashes).
const attackSpec = attackBase + `
attack: {methods: [rlu, llg+, idlg], rounds: [2, 3], aux_per_class: 20}
`

// TestAttacks: the attacks read the updates and change nothing (the
// models are those of the same sweep without the attack block); every
// selected client of an attacked round gets one row per method, scored
// against the labels it processed; RLU recovers most of them on these
// untrained models; iDLG, for a batch of one, does not apply; MOON's rows
// say the attacks do not model it. The rows are deterministic and survive
// crashes.
func TestAttacks(t *testing.T) {
	_, plainPlan, plain := runSpec(t, attackBase, nil)
	_, plan, got := runSpec(t, attackSpec, nil)
	for _, p := range plan.Points {
		alg := strings.Fields(p.Label)[0]
		want := models(plain, pointByLabel(t, plainPlan, alg))
		if g := models(got, p.ID); !equalStrings(g, want) {
			t.Errorf("%s: models with attacks %v; without %v", p.Label, g, want)
		}
	}
	byPoint := map[string][]store.AttackRow{}
	for _, a := range got.Attacks {
		byPoint[a.Point] = append(byPoint[a.Point], a)
	}
	trained := map[[3]int32]int32{} // point index, round, client → samples
	idx := map[string]int32{}
	for i, p := range plan.Points {
		idx[p.ID] = int32(i)
	}
	for _, c := range got.Clients {
		if c.Selected {
			trained[[3]int32{idx[c.Point], c.Round, c.Client}] = *c.TrainSamples
		}
	}
	for _, p := range plan.Points {
		rows := byPoint[p.ID]
		if len(rows) != 2*3*3 {
			t.Errorf("%s: %d attack rows; want 2 rounds × 3 clients × 3 methods", p.Label, len(rows))
		}
		moon := strings.Contains(p.Label, "moon")
		var rlu, n float64
		for _, a := range rows {
			samples, ok := trained[[3]int32{idx[a.Point], a.Round, a.Client}]
			if !ok || (a.Round != 2 && a.Round != 3) {
				t.Errorf("%s: attacked client %d in round %d, which did not train it or is not attacked", p.Label, a.Client, a.Round)
			}
			sum := int32(0)
			for _, c := range a.TrueCounts {
				sum += c
			}
			if sum != samples || a.Samples != samples || a.LocalSteps != 4 || a.BatchSize != 16 || a.AuxPerClass != 20 {
				t.Errorf("%s: row %+v: true counts sum to %d, trained on %d; want equal, m = 4, |B| = 16, aux 20", p.Label, a, sum, samples)
			}
			if a.Modelled == moon {
				t.Errorf("%s: modelled = %v", p.Label, a.Modelled)
			}
			if (a.Round == 2) != (a.TestAcc != nil) {
				t.Errorf("%s round %d: test_acc %v; want the round's evaluation (rounds 2 and 4 only)", p.Label, a.Round, a.TestAcc)
			}
			switch a.Method {
			case "idlg":
				if a.NotApplicable == "" || a.CAcc != nil || len(a.Counts) != 0 {
					t.Errorf("%s: idlg on a batch of 16: %+v; want not applicable", p.Label, a)
				}
			case "rlu":
				if a.NotApplicable != "" || a.IAcc == nil {
					t.Fatalf("%s: rlu row %+v", p.Label, a)
				}
				rlu += *a.IAcc
				n++
			}
		}
		if !moon && rlu/n < 0.8 {
			t.Errorf("%s: RLU mean iAcc %.3f; want ≥ 0.8 on untrained models", p.Label, rlu/n)
		}
		t.Logf("%s: RLU mean iAcc %.3f over %v attacks", p.Label, rlu/n, n)
	}
	checkDeterministic(t, attackSpec, plan, got)
}

// TestAuxSet: the auxiliary set holds aux_per_class samples of every class
// of the test split, distinct, the same for every point of a seed.
func TestAuxSet(t *testing.T) {
	e := newEngine(t)
	sw, err := sweep.Parse("t.yaml", []byte(attackSpec))
	if err != nil {
		t.Fatal(err)
	}
	var first []int
	for _, p := range sw.Points {
		if p.ID == sweep.StreamID(p.Config) {
			t.Errorf("point %s: stream ID equals the point ID; the attack block should be left out of it", p.Label)
		}
		env, err := e.buildEnv(context.Background(), sw.Name, p)
		if err != nil {
			t.Fatal(err)
		}
		aux := env.aux
		if &aux.X[0] != &env.data.Test.X[0] {
			t.Fatal("the auxiliary set is not a view of the test split")
		}
		per := make([]int, env.data.Classes)
		seen := map[int]bool{}
		for _, i := range aux.Idx {
			if seen[i] {
				t.Errorf("test sample %d drawn twice", i)
			}
			seen[i] = true
			per[env.data.Test.Y[i]]++
		}
		for j, c := range per {
			if c != 20 {
				t.Errorf("class %d: %d auxiliary samples; want 20", j, c)
			}
		}
		if first == nil {
			first = aux.Idx
		} else if !equalInts(first, aux.Idx) {
			t.Errorf("point %s draws another auxiliary set", p.Label)
		}
	}
	big := strings.Replace(attackSpec, "aux_per_class: 20", "aux_per_class: 10000", 1)
	sw, err = sweep.Parse("t.yaml", []byte(big))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.buildEnv(context.Background(), sw.Name, sw.Points[0]); err == nil || !strings.Contains(err.Error(), "attack.aux_per_class") {
		t.Errorf("aux_per_class beyond the test split: %v; want an error naming attack.aux_per_class", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAttackProbes: with clients: all, every client of the population is
// attacked at an attacked round, the unselected ones on probe updates
// (marked probe) that change nothing: the models are those of the sweep
// without attacks, and the rows are deterministic through crashes.
func TestAttackProbes(t *testing.T) {
	spec := strings.Replace(attackSpec, "aux_per_class: 20}", "aux_per_class: 20, clients: all}", 1)
	_, plainPlan, plain := runSpec(t, attackBase, nil)
	_, plan, got := runSpec(t, spec, nil)
	for _, p := range plan.Points {
		alg := strings.Fields(p.Label)[0]
		if g, want := models(got, p.ID), models(plain, pointByLabel(t, plainPlan, alg)); !equalStrings(g, want) {
			t.Errorf("%s: models with probes %v; without attacks %v", p.Label, g, want)
		}
		per := map[[2]int32]int{} // round, client → rows
		probes := 0
		for _, a := range got.Attacks {
			if a.Point != p.ID {
				continue
			}
			per[[2]int32{a.Round, a.Client}]++
			if a.Probe {
				probes++
				sum := int32(0)
				for _, c := range a.TrueCounts {
					sum += c
				}
				if sum != a.Samples || a.Samples != 4*16 {
					t.Errorf("%s: probe row of client %d: truth sums to %d, samples %d; want 64", p.Label, a.Client, sum, a.Samples)
				}
			}
		}
		if len(per) != 2*8 || probes != 2*5*3 {
			t.Errorf("%s: %d attacked (round, client) pairs, %d probe rows; want 2 rounds × 8 clients and 2 × 5 unselected × 3 methods", p.Label, len(per), probes)
		}
	}
	checkDeterministic(t, spec, plan, got)
}
