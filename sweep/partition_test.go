package sweep

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDemoPointIDsPinned pins the IDs of examples/demo.yaml's points. A
// point's ID hashes its resolved configuration, so a new config field
// without omitempty (or with a zero value that is not the old behaviour)
// would silently turn every stored point into a new one. The legacy IDs
// were computed before the partition and dataset fields of issue 3 were
// added: ParseLegacyStreams (how PlanSweep re-plans a sweep stored before
// the streams option) and `streams: point` must still give them. New
// sweeps share their streams (streams: common), which is another
// experiment and so has other IDs, pinned too.
func TestDemoPointIDsPinned(t *testing.T) {
	data, err := os.ReadFile("../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ids := func(sw *Sweep, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range sw.Points {
			got = append(got, p.ID)
		}
		return got
	}
	// 128-bit IDs; their first 10 digits are the 40-bit IDs of older builds
	// (p42a6ceb5ad, ...): the canonical configuration is unchanged.
	legacy := []string{"p42a6ceb5ade79808f552733864698870", "pbcd69c218c740aaf7d1d8d7034e6e033", "p1678dd66b50756dc7032322e9493a75a", "pf97e6a1accc2682981311e7472919724"}
	common := []string{"pfe5d6c500a087ab63e5ebb3414cdaade", "pb67ca6edf02310d29aef8f7601543340", "p6335ce1bd8e224af1dd89a5e74258d78", "pfeb774b4ba41f104395b97fc26f8748b"}
	for _, tt := range []struct {
		name string
		got  []string
		want []string
	}{
		{"ParseLegacyStreams", ids(ParseLegacyStreams("demo.yaml", data)), legacy},
		{"streams: point", ids(Parse("demo.yaml", append([]byte("streams: point\n"), data...))), legacy},
		{"Parse (streams: common)", ids(Parse("demo.yaml", data)), common},
		{"streams: common", ids(ParseLegacyStreams("demo.yaml", append([]byte("streams: common\n"), data...))), common},
	} {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s: demo point IDs = %v; want %v (a config change altered existing points' identity)", tt.name, tt.got, tt.want)
		}
	}
}

// parsePoints parses and validates a spec built from base and extra.
func parsePoints(t *testing.T, spec string) ([]Point, error) {
	t.Helper()
	sw, err := Parse("spec.yaml", []byte(spec))
	if err != nil {
		return nil, err
	}
	if err := sw.Validate(registry()); err != nil {
		return nil, err
	}
	return sw.Points, nil
}

const partBase = "name: x\nclients_per_round: 5\n"

// TestSchemeAliases checks that NIID-Bench's names normalise to canonical
// schemes before hashing, so an alias and its canonical name are the same
// point, and that the resolved config is explicit.
func TestSchemeAliases(t *testing.T) {
	tests := []struct {
		alias, canonical string
	}{
		{"partition: {scheme: homo, clients: 10}", "partition: {scheme: iid, clients: 10}"},
		{"partition: {scheme: noniid-labeldir, clients: 10, alpha: 0.5}", "partition: {scheme: dirichlet, clients: 10, alpha: 0.5, min_size: 10}"},
		{"partition: {scheme: noniid-#label2, clients: 10}", "partition: {scheme: k-labels, clients: 10, labels_per_client: 2}"},
		{"partition: {scheme: noniid-#label, clients: 10, labels_per_client: 3}", "partition: {scheme: k-labels, clients: 10, labels_per_client: 3}"},
		{"partition: {scheme: iid-diff-quantity, clients: 10, alpha: 0.5}", "partition: {scheme: quantity, clients: 10, alpha: 0.5, min_size: 10}"},
		{"partition: {scheme: hics-1, clients: 50}", "partition: {scheme: hics, clients: 50, alphas: [0.001, 0.002, 0.005, 0.01, 0.5]}"},
		{"partition: {scheme: hics-3, clients: 50}", "partition: {scheme: hics, clients: 50, alphas: [0.001, 0.001, 0.001, 0.001, 0.001]}"},
		{"dataset: {name: cifar10}\npartition: {scheme: hics-2, clients: 50}", "dataset: {name: cifar10}\npartition: {scheme: hics, clients: 50, alphas: [0.001, 0.002, 0.005, 0.01, 0.5]}"},
		{"partition: {scheme: fraboni-cifar, clients: 100, alpha: 0.1}", "partition: {scheme: unbalanced, clients: 100, alpha: 0.1, sizes: [" + strings.Repeat("100,", 10) + strings.Repeat("250,", 30) + strings.Repeat("500,", 30) + strings.Repeat("750,", 20) + strings.Repeat("1000,", 9) + "1000]}"},
	}
	for _, tt := range tests {
		a, err := parsePoints(t, partBase+tt.alias)
		if err != nil {
			t.Errorf("%s: %v", tt.alias, err)
			continue
		}
		c, err := parsePoints(t, partBase+tt.canonical)
		if err != nil {
			t.Errorf("%s: %v", tt.canonical, err)
			continue
		}
		if a[0].ID != c[0].ID {
			t.Errorf("%q and %q have IDs %s and %s; want the same point\n%s\n%s", tt.alias, tt.canonical, a[0].ID, c[0].ID, a[0].Config.Canonical(), c[0].Config.Canonical())
		}
	}
	// A grid over an alias and its canonical name is one experiment twice.
	_, err := parsePoints(t, partBase+"partition: {clients: 10}\ngrid:\n  partition.scheme: [homo, iid]\n")
	if err == nil || !strings.Contains(err.Error(), "same experiment") {
		t.Errorf("grid [homo, iid] = %v; want the duplicate-point error", err)
	}
}

