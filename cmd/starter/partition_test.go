package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/store"
)

const partitionSpec = `
name: pshow
dataset: {name: synthetic}
partition: {scheme: hics, clients: 12, alphas: [0.05, 1], noise: 0.2}
model: {arch: mlp, hidden: [8]}
clients_per_round: 3
seeds: [1, 2]
`

// TestPartitionShow runs `starter partition show` on generated data: the
// JSON has the form, the PNG decodes, and the partitions rows land
// at the point's key in the blob store.
func TestPartitionShow(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(spec, []byte(partitionSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := "file://" + filepath.ToSlash(filepath.Join(dir, "blob")) + "?create_dir=1&metadata=skip"
	pngPath := filepath.Join(dir, "h.png")
	var out, errOut bytes.Buffer
	err := execute(context.Background(), root(), []string{"partition", "show", "-f", spec, "--point", "1", "--json", "--png", pngPath, "--blob", blob}, &out, &errOut)
	if err != nil {
		t.Fatalf("partition show: %v\n%s", err, errOut.String())
	}
	var raw struct {
		Clients []map[string]json.RawMessage `json:"clients"`
		Summary map[string]json.RawMessage   `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out.String())
	}
	if len(raw.Clients) != 12 {
		t.Fatalf("%d clients in the JSON; want 12", len(raw.Clients))
	}
	for _, c := range raw.Clients {
		var keys []string
		for k := range c {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"entropy", "group", "id", "label_counts", "test", "train"}; !slices.Equal(keys, want) {
			t.Fatalf("client keys = %v; want exactly %v", keys, want)
		}
	}
	var rep partitionReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, c := range rep.Clients {
		sum := 0
		for _, x := range c.LabelCounts {
			sum += x
		}
		if c.ID != k || c.Group != k/6 || sum != c.Train || c.Test == 0 {
			t.Errorf("client %+v: want id %d, group %d, label counts adding up to train, a test set", c, k, k/6)
		}
		total += c.Train
	}
	if s := rep.Summary; total != 2000 || s.TrainTotal != 2000 || len(s.Groups) != 2 || s.Index != 1 || len(s.NoiseSigmas) != 12 || s.NoiseSigmas[11] != 0.2 {
		t.Errorf("summary = %+v; want 2000 train samples (synthetic), 2 groups, point 1, 12 noise levels up to 0.2", s)
	}

	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("heatmap: %v", err)
	}
	// gonum/plot's rendering at 144 dpi: 12 rows of at least 3 points plus
	// title and axes, a grid of 10 classes, the size bars and colour bar.
	b := img.Bounds()
	if b.Dx() < 600 || b.Dy() < 150 {
		t.Errorf("heatmap is %v; want a readable image", b)
	}
	// Not blank: the grid's cells are shades of blue, and the darkest
	// (a group-0 client's dominant class, share near 1) is dark blue.
	var blue, dark int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if bl > r+0x1000 && bl > g {
				blue++
			}
			if bl>>8 < 140 && r>>8 < 40 && bl > r {
				dark++
			}
		}
	}
	if area := b.Dx() * b.Dy(); blue < area/10 || dark == 0 {
		t.Errorf("heatmap: %d bluish and %d dark blue pixels of %d; want a drawn grid", blue, dark, area)
	}

	st, err := store.Open(context.Background(), blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sk, _ := store.SweepKeys("pshow")
	pk, _ := sk.Point(rep.Summary.Point)
	rows, err := store.ReadRows[store.PartitionRow](context.Background(), st, pk.Compacted(store.TablePartitions))
	if err != nil || len(rows) != 12 || rows[7].Train != int32(rep.Clients[7].Train) {
		t.Errorf("partitions rows = %d rows (%v); want 12 matching the report", len(rows), err)
	}
	if rep.Summary.Rows != pk.Compacted(store.TablePartitions) {
		t.Errorf("summary names %s; want %s", rep.Summary.Rows, pk.Compacted(store.TablePartitions))
	}

	// The text form names the summary figures.
	out.Reset()
	if err := execute(context.Background(), root(), []string{"partition", "show", "-f", spec, "--blob", blob}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"train size min", "median", "mean label entropy (nats): group 0:", "group 1:", "c9", "noise"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
	// A point that does not exist is a usage error.
	err = execute(context.Background(), root(), []string{"partition", "show", "-f", spec, "--point", "2", "--blob", blob}, &out, &errOut)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "points 0..1") {
		t.Errorf("--point 2 = %v; want a usage error naming points 0..1", err)
	}
}
