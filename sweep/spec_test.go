package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
)

func registry() *methods.Registry { return methods.Builtin() }

const demo = `
name: demo
dataset: {name: fmnist}
partition: {scheme: dirichlet, clients: 100, alpha: 0.5}
model: {arch: mlp, hidden: [200, 200]}
train: {lr: 0.05, batch_size: 50, local_steps: 10}
rounds: 30
clients_per_round: 10
sampler: uniform
aggregator: {name: fedavg, server_lr: 1.0}
seeds: [1, 2]
grid:
  partition.alpha: [0.1, 0.5]
`

func TestParseGrid(t *testing.T) {
	sw, err := Parse("demo.yaml", []byte(demo))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Validate(registry()); err != nil {
		t.Fatal(err)
	}
	wantLabels := []string{
		"partition.alpha=0.1 seed=1", "partition.alpha=0.1 seed=2",
		"partition.alpha=0.5 seed=1", "partition.alpha=0.5 seed=2",
	}
	if len(sw.Points) != len(wantLabels) {
		t.Fatalf("got %d points; want %d", len(sw.Points), len(wantLabels))
	}
	for i, p := range sw.Points {
		if p.Label != wantLabels[i] || p.Index != i {
			t.Errorf("point %d = %q (index %d); want %q", i, p.Label, p.Index, wantLabels[i])
		}
		if err := ValidPointID(p.ID); err != nil {
			t.Error(err)
		}
	}
	if got := sw.Points[0].Config.Partition.Alpha; got != 0.1 {
		t.Errorf("point 0 alpha = %v; want 0.1 from the grid", got)
	}
	if got := sw.Points[1].Config.Seed; got != 2 {
		t.Errorf("point 1 seed = %d; want 2", got)
	}
	// Defaults applied after decoding.
	c := sw.Points[0].Config
	if c.Partition.MinSize != 10 || c.Importance != fl.ImportanceSize || c.EvalEvery != 1 || c.Train.Optimizer != "sgd" {
		t.Errorf("defaults not applied: %+v", c)
	}
}

