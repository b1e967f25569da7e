package sweep

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPointIDForm: IDs are p + 32 hex digits; ValidPointID also accepts an
// older build's p + 10, and LegacyPointID tells them apart.
func TestPointIDForm(t *testing.T) {
	id := PointID(Defaults())
	if len(id) != 1+PointIDHex || ValidPointID(id) != nil || LegacyPointID(id) {
		t.Errorf("PointID(Defaults()) = %q; want p + %d hex digits, valid and not legacy", id, PointIDHex)
	}
	old := id[:1+LegacyPointIDHex]
	if ValidPointID(old) != nil || !LegacyPointID(old) {
		t.Errorf("%q: want a valid legacy ID", old)
	}
	for _, bad := range []string{"", "p", id + "0", id[:20], "P" + id[1:], strings.ToUpper(id), "p../" + id[4:], id[:1+PointIDHex-1] + "g"} {
		if err := ValidPointID(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidPointID(%q) = %v; want ErrInvalid", bad, err)
		}
	}
}

// shortIDs makes PointID use digits hex digits for the rest of the test, so
// that collisions happen.
func shortIDs(t *testing.T, digits int) {
	t.Helper()
	idHex = digits
	t.Cleanup(func() { idHex = PointIDHex })
}

// TestIDCollision: with 1-digit IDs (16 values) a grid of 40 learning rates
// must collide; the collision is reported as such, not as "the same
// experiment", and a true duplicate still is.
func TestIDCollision(t *testing.T) {
	var lrs []string
	for i := 1; i <= 40; i++ {
		lrs = append(lrs, fmt.Sprint(float64(i)/1000))
	}
	spec := "name: c\ngrid:\n  train.lr: [" + strings.Join(lrs, ", ") + "]\n"
	shortIDs(t, 1)
	_, err := Parse("c.yaml", []byte(spec))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "different configurations but the same ID") ||
		strings.Contains(err.Error(), "same experiment") {
		t.Errorf("Parse with colliding IDs: %v; want an ID-collision error", err)
	}
	// A real duplicate is the same experiment, whatever the ID length.
	_, err = Parse("d.yaml", []byte("name: d\ngrid:\n  train.lr: [0.1, 0.1]\n"))
	if err == nil || !strings.Contains(err.Error(), "same experiment") {
		t.Errorf("Parse with a duplicate grid value: %v; want \"same experiment\"", err)
	}
	// At full length the 40 points are distinct.
	idHex = PointIDHex
	sw, err := Parse("c.yaml", []byte(spec))
	if err != nil || len(sw.Points) != 40 {
		t.Fatalf("Parse at full ID length: %v", err)
	}
}

// TestStreamIDOfTheSubset: a point on mnist-subset draws the streams of the
// same point on mnist (the subset's name when its results were computed), so
// those results re-run exactly; its ID is its own.
func TestStreamIDOfTheSubset(t *testing.T) {
	full, subset := Defaults(), Defaults()
	full.Dataset.Name, subset.Dataset.Name = "mnist", "mnist-subset"
	if StreamID(subset) != StreamID(full) {
		t.Errorf("StreamID(mnist-subset) = %s; want StreamID(mnist) = %s", StreamID(subset), StreamID(full))
	}
	if PointID(subset) == PointID(full) {
		t.Errorf("PointID(mnist-subset) = PointID(mnist) = %s; want different IDs", PointID(full))
	}
	if fm := Defaults(); StreamID(fm) != PointID(fm) {
		t.Errorf("StreamID(fmnist) = %s; want its PointID %s", StreamID(fm), PointID(fm))
	}
}
