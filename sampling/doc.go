// Package sampling implements client-sampling schemes for federated learning.
//
// Each scheme is a pure fl.Sampler: it draws round t's clients from an
// explicit random stream and returns them with their aggregation weights
// ω_k(S_t), which the scheme fixes (Fraboni, Vidal, Kameni, Lorenzi, "A General
// Theory for Client Sampling in Federated Learning", IJCAI-22 workshop,
// arXiv:2107.12211; digested in specs/sampling-theory.md). Every scheme here
// is unbiased: E[ω_k] = p_k (Definition 1).
package sampling
