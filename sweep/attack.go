package sweep

import (
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
)

// AttackConfig runs label-recovery attacks (package attack) on the clients'
// updates in the inspect phase, before aggregation. The attacks read the
// updates and never change them: a point's models are those of the same
// point without attacks (but its ID differs: the attacks are part of its
// configuration). The zero value (no methods) runs none.
type AttackConfig struct {
	// Methods are attack names (attack.Names: rlu, idlg, llg+, zlg+, ilrg, ...).
	Methods []string `json:"methods,omitempty" yaml:"methods"`
	// Rounds are the rounds whose updates are attacked, ascending; empty
	// means every round.
	Rounds []int `json:"rounds,omitempty" yaml:"rounds"`
	// Clients is which clients of an attacked round: "selected", every
	// client that trained in it (the default), or "all": every client of
	// the population, those not selected on a probe update (trained from
	// θ^{r−1} as the round would have trained them, on a stream of their
	// own, then dropped: nothing of the run changes).
	Clients string `json:"clients,omitempty" yaml:"clients"`
	// AuxPerClass is the size per class of the attacker's labelled
	// auxiliary set, drawn class-balanced from the test split, which no
	// client trains on (default 100, the paper's).
	AuxPerClass int `json:"aux_per_class,omitempty" yaml:"aux_per_class"`
}

// Which clients an attacked round attacks.
const (
	AttackClientsSelected = "selected" // every client trained in the round
	AttackClientsAll      = "all"      // and every other client, on a probe update
)

// ProbeRounds returns the rounds whose unselected clients train probe
// updates for the attacks; nil unless clients is "all". Empty Rounds means
// every round of rounds.
func (a AttackConfig) ProbeRounds(rounds int) []int {
	if !a.Active() || a.Clients != AttackClientsAll {
		return nil
	}
	if len(a.Rounds) > 0 {
		return slices.Clone(a.Rounds)
	}
	all := make([]int, rounds)
	for i := range all {
		all[i] = i + 1
	}
	return all
}

// DefaultAuxPerClass is Chen & Vikalo's auxiliary set, 100 per class.
const DefaultAuxPerClass = 100

// StreamID is the Point of c's random streams (fl.Key): its PointID
// computed without the attack block, which only observes the run, and with
// the dataset named by dataset.StreamName. A point with attacks therefore
// draws what the same point without them draws, and computes the same
// models; a point on mnist-subset draws what it drew when that data was
// called mnist, so its results re-run exactly. Otherwise StreamID is
// PointID.
func StreamID(c Config) string {
	c.Attack = AttackConfig{}
	c.Dataset.Name = dataset.StreamName(c.Dataset.Name)
	return PointID(c)
}

// Active reports whether the point runs attacks.
func (a AttackConfig) Active() bool { return len(a.Methods) > 0 }

// At reports whether round r's updates are attacked.
func (a AttackConfig) At(r int) bool {
	if !a.Active() {
		return false
	}
	if len(a.Rounds) == 0 {
		return true
	}
	_, ok := slices.BinarySearch(a.Rounds, r)
	return ok
}

// finish applies the defaults of an active block and sorts its rounds.
func (a *AttackConfig) finish() {
	if !a.Active() {
		return
	}
	if a.Clients == "" {
		a.Clients = AttackClientsSelected
	}
	if a.AuxPerClass == 0 {
		a.AuxPerClass = DefaultAuxPerClass
	}
	slices.Sort(a.Rounds)
}

// validateAttack checks the attack block.
func (c Config) validateAttack() []error {
	a := c.Attack
	var errs []error
	bad := func(format string, v ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(v, ErrInvalid)...))
	}
	if !a.Active() {
		if len(a.Rounds) > 0 || a.Clients != "" || a.AuxPerClass != 0 {
			bad("attack has no methods; list some in attack.methods (e.g. [rlu, llg+]) or drop the block")
		}
		return errs
	}
	seen := map[string]bool{}
	for i, m := range a.Methods {
		if _, err := attack.New(m); err != nil {
			bad("attack.methods[%d]: %v", i, err)
		}
		if seen[m] {
			bad("attack.methods lists %q twice; list each method once", m)
		}
		seen[m] = true
	}
	for i, r := range a.Rounds {
		if r < 1 || r > c.Rounds {
			bad("attack.rounds[%d] = %d is outside the point's rounds 1..%d", i, r, c.Rounds)
		}
		if i > 0 && r == a.Rounds[i-1] {
			bad("attack.rounds lists round %d twice; list each round once", r)
		}
	}
	if a.Clients != AttackClientsSelected && a.Clients != AttackClientsAll {
		bad("attack.clients = %q is unknown; use %s (every client that trained in an attacked round) or %s (every client, the others on probe updates)", a.Clients, AttackClientsSelected, AttackClientsAll)
	}
	if a.AuxPerClass < 1 || a.AuxPerClass > 10000 {
		bad("attack.aux_per_class = %d; use 1 to 10000 samples per class (the paper: 100)", a.AuxPerClass)
	}
	return errs
}
