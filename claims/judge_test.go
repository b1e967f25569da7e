package claims

import "testing"

func f(x float64) *float64 { return &x }

// TestJudge: each kind's rules at and around their boundaries (the package
// doc states them).
func TestJudge(t *testing.T) {
	pos := Claim{Kind: Direction, Direction: Positive}
	neg := Claim{Kind: Direction, Direction: Negative}
	tol := Claim{Kind: Tolerance, Paper: f(0.865), Tolerance: f(0.02)}
	tolDir := Claim{Kind: Tolerance, Paper: f(0.865), Tolerance: f(0.02), Direction: Positive, Reference: f(0.5)}
	tolNeg := Claim{Kind: Tolerance, Paper: f(-19), Tolerance: f(5), Direction: Negative} // reference 0
	up := Claim{Kind: Ratio, Paper: f(2.5), Tolerance: f(0.2)}                            // reproduced in [2, 3]
	down := Claim{Kind: Ratio, Paper: f(0.7), Tolerance: f(0.25)}                         // in [0.525, 0.875]
	tests := []struct {
		name string
		give Claim
		v    Value
		want Verdict
	}{
		{"positive, interval above 0", pos, Value{Value: 0.3, Lo: f(0.1), Hi: f(0.5)}, Reproduced},
		{"positive, interval touches 0", pos, Value{Value: 0.3, Lo: f(0), Hi: f(0.6)}, DirectionOnly},
		{"positive, interval covers 0", pos, Value{Value: 0.3, Lo: f(-0.1), Hi: f(0.7)}, DirectionOnly},
		{"positive, no interval", pos, Value{Value: 0.3}, DirectionOnly},
		{"positive, value 0", pos, Value{Value: 0}, NotReproduced},
		{"positive, value below 0", pos, Value{Value: -0.3, Lo: f(-0.5), Hi: f(-0.1)}, NotReproduced},
		{"negative, interval below 0", neg, Value{Value: -2, Lo: f(-3), Hi: f(-1)}, Reproduced},
		{"negative, interval covers 0", neg, Value{Value: -2, Lo: f(-5), Hi: f(1)}, DirectionOnly},
		{"negative, value above 0", neg, Value{Value: 2, Lo: f(1), Hi: f(3)}, NotReproduced},

		{"tolerance, inside", tol, Value{Value: 0.85}, Reproduced},
		{"tolerance, at the edge", tol, Value{Value: 0.875}, Reproduced},
		{"tolerance, outside, interval reaching the band", tol, Value{Value: 0.80, Lo: f(0.70), Hi: f(0.90)}, NotReproduced},
		{"tolerance, outside, no direction", tol, Value{Value: 0.5}, NotReproduced},
		{"tolerance, outside, on the stated side", tolDir, Value{Value: 0.78}, DirectionOnly},
		{"tolerance, outside, at the reference", tolDir, Value{Value: 0.5}, NotReproduced},
		{"tolerance, outside, below the reference", tolDir, Value{Value: 0.3}, NotReproduced},
		{"tolerance, negative side of 0", tolNeg, Value{Value: -3}, DirectionOnly},
		{"tolerance, negative, inside", tolNeg, Value{Value: -15}, Reproduced},
		{"tolerance, negative, wrong side", tolNeg, Value{Value: 3}, NotReproduced},

		{"ratio, inside, interval above 1", up, Value{Value: 2.2, Lo: f(1.5), Hi: f(2.9)}, Reproduced},
		{"ratio, inside, no interval", up, Value{Value: 3}, Reproduced},
		{"ratio, inside, interval reaches 1", up, Value{Value: 2.2, Lo: f(1), Hi: f(3.4)}, DirectionOnly},
		{"ratio, too small, above 1", up, Value{Value: 1.2, Lo: f(1.1), Hi: f(1.3)}, DirectionOnly},
		{"ratio, too large", up, Value{Value: 3.1}, DirectionOnly},
		{"ratio, exactly 1", up, Value{Value: 1}, NotReproduced},
		{"ratio, below 1", up, Value{Value: 0.9, Lo: f(0.8), Hi: f(1)}, NotReproduced},
		{"ratio, negative", up, Value{Value: -2.5}, NotReproduced},
		{"ratio below 1, inside", down, Value{Value: 0.6, Lo: f(0.5), Hi: f(0.7)}, Reproduced},
		{"ratio below 1, inside, interval reaches 1", down, Value{Value: 0.8, Lo: f(0.6), Hi: f(1.0)}, DirectionOnly},
		{"ratio below 1, above 1", down, Value{Value: 2.36, Lo: f(1.5), Hi: f(3)}, NotReproduced},
	}
	for _, tt := range tests {
		if got := Judge(tt.give, tt.v); got != tt.want {
			t.Errorf("%s: Judge(%+v) = %q; want %q", tt.name, tt.v, got, tt.want)
		}
	}
}

// TestFormat: numbers, the paper's value, the criterion, ours and the
// remarks (stale revisions, unfinished points) as the tables print them.
func TestFormat(t *testing.T) {
	n := int64(3)
	tests := []struct {
		got, want string
	}{
		{Num(2.48, "×"), "2.48×"},
		{Num(-19.03, "%²"), "-19.03%²"},
		{Num(149, "rounds"), "149 rounds"},
		{Num(0.86491, ""), "0.8649"},
		{Num(0.0001234, ""), "0.0001234"},
		{Num(1.5e-7, ""), "1.5e-07"},
		{Num(123456.78, ""), "123456.8"},
		{Claim{Kind: Ratio, Paper: f(2.5), Unit: "×", PaperText: "60 vs 149 rounds", Tolerance: f(0.3)}.PaperValue(), "2.5× (60 vs 149 rounds)"},
		{Claim{Kind: Direction, Direction: Negative}.PaperValue(), "negative"},
		{Claim{Kind: Direction, Direction: Negative, PaperText: "Fig. 1b: below 0"}.PaperValue(), "Fig. 1b: below 0"},
		{Claim{Kind: Direction, Direction: Negative}.Criterion(), "interval < 0"},
		{Claim{Kind: Tolerance, Paper: f(0.5), Tolerance: f(0.01), Unit: "pp"}.Criterion(), "|ours − paper| ≤ 0.01 pp"},
		{Claim{Kind: Tolerance, Paper: f(0.9), Tolerance: f(0.02), Direction: Positive, Reference: f(0.5)}.Criterion(), "|ours − paper| ≤ 0.02; direction: > 0.5"},
		{Claim{Kind: Ratio, Paper: f(0.7), Tolerance: f(0.25)}.Criterion(), "ours/paper within ±25%, interval < 1"},
		{Result{Claim: Claim{Unit: "×"}, Ours: &Value{Value: 1.125, Lo: f(0.85), Hi: f(1.4), N: &n}}.OursText(), "1.125× [0.85, 1.4], n = 3"},
		{Result{}.OursText(), "—"},
		{Result{}.Remarks(), ""},
		{Result{Stale: []string{"algorithm/feddc r1 < r2", "algorithm/scaffold r1 < r2"}}.Remarks(),
			"stale: computed at an older revision of algorithm/feddc r1 < r2, algorithm/scaffold r1 < r2"},
		{Result{Unfinished: 1}.Remarks(), "1 point of its sweeps not finished, not read"},
		{Result{Stale: []string{"algorithm/feddc r1 < r2"}, Unfinished: 4}.Remarks(),
			"stale: computed at an older revision of algorithm/feddc r1 < r2; 4 points of its sweeps not finished, not read"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q; want %q", tt.got, tt.want)
		}
	}
}