// TestPointIDStable: the ID depends on the resolved experiment only, not on
// how the spec spells it, where the data is, or the sweep around it.
func TestPointIDStable(t *testing.T) {
	a, err := Parse("a.yaml", []byte(demo))
	if err != nil {
		t.Fatal(err)
	}
	// Same experiment written differently: explicit defaults, flow vs block
	// style, another sweep name, a data root, the grid value written inline.
	b, err := Parse("b.yaml", []byte(`
name: other
dataset: {name: fmnist, root: /somewhere/else}
partition:
  scheme: dirichlet
  clients: 100
  alpha: 0.1
  min_size: 10
  test: split
  test_fraction: 0.2
model: {arch: mlp, hidden: [200, 200]}
train: {optimizer: sgd, lr: 0.05, batch_size: 50, local_steps: 10}
rounds: 30
clients_per_round: 10
importance: size
sampler: {name: uniform}
aggregator: {name: fedavg, server_lr: 1}
eval_every: 1
checkpoint_every: 10
seeds: [1]
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Points[0].ID, a.Points[0].ID; got != want {
		t.Errorf("equivalent spec got point ID %s; want %s", got, want)
	}
	if a.Points[0].ID == a.Points[2].ID {
		t.Errorf("different alphas share ID %s", a.Points[0].ID)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string // substrings of the error
	}{
		{"malformed yaml", "name: x\npartition: [unclosed", []string{"spec.yaml", "line"}},
		{"not a map", "- a\n- b", []string{"must be a map"}},
		{"empty", "", []string{"empty"}},
		{"bad name", "name: Demo Sweep", []string{`name = "Demo Sweep"`, "a-z"}},
		{"path in name", "name: ../etc", []string{"name ="}},
		{"unknown top field", "name: x\nroundz: 3", []string{"spec.yaml:2", `"roundz" is not a spec field`, "rounds"}},
		{"unknown nested field", "name: x\npartition:\n  scheme: iid\n  alph: 0.1", []string{"spec.yaml:4", "partition.alph", "alpha"}},
		{"bad grid path", "name: x\ngrid:\n  partition.alpah: [1, 2]", []string{"spec.yaml:3", "partition.alpah"}},
		{"grid not list", "name: x\ngrid:\n  rounds: 3", []string{"grid.rounds must be a non-empty list"}},
		{"wrong type", "name: x\nrounds: many", []string{"rounds", "string"}},
		{"duplicate points", "name: x\nseeds: [1, 1]", []string{"same experiment"}},
		{"negative seed", "name: x\nseeds: [-1]", []string{"seeds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(tt.give))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error = %v; want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	base := "name: x\npartition: {scheme: iid, clients: 10}\nclients_per_round: 5\n"
	tests := []struct {
		name string
		give string
		want []string
	}{
		{"unknown dataset", "dataset: {name: cifar100}", []string{"dataset.name", "cifar100", "fmnist"}},
		{"unknown model", "model: {arch: resnet9000}", []string{"model.", "resnet9000"}},
		{"negative lr", "train: {lr: -0.1}", []string{"lr", "-0.1"}},
		{"both steps and epochs", "train: {local_steps: 5, local_epochs: 1}", []string{"local_steps", "local_epochs"}},
		{"unknown sampler", "sampler: hics-typo", []string{"sampler.name", "hics-typo", "md, poisson, pow-d, random, uniform"}},
		{"unknown aggregator", "aggregator: fedsum", []string{"aggregator.name", "fedsum", "fedavg"}},
		{"bad aggregator option", "aggregator: {name: fedavg, server_lr: -1}", []string{"server_lr"}},
		{"unknown aggregator option", "aggregator: {name: fedavg, serverlr: 1}", []string{"serverlr"}},
		{"too many clients per round", "clients_per_round: 11", []string{"clients_per_round = 11", "partition.clients = 10"}},
		{"zero rounds", "rounds: 0", []string{"rounds = 0"}},
		{"bad alpha", "partition: {scheme: dirichlet, clients: 10, alpha: 0}", []string{"partition.alpha = 0"}},
		{"nan alpha", "partition: {scheme: dirichlet, clients: 10, alpha: .nan}", []string{"alpha"}},
		{"alpha without dirichlet", "partition: {scheme: iid, clients: 10, alpha: 0.5}", []string{"partition.alpha", "does not use"}},
		{"unknown scheme", "partition: {scheme: pathological, clients: 10}", []string{"partition.scheme", "pathological"}},
		{"bad test", "partition: {scheme: iid, clients: 10, test: global}", []string{"partition.test", "global"}},
		{"bad importance", "importance: loss", []string{"importance", "loss"}},
		{"unknown streams", "streams: shared", []string{"streams", "shared", "common", "point"}},
		{"bad eval_every", "eval_every: 0", []string{"eval_every"}},
		{"bad concurrency", "run: {concurrency: 0}", []string{"run.concurrency"}},
		{"unknown attack", "attack: {methods: [rlu, dlg]}", []string{"attack.methods[1]", "dlg", "llg+"}},
		{"attack twice", "attack: {methods: [rlu, rlu]}", []string{"attack.methods", "twice"}},
		{"attack round", "attack: {methods: [rlu], rounds: [0, 500]}", []string{"attack.rounds[0] = 0", "attack.rounds[1] = 500"}},
		{"attack clients", "attack: {methods: [rlu], clients: everyone}", []string{"attack.clients", "everyone", "selected"}},
		{"attack aux", "attack: {methods: [rlu], aux_per_class: -1}", []string{"attack.aux_per_class = -1"}},
		{"attack without methods", "attack: {rounds: [1]}", []string{"attack has no methods"}},
		{"attack unknown field", "attack: {method: [rlu]}", []string{"method"}},
		{"unknown server optimizer", "server_optimizer: adam", []string{"server_optimizer.name", "adam", "fedadam, fedavgm"}},
		{"server optimizer without lr", "server_optimizer: fedyogi", []string{"server_optimizer.lr is required"}},
		{"server optimizer and server_lr", "server_optimizer: {name: fedadam, lr: 0.01}\naggregator: {name: fedavg, server_lr: 0.5}", []string{"aggregator.server_lr = 0.5", "server_optimizer fedadam"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := withField(base, tt.give)
			sw, err := Parse("spec.yaml", []byte(spec))
			if err == nil {
				err = sw.Validate(registry())
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v; want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestGridOverMethods: a grid can vary a method and its options.
func TestGridOverMethods(t *testing.T) {
	sw, err := Parse("s.yaml", []byte(`
name: x
partition: {scheme: iid, clients: 10}
clients_per_round: 5
sampler: uniform
grid:
  sampler: [uniform, md]
  aggregator.server_lr: [0.5, 1.0]
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Validate(registry()); err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 4 {
		t.Fatalf("got %d points; want 4", len(sw.Points))
	}
	p := sw.Points[3].Config
	if p.Sampler.Name != "md" || p.Aggregator.Name != "fedavg" || fmt.Sprint(p.Aggregator.Options["server_lr"]) != "1" {
		t.Errorf("point 3 = sampler %+v, aggregator %+v; want md and fedavg with server_lr 1", p.Sampler, p.Aggregator)
	}
	if got := sw.Points[3].Label; got != "sampler=md aggregator.server_lr=1 seed=0" {
		t.Errorf("label = %q", got)
	}
}

func TestHash(t *testing.T) {
	a, _ := Parse("a.yaml", []byte(demo))
	b, _ := Parse("b.yaml", []byte(strings.Replace(demo, "rounds: 30", "rounds: 31", 1)))
	c, _ := Parse("c.yaml", []byte(demo+"run: {concurrency: 4}\n"))
	if a.Hash() == b.Hash() {
		t.Error("specs with different rounds have the same hash")
	}
	if a.Hash() != c.Hash() {
		t.Error("run settings changed the hash; they must not")
	}
}

// TestAlgorithmBlock: the algorithm block is a method like the sampler; an
// explicit plain fedavg is the same point as no algorithm block (one ID),
// and method values label points as name(option=value, ...).
func TestAlgorithmBlock(t *testing.T) {
	sw, err := Parse("a.yaml", []byte(strings.Replace(demo, "partition.alpha: [0.1, 0.5]", "algorithm: [fedavg, scaffold, {name: fedprox, mu: 0.01}]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Validate(registry()); err != nil {
		t.Fatal(err)
	}
	plain, _ := Parse("b.yaml", []byte(strings.Replace(demo, "grid:\n  partition.alpha: [0.1, 0.5]\n", "", 1)))
	if sw.Points[0].ID != plain.Points[0].ID {
		t.Errorf("algorithm: fedavg is point %s; without the block %s; want one point", sw.Points[0].ID, plain.Points[0].ID)
	}
	if _, err := Parse("c.yaml", []byte(demo+"grid:\n  algorithm: [scaffold]\n")); err == nil || !strings.Contains(err.Error(), `"grid" appears twice`) {
		t.Errorf("a spec with two grid blocks: error %v; want one naming the duplicate", err)
	}
	var labels []string
	for _, p := range sw.Points {
		labels = append(labels, p.Label)
	}
	want := []string{"algorithm=fedavg seed=1", "algorithm=fedavg seed=2", "algorithm=scaffold seed=1", "algorithm=scaffold seed=2",
		"algorithm=fedprox(mu=0.01) seed=1", "algorithm=fedprox(mu=0.01) seed=2"}
	if !slices.Equal(labels, want) {
		t.Errorf("labels %q; want %q", labels, want)
	}
	if got := sw.Points[4].Config.AlgorithmName(); got != "fedprox" {
		t.Errorf("AlgorithmName = %q; want fedprox", got)
	}
	if got := plain.Points[0].Config.AlgorithmName(); got != "fedavg" {
		t.Errorf("AlgorithmName without a block = %q; want fedavg", got)
	}
}

// withField returns spec with the top-level field of line (one "key: value"
// line) set to line's value: an existing line of that key is replaced (a
// spec may not name a field twice).
func withField(spec, line string) string {
	key, _, _ := strings.Cut(line, ":")
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(spec, "\n"), "\n") {
		if !strings.HasPrefix(l, key+":") {
			out = append(out, l)
		}
	}
	return strings.Join(append(out, line), "\n") + "\n"
}
