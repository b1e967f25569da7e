package algorithm

// Internals under test.

// FedFVInternal returns FedFV's g = (1/m) Σ_i g_i' after the internal
// projections (steps 1 and 2) of the updates g (clients 0 … m−1) with
// losses loss.
func FedFVInternal(alpha float64, loss []float64, g [][]float32) []float64 {
	clients := make([]int, len(g))
	for i := range clients {
		clients[i] = i
	}
	a := &fedfvAgg{a: FedFV{Alpha: alpha}, global: make([]float32, len(g[0])), clients: clients, loss: loss, g: g}
	return a.projected()
}

// FedFVInternalForm returns FedFVInternal's g computed in the named form,
// "direct" or "gram", whatever the number of clients.
func FedFVInternalForm(form string, alpha float64, loss []float64, g [][]float32) []float64 {
	clients := make([]int, len(g))
	for i := range clients {
		clients[i] = i
	}
	a := &fedfvAgg{a: FedFV{Alpha: alpha}, global: make([]float32, len(g[0])), clients: clients, loss: loss, g: g}
	order, kept := a.order()
	if form == "gram" {
		return a.projectedGram(order, kept)
	}
	return a.projectedDirect(order, kept)
}

// FedFVGramFrom is the number of selected clients from which FedFV's
// internal projections take the Gram form.
const FedFVGramFrom = fedfvGramFrom
