// Package trainer trains and evaluates the project's models on the CPU with
// gorgonia. It is the only package that imports gorgonia: weights cross its
// boundary as flat []float32 vectors whose layout Net.Params describes.
//
// # Models
//
// Spec names an architecture; NewNet lays it out for an input shape and a
// class count. Each builder's documentation in net.go gives the layers and
// the paper or code it follows; the parameter counts are tested
// (TestParamCounts):
//
//   - "logreg": one linear layer, Dim → classes (7,850 on Fashion-MNIST).
//   - "mlp": Dim → Hidden... (Activation, default ReLU) → classes; the
//     default Hidden [200, 200] on 784 inputs is FedEBA+'s MLP with 199,210
//     parameters (specs/fedeba.md §3.1).
//   - "cnn-hics": HiCS-FL's Fashion-MNIST CNN of the paper (Chen & Vikalo,
//     NeurIPS 2024, specs/hicsfl.md §3.2, models.py::FMNIST_CNN): conv 5×5
//     (32) → PReLU → BatchNorm → max-pool 2×2, twice, → dropout 0.2 →
//     linear; 31,724 trainable parameters and 128 BatchNorm buffers.
//   - "cnn-hics-3conv": the model the official HiCS-FL servers use
//     (cnn.py::FMNIST_CNN): three padded 3×3 convolutions with PReLU and
//     BatchNorm, two pools, FC 3,136 → 64 → classes; Xavier-uniform (ReLU
//     gain) weights; 229,709 trainable, 256 buffers.
//   - "cnn-hics-cifar": HiCS-FL's CIFAR-10 CNN (cnn.py::CIFAR10_CNN), also
//     the client-sampling theory paper's CNN_CIFAR_dropout: three 3×3
//     convolutions with dropout 0.2, FC 1,024 → 64 → classes; 122,570.
//   - "cnn-fedeba-cifar": FedEBA+'s CIFAR-10 CNN (easyFL): two 5×5
//     convolutions (64), FC 1,600 → 384 → 192 → classes; 797,962.
//   - "lenet": RLU's LeNet-5 (specs/rlu.md §4) with Activation relu, tanh
//     or sigmoid; 62,006 on 3×32×32, 44,426 on 1×28×28 (= NIID-Bench's
//     SimpleCNN-MNIST with ReLU).
//   - "resnet18": ResNet-18 for 32×32 images as in FNR-FL's code: 3×3
//     stem, BasicBlocks [2, 2, 2, 2], 1×1 shortcuts, global average pool;
//     11,173,962 trainable, 9,600 buffers.
//
// Tensors follow PyTorch's shapes and, unless a builder says otherwise,
// its default initialisation (Net.Init). BatchNorm running statistics are
// part of the flat vector as non-trainable buffers: the optimiser does not
// touch them, Train returns them updated, and FL averages them like
// weights. Net.Output is the output layer's weight and bias (what HiCS-FL,
// the label-recovery attacks and FNR-FL read) and Net.Embedding the width
// of the representation that feeds it; Trainer.Forward returns both the
// embeddings and the logits of a set of samples.
//
// The layers are ours, registered with gorgonia as ops with symbolic
// derivatives: linear (flattening a 4-D input), convolution with stride,
// zero padding and optional bias, ReLU, Tanh, Sigmoid, PReLU, BatchNorm2d
// with PyTorch semantics, NaN-safe 2×2 max-pool, global average pool,
// residual add, inverted dropout from a mask drawn from the Train call's
// stream, the embedding tap and the fused softmax cross-entropy. Each op's
// documentation says why stock gorgonia was not used. Every layer's
// gradient is checked against central differences (grad_test.go) and the
// convolution and pools against their definitions (op_test.go).
//
// # Local training
//
// Train runs local training with Hyper's optimiser, on trainable
// parameters only, in PyTorch's form (optim.go):
//
//	sgd:    d = g + λ·w;  if β > 0: b ← β·b + d, d = nesterov ? d + β·b : b;  w ← w − η_k·d
//	adam:   g ← g + λ·w;  m ← m + (1−β1)·(g − m);  v ← β2·v + (1−β2)·g²
//	        w ← w − (η_k/(1−β1^t))·m/(√v/√(1−β2^t) + ε)      (β1, β2, ε = 0.9, 0.999, 1e-8)
//	adamw:  w ← w·(1 − η_k·λ), then adam without λ·w
//
// with g the gradient of the minibatch's mean loss. The optimiser's state
// (momentum buffer, Adam's moments and step count) starts at zero in every
// call, as a fresh torch optimizer per round does, unless the Objective
// carries it across calls (Objective.State).
//
// Hyper.LR is the round's learning rate η. Within the call, η_k follows
// Hyper.Schedule over the call's K local steps: constant; step
// (η·γ^⌊k/StepSize⌋, torch StepLR stepped per local step); cosine
// (η_min + (η − η_min)·(1 + cos(πk/K))/2, torch CosineAnnealingLR with
// T_max = K). A per-round schedule is the caller's: the engine passes
// sweep.Config.RoundLR(t) = lr·lr_decay^(t−1) for round t (easyFL's
// learning_rate_decay, FedEBA+'s d = 0.999).
//
// The minibatches follow (Hyper.LocalSteps, Hyper.LocalEpochs):
//
//   - K local steps: every step draws a fresh minibatch of B indices
//     uniformly without replacement from ex.Idx (a partial Fisher–Yates
//     shuffle with r), as the client-sampling theory paper's code does
//     (specs/sampling-theory.md §4 item 6). If len(ex.Idx) ≤ B every step
//     uses all of ex.Idx, in order, and draws nothing from r for the batch.
//   - E local epochs: every epoch shuffles the running permutation of
//     ex.Idx (Fisher–Yates with r) and walks it in batches of B; the last
//     partial batch is kept (PyTorch's drop_last=False). That is
//     E·⌈n/B⌉ steps. With Hyper.InOrder every epoch walks ex.Idx in its
//     given order and draws nothing from r for the batches
//     (shuffle=False, as FNR-FL's passes over the public set).
//
// In a step, the batch is drawn first, then the dropout masks (for nets with
// dropout), mask by mask in layer order, unit by unit, each dropped when
// r.Float64() < p and otherwise scaled by 1/(1−p). Nothing else reads r,
// the clock or any global generator, so equal inputs and an equal r state
// give bit-identical weights on any goroutine, alone or alongside other
// trainings.
//
// A NaN or ±Inf minibatch loss, weight or running statistic stops training
// with an error wrapping ErrDiverged that names the step.
//
// # FL local objectives
//
// TrainObjective takes an Objective, the one extension point through which
// an FL algorithm changes a client's local training. Every step descends
// along
//
//	h = (1 − α)·∇[CE + ν·ℓ_con] + μ·(w − a) + v + α·g̃
//
// before the optimiser's weight decay and momentum. Its payloads (anchor,
// control variates, the client's FedDyn state, the fair gradient, the
// previous models' embeddings) are flat vectors from the caller. Where
// each paper's equation lives:
//
//   - FedProx, Proximal(μ): μ/2·‖w − w⁰‖² (Li et al., MLSys 2020, Eq. (2));
//     objective.go, applied in optim.go applyObjective.
//   - SCAFFOLD, Scaffold(c, c_i): g + c − c_i (Karimireddy et al., ICML
//     2020, Alg. 1 line 10); objective.go as the linear term v.
//   - FedDyn, FedDyn(α, ∇L_i(θ_i^{t−1})): −⟨∇L_i(θ_i^{t−1}), w⟩ +
//     α/2·‖w − θ^{t−1}‖² (Acar et al., ICLR 2021, Alg. 1); objective.go.
//   - FedEBA+, Aligned(α, g̃): h = (1 − α)·∇F_i(x; ξ) + α·g̃
//     (specs/fedeba.md §1.5, Eq. (11)); the (1 − α) scales the loss's
//     gradient seed in op_xent.go, α·g̃ is added in applyObjective. Its
//     ∇F_i(x_t) at the global model comes from Trainer.Gradient.
//   - MOON, MOON(ν, τ, zg, zp): ν·ℓ_con on the embedding with temperature
//     τ and the global and previous local models' embeddings (Li, He &
//     Song, CVPR 2021, Eq. (3)); op_embed.go, inside the graph, so its
//     gradient reaches every layer below the embedding. zg and zp come from
//     Trainer.Forward.
//
// TestObjectiveGradient checks each term against central differences of
// the objective it claims; TestObjectiveExact checks bit for bit that
// Train applies g + c − c_i and α = 1 as written.
//
// # Graphs, sessions and speed
//
// A gorgonia graph has static shapes, so one is compiled per (net, batch
// size, mode) and kept in the Trainer's pool of sessions (graph, tape and
// the tensors' backing slices). gorgonia builds the graph and its symbolic
// gradient; the tape (tape.go) runs the ops in topological order in place
// of gorgonia's TapeMachine, which allocates on every instruction. A call
// borrows a session, copies w into it (one copy: every parameter tensor and
// running statistic is a view of one flat slice), fills the input, label
// and mask tensors in place each step, and copies the result out; gradient
// ops write into views of one flat gradient slice, and ops reuse their
// output buffers, so a training step allocates nothing
// (TestNoAllocationPerStep). Output buffers whose values are never live at
// the same time share memory, planned when the session is built
// (bufplan.go): ResNet-18's 836 MB of buffers at batch 50 take 384 MB. An epoch's last partial
// batch and clients smaller than B need graphs of their own; the pool keeps
// at most Options.MaxIdleSessions idle sessions, least recently used
// dropped first. A Trainer is safe for concurrent use, and the engine
// trains a round's clients on parallel goroutines; results do not depend on
// it (TestDeterminism).
//
// On CPUs with AVX-512 the Winograd convolutions with at least 64 input
// and 48 output channels, and the 3×3 im2col ones with channels in whole
// vectors, run "channel lanes" (internal/conv's winograd_cl.go and
// im2col_cl.go, assembly in internal/wino): a vector holds one position of
// 16 channels, the planes go in and out of that layout by 16×16
// transposes, and the products run with their operands exchanged, the
// same multiply-adds in the same order along k, so the bits are those of
// the paths below (TestChannelLaneWinograd, TestChannelLaneIm2col).
//
// Almost all the time goes to matrix products: linear layers are one gemm
// each way, convolutions im2col plus gemm over chunks of samples, or, for
// 3×3 and 5×5 stride-1 ones with at least 16 input channels, Winograd's
// F(4×4, 3×3) (outputs at least 16 wide), F(2×2, 3×3) or F(2×2, 5×5) as 36
// or 16 smaller products in the transformed domain (the kernels in
// internal/conv: winograd.go, winograd43.go, winograd5.go, winograd45.go,
// im2col.go, which op_conv.go drives; Options.Kernels (KernelChoice) can
// turn them off or keep F(2×2, ·), numerics of their own). On CPUs
// with AVX-512 or AVX2 (with FMA) both builds compute float32 products with
// our own packed gemm (internal/gemm, internal/packed): a register-blocked
// kernel over packed blocks of A and B (B read in place where it is stored
// k×n; 14×32 with AVX-512, 6×16 with AVX2) and a dot-product kernel for
// A·Bᵀ (4×6, 4×3), in Go assembly. Every entry of C is summed in one fixed
// order whatever the kernel's blocking, so both instruction sets give the
// same bits (TestSgemmOrder); on the models' shapes it runs 1.4–2×
// OpenBLAS's Haswell kernels on an AVX-512 CPU (BenchmarkSgemm), and it
// needs no cgo. Elsewhere, or with KernelChoice.BLAS, the build's BLAS computes
// them: gonum's pure-Go BLAS by default, with products rewritten into the
// orientation its kernels run fastest (internal/gemm/gonum.go), or with the build
// tag openblas OpenBLAS through gonum's netlib binding, single-threaded
// per call so that clients run in parallel and results stay deterministic,
// on the widest kernels the CPU supports (Debian's OpenBLAS 0.3.21 falls
// back to SSE3 kernels on CPUs newer than itself, a factor of 4 on the
// development machine's Xeon; internal/gemm/openblas.go; make openblas). Plain SGD
// runs inside the linear layers' weight-gradient gemms (fusedSGD in
// op_linear.go), which saves the MLP a pass over its weights and gradient
// every step. Evaluation graphs multiply by their linear weights transposed
// once per loaded model (linearOp.transposeW in op_linear.go), on the main kernel rather
// than the dot-product one; their outputs agree with the training graph's
// forward pass to rounding, not bit for bit. Portable elementwise float32 loops (ReLU, PReLU, max-pool)
// are branch-free and their sums run in four float64 lanes; both builds
// compile with GOEXPERIMENT=simd and replace the hot loops (ReLU, PReLU,
// BatchNorm, max-pool, per-channel sums) with AVX-512 or AVX2 kernels on
// CPUs that have them (kernels.go, internal/vector), whose
// sums agree bit for bit. `starter bench`
// measures samples/s and GFLOP/s per model against the machine's SGEMM
// rate.
//
// # Errors
//
// Bad specs, hyperparameters, objectives, shapes, labels or weight lengths
// return errors wrapping ErrInvalid that name the field and the fix.
// Divergence wraps ErrDiverged. Neither is worth retrying.
package trainer
