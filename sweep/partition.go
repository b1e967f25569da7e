package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/partition"
)

// Partition schemes, by their canonical names. A spec may also use the
// NIID-Bench names in SchemeAliases and the presets (hics-1, hics-2, hics-3,
// fraboni-cifar, noniid-#label<k>); they are resolved to a canonical scheme
// with explicit values before the point's ID is computed, so "homo" and
// "iid" are the same point.
const (
	SchemeIID        = "iid"        // NIID-Bench homo
	SchemeDirichlet  = "dirichlet"  // NIID-Bench noniid-labeldir
	SchemeShards     = "shards"     // McMahan's label-sorted shards (FedEBA+)
	SchemeKLabels    = "k-labels"   // NIID-Bench noniid-#label: labels_per_client classes each
	SchemeQuantity   = "quantity"   // NIID-Bench iid-diff-quantity
	SchemeMixed      = "mixed"      // NIID-Bench mixed label + quantity skew
	SchemeHiCS       = "hics"       // HiCS-FL's α-groups
	SchemeUnbalanced = "unbalanced" // Fraboni et al.'s unbalanced clients
	SchemeNatural    = "natural"    // the dataset's own clients (fedprox-synthetic)
)

// Schemes are the canonical partition schemes, in the order the README
// documents them.
var Schemes = []string{SchemeIID, SchemeDirichlet, SchemeShards, SchemeKLabels, SchemeQuantity, SchemeMixed, SchemeHiCS, SchemeUnbalanced, SchemeNatural}

// SchemeAliases maps NIID-Bench's partition names to canonical schemes.
var SchemeAliases = map[string]string{
	"homo":              SchemeIID,
	"noniid-labeldir":   SchemeDirichlet,
	"noniid-#label":     SchemeKLabels,
	"iid-diff-quantity": SchemeQuantity,
}

// Local test-set choices (partition.test).
const (
	TestSplit   = "split"   // drawn from the test split with the client's train label proportions
	TestHoldout = "holdout" // test_fraction of the client's own data (FedEBA+'s 80/20)
	TestCosplit = "cosplit" // hics: the test split divided with the train split's draws (HiCS-FL's code)
	TestNatural = "natural" // natural: the dataset's own per-client test samples
)

// hicsPresets are HiCS-FL's concentration settings (1), (2), (3) per
// dataset (specs/hicsfl.md §3.3). Setting (3) on Fashion-MNIST is a single
// α that the code passes five times.
var hicsPresets = map[string][3][]float64{
	"fmnist":  {{0.001, 0.002, 0.005, 0.01, 0.5}, {0.001, 0.002, 0.005, 0.01, 0.2}, {0.001, 0.001, 0.001, 0.001, 0.001}},
	"cifar10": {{0.001, 0.01, 0.1, 0.5, 1}, {0.001, 0.002, 0.005, 0.01, 0.5}, {0.001, 0.002, 0.005, 0.01, 0.1}},
}

// naturalDatasets are the datasets that come split into clients.
var naturalDatasets = []string{"fedprox-synthetic"}

// datasetClasses is the number of classes of each dataset.
func datasetClasses(string) int { return 10 } // every dataset here has 10

// finishPartition resolves aliases and presets into canonical schemes with
// explicit values, and applies the defaults that depend on the scheme. A
// preset that conflicts with an explicit value is left unresolved for
// validatePartition to report.
func (c *Config) finishPartition() {
	p := &c.Partition
	if canon, ok := SchemeAliases[p.Scheme]; ok {
		p.Scheme = canon
	}
	if k, ok := strings.CutPrefix(p.Scheme, "noniid-#label"); ok {
		if n, err := strconv.Atoi(k); err == nil && n > 0 && (p.LabelsPerClient == 0 || p.LabelsPerClient == n) {
			p.Scheme, p.LabelsPerClient = SchemeKLabels, n
		}
	}
	if set, ok := hicsPreset(p.Scheme); ok && len(p.Alphas) == 0 {
		if presets, ok := hicsPresets[c.Dataset.Name]; ok {
			p.Scheme, p.Alphas = SchemeHiCS, slices.Clone(presets[set-1])
		}
	}
	if p.Scheme == "fraboni-cifar" && len(p.Sizes) == 0 && p.SizeExponent == 0 && p.SizeAlpha == 0 {
		p.Scheme, p.Sizes = SchemeUnbalanced, partition.FraboniCIFARSizes()
	}
	switch p.Scheme {
	case SchemeDirichlet, SchemeQuantity:
		if p.MinSize == 0 {
			p.MinSize = partition.DefaultMinSize
		}
	case SchemeUnbalanced:
		if p.MinSize == 0 && len(p.Sizes) == 0 {
			p.MinSize = partition.DefaultMinSize
		}
	case SchemeShards:
		if p.ShardsPerClient == 0 {
			p.ShardsPerClient = 2
		}
	}
	if c.Dataset.Name == "fedprox-synthetic" && c.Dataset.Users == 0 {
		c.Dataset.Users = 30 // FedProx's NUM_USER
	}
}

