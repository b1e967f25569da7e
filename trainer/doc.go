// Package trainer trains and evaluates the project's models on the CPU with
// gorgonia. It is the only package that imports gorgonia: weights cross its
// boundary as flat []float32 vectors whose layout Net.Params describes.
//
// # Models
//
// Spec names an architecture; NewNet lays it out for an input shape and a
// class count:
//
//   - "logreg": one linear layer, Dim → classes.
//   - "mlp": Dim → Hidden... (ReLU) → classes; the default Hidden [200, 200]
//     on 784 inputs is FedEBA+'s MLP with 199,210 parameters
//     (specs/fedeba.md §3.1).
//   - "cnn-hics": HiCS-FL's Fashion-MNIST CNN (Chen & Vikalo, NeurIPS 2024,
//     specs/hicsfl.md §3.2, official models.py::FMNIST_CNN): conv 5×5 (32) →
//     PReLU → BatchNorm → max-pool 2×2, twice, → dropout 0.2 → linear.
//
// Tensors follow PyTorch's shapes and initialisation (Net.Init). BatchNorm
// running statistics are part of the flat vector as non-trainable buffers:
// the optimiser does not touch them, Train returns them updated, and FL
// averages them like weights. The loss is the mean softmax cross-entropy.
//
// # Local training
//
// Train runs plain SGD in PyTorch's form, on trainable parameters only:
//
//	w ← w − η·(g + λ·w)
//
// with heavy-ball momentum β (PyTorch's, no dampening) if Hyper.Momentum >
// 0; the momentum buffer starts at zero in every call. With η, β and λ as in
// Hyper and g the gradient of the minibatch's mean loss.
//
// The schedule is one of (Hyper.LocalSteps, Hyper.LocalEpochs):
//
//   - K local steps: every step draws a fresh minibatch of B indices
//     uniformly without replacement from ex.Idx (a partial Fisher–Yates
//     shuffle with r), as the client-sampling theory paper's code does
//     (specs/sampling-theory.md §4 item 6). If len(ex.Idx) ≤ B every step
//     uses all of ex.Idx, in order, and draws nothing from r for the batch.
//   - E local epochs: every epoch shuffles the running permutation of
//     ex.Idx (Fisher–Yates with r) and walks it in batches of B; the last
//     partial batch is kept (PyTorch's drop_last=False). That is
//     E·⌈n/B⌉ steps.
//
// In a step, the batch is drawn first, then the dropout masks (for nets with
// dropout), unit by unit, each dropped when r.Float64() < p and otherwise
// scaled by 1/(1−p). Nothing else reads r, the clock or any global
// generator, so equal inputs and an equal r state give bit-identical
// weights on any goroutine, alone or alongside other trainings.
//
// A NaN or ±Inf minibatch loss, weight or running statistic stops training
// with an error wrapping ErrDiverged that names the step.
//
// # Graphs and sessions
//
// A gorgonia graph has static shapes, so one is compiled per (net, batch
// size, mode) and kept in the Trainer's pool of sessions (graph, TapeMachine
// and the tensors' backing slices). A call borrows a session, copies w into
// it, fills the input, label and mask tensors in place each step, and copies
// the result out. An epoch's last partial batch and clients smaller than B
// need graphs of their own; the pool keeps at most Options.MaxIdleSessions
// idle sessions, least recently used dropped first.
//
// Where gorgonia's stock ops are wrong for us or slow, the package registers
// its own gorgonia ops with symbolic derivatives: the fused softmax
// cross-entropy, linear and convolution layers in PyTorch's weight layout
// with bias, PReLU, BatchNorm with per-channel γ, β and PyTorch semantics,
// a NaN-safe max-pool, and dropout from an injected mask (gorgonia's Dropout
// seeds its generator from the clock). Each op's documentation says why.
//
// # Errors
//
// Bad specs, hyperparameters, shapes, labels or weight lengths return errors
// wrapping ErrInvalid that name the field and the fix. Divergence wraps
// ErrDiverged. Neither is worth retrying.
package trainer
