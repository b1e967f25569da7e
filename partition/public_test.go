package partition

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReserve: perClass samples of every class, distinct, none in the
// pool; pool ∪ public is every index; the same stream gives the same set.
func TestReserve(t *testing.T) {
	labels := make([]uint8, 1000)
	for i := range labels {
		labels[i] = uint8(i * 7 % 10)
	}
	public, pool, err := Reserve(labels, 10, 30, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	per := make([]int, 10)
	seen := map[int]bool{}
	for _, i := range public {
		if seen[i] {
			t.Fatalf("sample %d reserved twice", i)
		}
		seen[i] = true
		per[labels[i]]++
	}
	for j, c := range per {
		if c != 30 {
			t.Errorf("class %d: %d public samples; want 30", j, c)
		}
	}
	for _, i := range pool {
		if seen[i] {
			t.Fatalf("sample %d is both public and in the pool", i)
		}
		seen[i] = true
	}
	if len(seen) != len(labels) || !slices.IsSorted(pool) {
		t.Errorf("public ∪ pool covers %d of %d indices (pool sorted: %v)", len(seen), len(labels), slices.IsSorted(pool))
	}
	// A pass in order sees the classes mixed: the first 30 are not one class.
	first := map[uint8]bool{}
	for _, i := range public[:30] {
		first[labels[i]] = true
	}
	if len(first) < 5 {
		t.Errorf("the first 30 public samples span %d classes; want them shuffled", len(first))
	}
	again, _, _ := Reserve(labels, 10, 30, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(public, again) {
		t.Error("the same stream reserved another set")
	}
	if _, _, err := Reserve(labels, 10, 100, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("reserving every sample of a class: no error")
	}
	lists := [][]int{{0, 2}, {1}}
	Lift(lists, []int{5, 7, 9})
	if !slices.Equal(lists[0], []int{5, 9}) || !slices.Equal(lists[1], []int{7}) {
		t.Errorf("Lift = %v", lists)
	}
}
