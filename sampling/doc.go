// Package sampling implements client-sampling schemes for federated learning.
//
// Each scheme is a pure fl.Sampler: it draws round t's clients from an
// explicit random stream and returns them with their aggregation weights
// ω_k(S_t), which the scheme fixes (Fraboni, Vidal, Kameni, Lorenzi, "A General
// Theory for Client Sampling in Federated Learning", IJCAI-22 workshop,
// arXiv:2107.12211; digested in specs/sampling-theory.md). The schemes of
// that paper (md, uniform, binomial, poisson, clustered) are unbiased,
// E[ω_k] = p_k (Definition 1), and implement ClosedForm: their Σ, α, VarSum,
// γ and E[N] have closed forms (App. A). pow-d and HiCS-FL's random baseline
// are biased unless p_k ≡ 1/n and have none; Characterize estimates any
// sampler's characteristics by Monte Carlo.
package sampling
