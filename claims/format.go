package claims

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Num formats x in unit: four significant digits (integers and large
// numbers without an exponent), the unit after it, spaced when it starts with a letter ("1.2 pp", "2.5×").
func Num(x float64, unit string) string {
	var s string
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		s = strconv.FormatFloat(x, 'f', -1, 64)
	} else {
		s = strconv.FormatFloat(x, 'g', 4, 64)
		if strings.Contains(s, "e") && math.Abs(x) >= 1 {
			s = strconv.FormatFloat(x, 'f', 1, 64)
		}
	}
	if unit == "" {
		return s
	}
	if r := []rune(unit)[0]; unicode.IsLetter(r) {
		return s + " " + unit
	}
	return s + unit
}

// PaperValue is the paper's value as tables show it: the number with its
// unit and the paper's text beside it; for a direction claim without a
// number, the text or the claimed sign.
func (c Claim) PaperValue() string {
	var parts []string
	if c.Paper != nil {
		parts = append(parts, Num(*c.Paper, c.Unit))
	}
	if c.PaperText != "" {
		if len(parts) > 0 {
			parts = append(parts, "("+c.PaperText+")")
		} else {
			parts = append(parts, c.PaperText)
		}
	}
	if len(parts) == 0 {
		return string(c.Direction)
	}
	return strings.Join(parts, " ")
}

// Criterion says what reproduces the claim, in a few symbols.
func (c Claim) Criterion() string {
	sign := func(s Side, ref float64) string {
		if s == Positive {
			return "> " + Num(ref, "")
		}
		return "< " + Num(ref, "")
	}
	switch c.Kind {
	case Direction:
		return "interval " + sign(c.Direction, 0)
	case Tolerance:
		s := "|ours − paper| ≤ " + Num(*c.Tolerance, c.Unit)
		if c.Direction != "" {
			s += "; direction: " + sign(c.Direction, deref(c.Reference))
		}
		return s
	case Ratio:
		side := Positive
		if *c.Paper < 1 {
			side = Negative
		}
		return fmt.Sprintf("ours/paper within ±%s%%, interval %s", Num(100**c.Tolerance, ""), sign(side, 1))
	}
	return ""
}

// OursText is ours as tables show it: "1.12 [0.85, 1.4], n = 3", or "—"
// when there is no value.
func (r Result) OursText() string {
	v := r.Ours
	if v == nil {
		return "—"
	}
	s := Num(v.Value, r.Claim.Unit)
	if v.Lo != nil {
		s += " [" + Num(*v.Lo, "") + ", " + Num(*v.Hi, "") + "]"
	}
	if v.N != nil {
		s += fmt.Sprintf(", n = %d", *v.N)
	}
	return s
}

// StaleText says which methods some point the claim read was computed at
// an older revision of (Stale), or "" when none was.
func (r Result) StaleText() string {
	if len(r.Stale) == 0 {
		return ""
	}
	return "stale: computed at an older revision of " + strings.Join(r.Stale, ", ")
}

// UnfinishedText says how many points of the sweeps read had not finished,
// and so were not read (Unfinished), or "" when none.
func (r Result) UnfinishedText() string {
	switch r.Unfinished {
	case 0:
		return ""
	case 1:
		return "1 point of its sweeps not finished, not read"
	}
	return fmt.Sprintf("%d points of its sweeps not finished, not read", r.Unfinished)
}

// Remarks are StaleText and UnfinishedText, those that say something,
// joined by "; ".
func (r Result) Remarks() string {
	var out []string
	for _, s := range []string{r.StaleText(), r.UnfinishedText()} {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}
