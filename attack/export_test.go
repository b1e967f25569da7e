package attack

// Internals under test.

// History returns h of the flat coordinates idx (correction.go).
func History(in Input, idx []int) []float64 { return in.history(idx) }

// Signal returns u = (Δb + h)/(η·Σρ) of the bias (correction.go).
func Signal(in Input) ([]float64, error) {
	_, u, err := in.signal()
	return u, err
}