// hicsPreset parses "hics-1", "hics-2", "hics-3".
func hicsPreset(scheme string) (int, bool) {
	s, ok := strings.CutPrefix(scheme, "hics-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 3
}

// partitionFields are the optional partition fields and the schemes that
// use them.
var partitionFields = []struct {
	name    string
	set     func(p PartitionConfig) bool
	schemes []string
}{
	{"alpha", func(p PartitionConfig) bool { return p.Alpha != 0 }, []string{SchemeDirichlet, SchemeQuantity, SchemeMixed, SchemeUnbalanced}},
	{"min_size", func(p PartitionConfig) bool { return p.MinSize != 0 }, []string{SchemeDirichlet, SchemeQuantity, SchemeHiCS, SchemeUnbalanced}},
	{"shards_per_client", func(p PartitionConfig) bool { return p.ShardsPerClient != 0 }, []string{SchemeShards}},
	{"labels_per_client", func(p PartitionConfig) bool { return p.LabelsPerClient != 0 }, []string{SchemeKLabels}},
	{"alphas", func(p PartitionConfig) bool { return len(p.Alphas) != 0 }, []string{SchemeHiCS}},
	{"sizes", func(p PartitionConfig) bool { return len(p.Sizes) != 0 }, []string{SchemeUnbalanced}},
	{"size_exponent", func(p PartitionConfig) bool { return p.SizeExponent != 0 }, []string{SchemeUnbalanced}},
	{"size_alpha", func(p PartitionConfig) bool { return p.SizeAlpha != 0 }, []string{SchemeUnbalanced}},
}

// validateData checks the dataset block.
func (c Config) validateData() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(a, ErrInvalid)...))
	}
	d := c.Dataset
	if !contains(Datasets, d.Name) {
		bad("dataset.name = %q is unknown; use one of %s", d.Name, strings.Join(Datasets, ", "))
		return errs
	}
	if d.Name != "fedprox-synthetic" {
		if d.Alpha != 0 || d.Beta != 0 || d.Users != 0 || d.IID || d.DataSeed != 0 || d.Samples != 0 {
			bad("dataset.alpha/beta/users/iid/data_seed/samples are set but dataset %s is not generated; they belong to fedprox-synthetic", d.Name)
		}
		return errs
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"dataset.alpha", d.Alpha}, {"dataset.beta", d.Beta}} {
		if err := checkFinite(f.name, f.v); err != nil {
			errs = append(errs, err)
		} else if f.v < 0 {
			bad("%s = %v; it must be >= 0 (FedProx uses Synthetic(0, 0), (0.5, 0.5) and (1, 1))", f.name, f.v)
		}
	}
	if d.Users < 1 || d.Users > 100000 {
		bad("dataset.users = %d; use 1 to 100000 (FedProx uses 30)", d.Users)
	} else if d.Samples != 0 && (d.Samples < dataset.FedProxMinSamples || d.Samples > dataset.FedProxMaxSamples(d.Users)) {
		bad("dataset.samples = %d; use 0 (FedProx's lognormal sizes) or %d to %d, the most that %d users may hold",
			d.Samples, dataset.FedProxMinSamples, dataset.FedProxMaxSamples(d.Users), d.Users)
	}
	return errs
}