// TestNewFieldsOmitted checks that a config using none of the new fields
// encodes exactly as before: no new key appears in its canonical JSON.
func TestNewFieldsOmitted(t *testing.T) {
	pts, err := parsePoints(t, partBase+"partition: {scheme: dirichlet, clients: 10, alpha: 0.5}")
	if err != nil {
		t.Fatal(err)
	}
	js := string(pts[0].Config.Canonical())
	for _, k := range []string{"labels_per_client", "alphas", "sizes", "size_exponent", "size_alpha", "noise", "users", "beta", "iid", "data_seed", "samples"} {
		if strings.Contains(js, `"`+k+`"`) {
			t.Errorf("canonical JSON %s contains %q; new fields must be omitted when zero", js, k)
		}
	}
}

func TestValidatePartition(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string // substrings of the error; nil: valid
	}{
		{"k-labels", "partition: {scheme: k-labels, clients: 10, labels_per_client: 2}", nil},
		{"k-labels without k", "partition: {scheme: k-labels, clients: 10}", []string{"partition.labels_per_client = 0"}},
		{"k-labels too many", "partition: {scheme: k-labels, clients: 10, labels_per_client: 11}", []string{"labels_per_client = 11", "1 to 10"}},
		{"#label conflict", "partition: {scheme: noniid-#label3, clients: 10, labels_per_client: 2}", []string{"noniid-#label3", "labels_per_client = 2", "remove one"}},
		{"quantity", "partition: {scheme: quantity, clients: 10, alpha: 0.5}", nil},
		{"quantity without alpha", "partition: {scheme: quantity, clients: 10}", []string{"partition.alpha = 0", "sizes"}},
		{"mixed", "partition: {scheme: mixed, clients: 10, alpha: 0.5}", nil},
		{"mixed needs clients = classes", "partition: {scheme: mixed, clients: 20, alpha: 0.5}", []string{"partition.clients = 20", "as many clients as classes (10)"}},
		{"hics", "partition: {scheme: hics, clients: 50, alphas: [0.1, 1]}", nil},
		{"hics cosplit", "partition: {scheme: hics, clients: 50, alphas: [0.1, 1], test: cosplit}", nil},
		{"hics bad alpha", "partition: {scheme: hics, clients: 50, alphas: [0.1, -1]}", []string{"partition.alphas[1] = -1"}},
		{"hics not a multiple", "partition: {scheme: hics, clients: 51, alphas: [0.1, 1]}", []string{"partition.clients = 51", "2 groups"}},
		{"hics preset on mnist", "dataset: {name: mnist}\npartition: {scheme: hics-1, clients: 50}", []string{"hics-1", "cifar10 and fmnist", "explicit partition.alphas"}},
		{"hics preset and alphas", "partition: {scheme: hics-2, clients: 50, alphas: [1]}", []string{"hics-2", "remove partition.alphas"}},
		{"cosplit without hics", "partition: {scheme: dirichlet, clients: 10, alpha: 1, test: cosplit}", []string{"cosplit", "hics"}},
		{"alphas without hics", "partition: {scheme: iid, clients: 10, alphas: [1]}", []string{"partition.alphas is set", "hics"}},
		{"unbalanced power law", "partition: {scheme: unbalanced, clients: 10, size_exponent: 1}", nil},
		{"unbalanced dirichlet sizes", "partition: {scheme: unbalanced, clients: 10, size_alpha: 0.5, alpha: 0.1}", nil},
		{"unbalanced no sizes", "partition: {scheme: unbalanced, clients: 10}", []string{"exactly one of partition.sizes", "0 are set"}},
		{"unbalanced two sizes", "partition: {scheme: unbalanced, clients: 10, size_alpha: 1, size_exponent: 1}", []string{"2 are set"}},
		{"unbalanced sizes length", "partition: {scheme: unbalanced, clients: 10, sizes: [5, 5]}", []string{"2 entries", "partition.clients = 10"}},
		{"unbalanced empty client", "partition: {scheme: unbalanced, clients: 2, sizes: [5, 0]}", []string{"sizes[1] = 0"}},
		{"unbalanced negative alpha", "partition: {scheme: unbalanced, clients: 10, size_exponent: 1, alpha: -1}", []string{"partition.alpha = -1"}},
		{"fraboni-cifar wrong clients", "partition: {scheme: fraboni-cifar, clients: 50}", []string{"100 entries", "partition.clients = 50"}},
		{"noise", "partition: {scheme: dirichlet, clients: 10, alpha: 0.5, noise: 0.5}", nil},
		{"negative noise", "partition: {scheme: iid, clients: 10, noise: -0.5}", []string{"partition.noise = -0.5"}},
		{"natural", "dataset: {name: fedprox-synthetic, alpha: 1, beta: 1}\npartition: {scheme: natural, clients: 30, test: natural}", nil},
		{"natural wrong clients", "dataset: {name: fedprox-synthetic}\npartition: {scheme: natural, clients: 10}", []string{"partition.clients = 10", "users = 30", "partition.clients: 30"}},
		{"natural on fmnist", "partition: {scheme: natural, clients: 10}", []string{"natural", "fedprox-synthetic", "dataset fmnist"}},
		{"natural test without natural", "partition: {scheme: iid, clients: 10, test: natural}", []string{"partition.test = natural"}},
		{"generator options on fmnist", "dataset: {name: fmnist, beta: 1}\npartition: {scheme: iid, clients: 10}", []string{"dataset.alpha/beta", "fedprox-synthetic"}},
		{"negative beta", "dataset: {name: fedprox-synthetic, beta: -1}\npartition: {scheme: natural, clients: 30}", []string{"dataset.beta = -1"}},
		{"fixed sizes", "dataset: {name: fedprox-synthetic, users: 100000, samples: 44}\npartition: {scheme: natural, clients: 100000, test: natural}", nil},
		{"fixed sizes too large", "dataset: {name: fedprox-synthetic, users: 100000, samples: 45}\npartition: {scheme: natural, clients: 100000, test: natural}", []string{"dataset.samples = 45", "2 to 44", "100000 users"}},
		{"fixed size of one", "dataset: {name: fedprox-synthetic, samples: 1}\npartition: {scheme: natural, clients: 30, test: natural}", []string{"dataset.samples = 1", "2 to"}},
		{"fixed sizes on fmnist", "dataset: {name: fmnist, samples: 40}\npartition: {scheme: iid, clients: 10}", []string{"samples are set", "fedprox-synthetic"}},
		{"cifar10", "dataset: {name: cifar10}\npartition: {scheme: dirichlet, clients: 10, alpha: 0.5}", nil},
		{"unknown scheme lists aliases", "partition: {scheme: labeldir, clients: 10}", []string{"labeldir", "k-labels", "homo", "noniid-#label<k>", "hics-1"}},
		{"negative min size", "partition: {scheme: dirichlet, clients: 10, alpha: 1, min_size: -1}", []string{"partition.min_size = -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsePoints(t, partBase+tt.give)
			if tt.want == nil {
				if err != nil {
					t.Errorf("error = %v; want none", err)
				}
				return
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

// TestFedProxUsersDefault: fedprox-synthetic records FedProx's 30 users
// explicitly in the point config.
func TestFedProxUsersDefault(t *testing.T) {
	pts, err := parsePoints(t, partBase+"dataset: {name: fedprox-synthetic, alpha: 0.5, beta: 0.5}\npartition: {scheme: natural, clients: 30, test: natural}")
	if err != nil {
		t.Fatal(err)
	}
	if got := pts[0].Config.Dataset.Users; got != 30 {
		t.Errorf("dataset.users = %d; want 30", got)
	}
}
