// Package errkind is the project's one error vocabulary, in the manner of
// gocloud's gcerrors: a package declares its sentinels with a kind (New),
// wraps them with %w as usual, and Of tells any caller what the error means
// for the work that raised it. What is retried, recorded or recovered from
// is decided from the kind alone (activities.toTemporal, the in-process
// runner), so a new package's sentinel is classified the moment it is
// declared, and nothing depends on the order in which sentinels are tested.
package errkind

// Kind is what an error means for the work that raised it. The kinds are
// ordered: when one error wraps several (errors.Join, two %w verbs), Of
// returns the greatest.
type Kind int

const (
	// Transient is every error without a kind (a bucket's or network's
	// failure): the work is retried with backoff.
	Transient Kind = iota
	// Invalid is bad input that can never work (a spec, an option, an
	// argument, missing data): never retried; the message names the field
	// and the fix.
	Invalid
	// Refused is a task this worker must not compute (it belongs to
	// another bucket or build): offered again, to the right worker.
	Refused
	// Damaged is a stored file that failed its checks, or is missing
	// although the protocol guarantees it: the point restarts from its last
	// good checkpoint.
	Damaged
	// Diverged is a numerical blow-up (NaN or Inf): the point's outcome,
	// recorded, not retried.
	Diverged
)

var names = [...]string{"transient", "invalid", "refused", "damaged", "diverged"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(names) {
		return "kind(?)"
	}
	return names[k]
}

// Retryable reports whether work that failed with k may succeed if run again.
func (k Kind) Retryable() bool { return k == Transient || k == Refused }

// sentinel is an error value with a kind.
type sentinel struct {
	kind Kind
	msg  string
}

func (s *sentinel) Error() string { return s.msg }

// New returns a sentinel error of kind k with message msg. Each call
// returns a distinct value, so errors.Is tells sentinels apart as it
// does errors.New's.
func New(k Kind, msg string) error { return &sentinel{kind: k, msg: msg} }

// Of returns the kind of err: the greatest kind of the sentinels in its
// tree, Transient when it holds none (or err is nil).
func Of(err error) Kind {
	k := Transient
	walk(err, func(e error) {
		if s, ok := e.(*sentinel); ok && s.kind > k {
			k = s.kind
		}
	})
	return k
}

// walk calls f on every error of err's tree, as errors.Is visits them.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return Of(err) == k }
