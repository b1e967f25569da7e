package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flsweep/flsweep/errkind"
)

var (
	errBad     = errkind.New(errkind.Invalid, "invalid input")
	errBad2    = errkind.New(errkind.Invalid, "invalid input")
	errCorrupt = errkind.New(errkind.Damaged, "corrupt")
	errNaN     = errkind.New(errkind.Diverged, "diverged")
	errRefused = errkind.New(errkind.Refused, "refused")
)

// TestOf: the kind survives wrapping, joins take the greatest kind in
// either order, unkinded errors are transient.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want errkind.Kind
	}{
		{nil, errkind.Transient},
		{errors.New("connection reset"), errkind.Transient},
		{fmt.Errorf("train.lr = -1: %w", errBad), errkind.Invalid},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", errCorrupt)), errkind.Damaged},
		{errors.Join(errBad, errCorrupt), errkind.Damaged},
		{errors.Join(errCorrupt, errBad), errkind.Damaged},
		{fmt.Errorf("%w after %w", errNaN, errCorrupt), errkind.Diverged},
		{fmt.Errorf("%w after %w", errCorrupt, errNaN), errkind.Diverged},
		{fmt.Errorf("worker: %w", errRefused), errkind.Refused},
	} {
		if got := errkind.Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %v; want %v", c.err, got, c.want)
		}
	}
	if errors.Is(fmt.Errorf("x: %w", errBad), errBad2) {
		t.Error("two sentinels with one message are one error to errors.Is")
	}
	for k, retry := range map[errkind.Kind]bool{errkind.Transient: true, errkind.Refused: true, errkind.Invalid: false, errkind.Damaged: false, errkind.Diverged: false} {
		if k.Retryable() != retry {
			t.Errorf("%v.Retryable() = %v", k, !retry)
		}
	}
}
