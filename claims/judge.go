package claims

import "math"

// Verdict is what the evidence says of a claim.
type Verdict string

// The verdicts (the package doc defines them).
const (
	Reproduced    Verdict = "reproduced"
	DirectionOnly Verdict = "direction only"
	NotReproduced Verdict = "not reproduced"
	NotRun        Verdict = "not run"
	// Failed marks a claim whose SQL failed; Evaluate also returns the
	// error.
	Failed Verdict = "error"
)

// Value is ours: the SQL's value, its interval [Lo, Hi] when it gave one,
// and N, how many seeds or pairs it averages, when it said.
type Value struct {
	Value float64  `json:"value"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
	N     *int64   `json:"n,omitempty"`
}

// Judge gives claim c's verdict on ours (the package doc states the
// rules). c must be valid (Parse checks it).
func Judge(c Claim, v Value) Verdict {
	switch c.Kind {
	case Direction:
		switch {
		case v.strictly(c.Direction, 0):
			return Reproduced
		case on(c.Direction, v.Value, 0):
			return DirectionOnly
		}
	case Tolerance:
		switch {
		case math.Abs(v.Value-*c.Paper) <= *c.Tolerance:
			return Reproduced
		case c.Direction != "" && on(c.Direction, v.Value, deref(c.Reference)):
			return DirectionOnly
		}
	case Ratio:
		side := Positive // the paper's ratio is above 1
		if *c.Paper < 1 {
			side = Negative
		}
		within := v.Value > 0 && math.Abs(v.Value / *c.Paper - 1) <= *c.Tolerance
		switch {
		case within && (v.Lo == nil || v.strictly(side, 1)):
			return Reproduced
		case on(side, v.Value, 1):
			return DirectionOnly
		}
	}
	return NotReproduced
}

// strictly says whether v's interval lies strictly on side s of ref.
func (v Value) strictly(s Side, ref float64) bool {
	if v.Lo == nil || v.Hi == nil {
		return false
	}
	if s == Positive {
		return *v.Lo > ref
	}
	return *v.Hi < ref
}

// on says whether x lies strictly on side s of ref.
func on(s Side, x, ref float64) bool {
	if s == Positive {
		return x > ref
	}
	return x < ref
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