// validatePartition checks the partition block against its scheme.
func (c Config) validatePartition() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(a, ErrInvalid)...))
	}
	p := c.Partition
	if p.Clients < 1 {
		bad("partition.clients = %d; it must be at least 1", p.Clients)
	}
	if !contains(Schemes, p.Scheme) {
		errs = append(errs, unresolvedScheme(c))
		return errs
	}
	for _, f := range partitionFields {
		if f.set(p) && !contains(f.schemes, p.Scheme) {
			bad("partition.%s is set but partition.scheme = %q does not use it; remove it (it belongs to %s)", f.name, p.Scheme, strings.Join(f.schemes, ", "))
		}
	}
	positive := func(field string, v float64, hint string) {
		if err := checkFinite(field, v); err != nil {
			errs = append(errs, err)
		} else if v < partition.MinAlpha {
			bad("%s = %v; it must be > 0 (%s)", field, v, hint)
		}
	}
	if p.MinSize < 0 {
		bad("partition.min_size = %d; it must be >= 0 (0: the scheme's default)", p.MinSize)
	}
	classes := datasetClasses(c.Dataset.Name)
	switch p.Scheme {
	case SchemeDirichlet:
		positive("partition.alpha", p.Alpha, "the Dirichlet concentration, e.g. 0.1 for strong label skew, 0.5 moderate")
	case SchemeQuantity:
		positive("partition.alpha", p.Alpha, "the concentration of the client sizes, NIID-Bench's beta, e.g. 0.5")
	case SchemeMixed:
		positive("partition.alpha", p.Alpha, "the concentration of each class's split between its 2 holders, e.g. 0.5")
		if p.Clients != classes {
			bad("partition.clients = %d; scheme mixed needs as many clients as classes (%d): every client holds 2 classes and every class has 2 holders", p.Clients, classes)
		}
	case SchemeShards:
		if p.ShardsPerClient < 1 {
			bad("partition.shards_per_client = %d; it must be at least 1 (FedEBA+ uses 2)", p.ShardsPerClient)
		}
	case SchemeKLabels:
		if p.LabelsPerClient < 1 || p.LabelsPerClient > classes {
			bad("partition.labels_per_client = %d; scheme k-labels needs 1 to %d classes per client (NIID-Bench #C=k)", p.LabelsPerClient, classes)
		}
	case SchemeHiCS:
		if len(p.Alphas) == 0 {
			bad("partition.alphas is empty; scheme hics needs one concentration per group, e.g. [0.001, 0.002, 0.005, 0.01, 0.5], or use a preset scheme hics-1, hics-2, hics-3")
		}
		for i, a := range p.Alphas {
			positive(fmt.Sprintf("partition.alphas[%d]", i), a, "a Dirichlet concentration")
		}
		if len(p.Alphas) > 0 && p.Clients%len(p.Alphas) != 0 {
			bad("partition.clients = %d is not a multiple of the %d groups in partition.alphas; use e.g. %d", p.Clients, len(p.Alphas), 10*len(p.Alphas))
		}
	case SchemeUnbalanced:
		given := 0
		for _, set := range []bool{len(p.Sizes) > 0, p.SizeExponent != 0, p.SizeAlpha != 0} {
			if set {
				given++
			}
		}
		if given != 1 {
			bad("scheme unbalanced needs exactly one of partition.sizes (a list), partition.size_exponent (power law) or partition.size_alpha (Dirichlet sizes); %d are set", given)
		}
		if len(p.Sizes) > 0 && len(p.Sizes) != p.Clients {
			bad("partition.sizes has %d entries but partition.clients = %d; give one size per client", len(p.Sizes), p.Clients)
		}
		for i, s := range p.Sizes {
			if s < 1 {
				bad("partition.sizes[%d] = %d; every client needs at least 1 sample", i, s)
				break
			}
		}
		if p.SizeExponent != 0 {
			positive("partition.size_exponent", p.SizeExponent, "the power-law exponent of the client sizes, e.g. 1")
		}
		if p.SizeAlpha != 0 {
			positive("partition.size_alpha", p.SizeAlpha, "the concentration of the client sizes, e.g. 0.5")
		}
		if err := checkFinite("partition.alpha", p.Alpha); err != nil {
			errs = append(errs, err)
		} else if p.Alpha < 0 || (p.Alpha > 0 && p.Alpha < partition.MinAlpha) {
			bad("partition.alpha = %v; it must be 0 (no label skew) or > 0 (Dirichlet label mixes, e.g. 0.1)", p.Alpha)
		}
	case SchemeNatural:
		if !contains(naturalDatasets, c.Dataset.Name) {
			bad("partition.scheme = natural needs a dataset that comes split into clients (%s); dataset %s does not", strings.Join(naturalDatasets, ", "), c.Dataset.Name)
		} else if p.Clients != c.Dataset.Users {
			bad("partition.clients = %d but dataset %s has users = %d; set partition.clients: %d", p.Clients, c.Dataset.Name, c.Dataset.Users, c.Dataset.Users)
		}
	}
	switch {
	case p.PublicPerClass < 0 || p.PublicPerClass > 10000:
		bad("partition.public_per_class = %d; use 1 to 10000 training samples per class for the server's public set (FNR-FL: 100), or 0 for none", p.PublicPerClass)
	case p.PublicPerClass > 0 && p.Scheme == SchemeNatural:
		bad("partition.public_per_class needs a scheme that splits the train split; scheme natural takes the dataset's own clients: remove it")
	}
	if err := checkFinite("partition.noise", p.Noise); err != nil {
		errs = append(errs, err)
	} else if p.Noise < 0 {
		bad("partition.noise = %v; it is a standard deviation, so >= 0 (FNR-FL uses 0.1 and 0.5)", p.Noise)
	}
	switch p.Test {
	case TestSplit, TestHoldout:
	case TestCosplit:
		if p.Scheme != SchemeHiCS {
			bad("partition.test = cosplit divides the test split with HiCS-FL's group draws; it needs partition.scheme hics, not %q", p.Scheme)
		}
	case TestNatural:
		if p.Scheme != SchemeNatural {
			bad("partition.test = natural takes the dataset's own client test sets; it needs partition.scheme natural, not %q", p.Scheme)
		}
	default:
		bad("partition.test = %q is unknown; use split (client test sets drawn from the test split with the client's label proportions), holdout (a fraction of the client's own data), cosplit (hics) or natural (natural)", p.Test)
	}
	if err := checkFinite("partition.test_fraction", p.TestFraction); err != nil {
		errs = append(errs, err)
	} else if p.TestFraction <= 0 || (p.Test == TestHoldout && p.TestFraction >= 1) {
		bad("partition.test_fraction = %v; use a value in (0, 1), e.g. 0.2", p.TestFraction)
	}
	return errs
}

