// Package attack implements label-recovery attacks on federated learning:
// an honest-but-curious server that receives client k's update Δθ_k =
// θ_k − θ^t recovers the label histogram of the samples the client
// trained on in the round. The main method is RLU (Chen & Vikalo,
// "Recovering Labels from Local Updates in Federated Learning", ICML 2024,
// PMLR 235, arXiv:2405.00955); the baselines are iDLG, LLG+ and LLG*,
// ZLG+ and iLRG.
//
// The package is plain Go: it reads forward and backward passes of the
// server's own auxiliary data through package trainer and nothing else of
// the system. An attack's Input holds what the server knows and no sample,
// label or count of the client; scoring a recovered histogram against the
// truth (Evaluate, LabelCounts) takes the truth explicitly.
//
// # RLU
//
// Output layer q = W·e + b with N classes, mean cross-entropy over a batch
// B. The bias gradient of a sample is s(x) − onehot(y), s = softmax(q)
// (§3.2, Eq. (4)), so the expected bias update of one SGD step is (Eq. (9))
//
//	E[Δb_j] = (η/|B|)·( N_j Σ_{n≠j} S_{j,n} − Σ_{n≠j} N_n S_{n,j} )
//
// with N_j the count of class j in B and S_{n,j} = E[s_j(x) | y = n] the
// "erroneous confidence" of the model (Eq. (6)), which the server
// estimates on its auxiliary set (Confidences). With z = N/|B| and u the
// bias signal this is u = A z,
//
//	A[j][j] = Σ_{n≠j} S[j][n],   A[j][n] = −S[n][j]
//
// (Coefficients; every column of A sums to 0), and the counts solve the
// simplex-constrained least squares (Eq. (10))
//
//	z* = argmin ‖A z − u‖²  subject to  z ≥ 0, Σ z = 1
//
// exactly (qp.SimplexLeastSquares), rounded by largest remainders to the
// T_k = m·|B| samples the client processed (LargestRemainder, Solve).
//
// Over m local steps (§3.2.2, Eq. (11)) S is the mean of S at θ^t and at
// the returned θ^t + Δ, and an optional posterior search (Posterior,
// Alg. 2) refines the counts by simulating the logits' drift. Other
// optimisers and FL schemes (§3.3, Eq. (16), Table 1) weigh step τ's
// gradient by ρ^(τ) and add a known history term h:
//
//	Δb_j = −η Σ_τ ρ^(τ) g_j^(τ) − h_j,   so   u = (Δb + h)/(η·Σ_τ ρ^(τ))
//
// for SGD with momentum or Nesterov, FedProx, SCAFFOLD, FedDyn, FedDC and
// (ours) weight decay, computed from the optimiser's own recursion (Rho,
// correction.go, whose comment lists Table 1's closed forms). Adam is
// outside the method: its updates are normalised elementwise, and the
// package answers with a heuristic of ours and flags the Result.
//
// # Where we depart from the paper
//
// Three readings of the paper would break a literal implementation
// (tests pin the ones chosen):
//
//   - Orientation of A: the text and Alg. 1 say "the (n, j) off-diagonal
//     entry is a_{n,j} = −S_{n,j}"; read as row n, column j that is the
//     transpose of what Eq. (9) requires. We follow Eq. (9) (RLU.Transposed
//     is the literal reading, as an ablation).
//   - Scale over m steps: Eq. (10) and Alg. 1 use u = Δb/η also for m > 1,
//     but Eq. (11) sums m steps, so u = Δb/(η·m) (Δb/(η·Σρ) in general);
//     without it the recovered histogram is badly wrong (RLU.Scale is the
//     ablation).
//   - Rounding and totals: Alg. 1 rounds ⌊|B|·z⌉, which need not sum to the
//     known total, and writes |B| where m·|B| samples were processed; we
//     round by largest remainders to T_k.
//
// The official code (CityChan/Recovering-Label-from-Update) attacks the
// per-step gradients rather than the update and uses a closed form instead
// of the least squares; RLU.ClosedForm is that closed form,
// z_j ∝ max(0, u_j + mean_{n≠j} S[n][j]).
//
// # Baselines
//
// The baselines read the update as plain SGD's, ḡ = −Δ/(η·m), the mean
// step gradient of the output layer, as in Chen & Vikalo's benchmark:
// IDLG (one sample), LLG (LLG+ with the auxiliary set, LLG* with dummy
// inputs), ZLG (ZLG+) and ILRG. Their counts are rounded to T_k by largest
// remainders like RLU's.
//
// # Errors
//
// Invalid input is fl.ErrInvalid; a method that cannot run on an input is
// ErrNotApplicable. Results are deterministic: equal inputs (and an equal
// stream, for the posterior search) give equal results.
package attack