// unresolvedScheme explains a scheme that is neither canonical nor resolved
// by finishPartition.
func unresolvedScheme(c Config) error {
	p := c.Partition
	if k, ok := strings.CutPrefix(p.Scheme, "noniid-#label"); ok {
		if n, err := strconv.Atoi(k); err == nil && n > 0 {
			return fmt.Errorf("partition.scheme = %q says %d labels per client but partition.labels_per_client = %d; remove one: %w", p.Scheme, n, p.LabelsPerClient, ErrInvalid)
		}
	}
	if set, ok := hicsPreset(p.Scheme); ok {
		if len(p.Alphas) > 0 {
			return fmt.Errorf("partition.scheme = %q is a preset of partition.alphas, which is also set; remove partition.alphas or use scheme hics: %w", p.Scheme, ErrInvalid)
		}
		var known []string
		for name := range hicsPresets {
			known = append(known, name)
		}
		slices.Sort(known)
		return fmt.Errorf("partition.scheme = hics-%d is HiCS-FL's setting (%d) for %s (specs/hicsfl.md §3.3); for dataset %s use scheme hics with explicit partition.alphas: %w",
			set, set, strings.Join(known, " and "), c.Dataset.Name, ErrInvalid)
	}
	if p.Scheme == "fraboni-cifar" {
		return fmt.Errorf("partition.scheme = fraboni-cifar presets partition.sizes, but a size field is also set; remove partition.sizes/size_exponent/size_alpha or use scheme unbalanced: %w", ErrInvalid)
	}
	aliases := make([]string, 0, len(SchemeAliases))
	for a := range SchemeAliases {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	return fmt.Errorf("partition.scheme = %q is unknown; use one of %s, a NIID-Bench name (%s, noniid-#label<k>) or a preset (hics-1, hics-2, hics-3, fraboni-cifar): %w",
		p.Scheme, strings.Join(Schemes, ", "), strings.Join(aliases, ", "), ErrInvalid)
}
