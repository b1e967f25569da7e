package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

func partitionCommand() *command {
	var file, png string
	var index int
	var asJSON bool
	return &command{name: "partition", summary: "inspect how a sweep's points split their data into clients", subs: []*command{
		{
			name: "show", summary: "compute a point's partition as the engine does: per-client sizes, label counts and entropy; write its partitions rows; optionally a heatmap PNG",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&file, "f", "", "sweep spec (YAML)")
				fs.IntVar(&index, "point", 0, "index of the point in the spec (see starter validate)")
				fs.BoolVar(&asJSON, "json", false, `print JSON: {"clients":[{"id","group","train","test","label_counts","entropy"}...],"summary":{...}}`)
				fs.StringVar(&png, "png", "", "also write a clients x classes heatmap to this PNG file")
			},
			run: func(ctx context.Context, g *globals, args []string) error {
				if file == "" || len(args) > 0 {
					return fmt.Errorf("partition show needs -f SPEC.yaml and no arguments: %w", errUsage)
				}
				return showPartition(ctx, g, file, index, asJSON, png)
			},
		},
	}}
}

// partitionReport is what `partition show` prints.
type partitionReport struct {
	Clients []clientReport `json:"clients"`
	Summary reportSummary  `json:"summary"`
}

type clientReport struct {
	ID          int     `json:"id"`
	Group       int     `json:"group"`
	Train       int     `json:"train"`
	Test        int     `json:"test"`
	LabelCounts []int   `json:"label_counts"`
	Entropy     float64 `json:"entropy"`
}

type reportSummary struct {
	Sweep       string    `json:"sweep"`
	Point       string    `json:"point"`
	Index       int       `json:"index"`
	Label       string    `json:"label"`
	Dataset     string    `json:"dataset"`
	Scheme      string    `json:"scheme"`
	Test        string    `json:"test"`
	Classes     int       `json:"classes"`
	TrainTotal  int       `json:"train_total"`
	TestTotal   int       `json:"test_total"`
	SizeMin     int       `json:"size_min"`
	SizeMedian  float64   `json:"size_median"`
	SizeMax     int       `json:"size_max"`
	Groups      []group   `json:"groups"`                // clients and mean train-label entropy (nats) per group
	NoiseSigmas []float64 `json:"noise_sigma,omitempty"` // σ_k of each client's feature noise
	Rows        string    `json:"partitions_rows"`       // where the partitions table was written
}

type group struct {
	Group       int     `json:"group"`
	Clients     int     `json:"clients"`
	MeanEntropy float64 `json:"mean_entropy"`
}

func showPartition(ctx context.Context, g *globals, file string, index int, asJSON bool, png string) error {
	sw, _, err := loadSpec(file, nil)
	if err != nil {
		return err
	}
	if index < 0 || index >= len(sw.Points) {
		return fmt.Errorf("--point %d: the spec has points 0..%d (see starter validate -f %s): %w", index, len(sw.Points)-1, file, errUsage)
	}
	p := sw.Points[index]
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		return err
	}
	defer st.Close()
	eng := engine.New(st, &engine.Options{DataDir: g.dataDir, Version: g.build(), Kernels: g.kernels})
	sp, err := eng.PointSplit(ctx, p)
	if err != nil {
		return err
	}
	if err := eng.WritePartition(ctx, sw.Name, p, sp); err != nil {
		return err
	}
	sk, _ := store.SweepKeys(sw.Name)
	pk, _ := sk.Point(p.ID)
	rep := buildReport(sw.Name, p, sp)
	rep.Summary.Rows = pk.Compacted(store.TablePartitions)
	if png != "" {
		if err := writeHeatmap(png, rep); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(g.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(g.out, rep, g.blob)
	if png != "" {
		fmt.Fprintf(g.out, "heatmap: %s\n", png)
	}
	return nil
}

func buildReport(sweepName string, p sweep.Point, sp *engine.Split) partitionReport {
	c := p.Config
	rep := partitionReport{Summary: reportSummary{
		Sweep: sweepName, Point: p.ID, Index: p.Index, Label: p.Label, Dataset: c.Dataset.Name,
		Scheme: schemeText(c.Partition), Test: c.Partition.Test, Classes: sp.Data.Classes,
	}}
	var sizes []int
	byGroup := map[int][]float64{}
	for k, s := range sp.Stats {
		gr := 0
		if sp.Part.Group != nil {
			gr = sp.Part.Group[k]
		}
		rep.Clients = append(rep.Clients, clientReport{ID: k, Group: gr, Train: s.Train, Test: s.Test, LabelCounts: s.LabelCounts, Entropy: s.Entropy})
		sizes = append(sizes, s.Train)
		rep.Summary.TrainTotal += s.Train
		rep.Summary.TestTotal += s.Test
		byGroup[gr] = append(byGroup[gr], s.Entropy)
		if sp.Noise.Active() {
			rep.Summary.NoiseSigmas = append(rep.Summary.NoiseSigmas, sp.Noise.Std(k))
		}
	}
	slices.Sort(sizes)
	if n := len(sizes); n > 0 {
		rep.Summary.SizeMin, rep.Summary.SizeMax = sizes[0], sizes[n-1]
		rep.Summary.SizeMedian = float64(sizes[(n-1)/2]+sizes[n/2]) / 2
	}
	for gr := 0; len(rep.Summary.Groups) < len(byGroup); gr++ {
		hs, ok := byGroup[gr]
		if !ok {
			continue
		}
		var sum float64
		for _, h := range hs {
			sum += h
		}
		rep.Summary.Groups = append(rep.Summary.Groups, group{Group: gr, Clients: len(hs), MeanEntropy: sum / float64(len(hs))})
	}
	return rep
}

// schemeText describes a partition config in one line.
func schemeText(pc sweep.PartitionConfig) string {
	s := fmt.Sprintf("%s, %d clients", pc.Scheme, pc.Clients)
	switch pc.Scheme {
	case sweep.SchemeDirichlet, sweep.SchemeQuantity, sweep.SchemeMixed:
		s += fmt.Sprintf(", alpha %g", pc.Alpha)
	case sweep.SchemeKLabels:
		s += fmt.Sprintf(", %d labels each", pc.LabelsPerClient)
	case sweep.SchemeShards:
		s += fmt.Sprintf(", %d shards each", pc.ShardsPerClient)
	case sweep.SchemeHiCS:
		s += fmt.Sprintf(", alphas %v", pc.Alphas)
	case sweep.SchemeUnbalanced:
		switch {
		case pc.SizeExponent != 0:
			s += fmt.Sprintf(", power-law sizes (exponent %g)", pc.SizeExponent)
		case pc.SizeAlpha != 0:
			s += fmt.Sprintf(", Dirichlet sizes (alpha %g)", pc.SizeAlpha)
		default:
			s += ", given sizes"
		}
		if pc.Alpha > 0 {
			s += fmt.Sprintf(", label alpha %g", pc.Alpha)
		}
	}
	if pc.Noise > 0 {
		s += fmt.Sprintf(", noise %g", pc.Noise)
	}
	return s
}

func printReport(w io.Writer, rep partitionReport, blob string) {
	s := rep.Summary
	fmt.Fprintf(w, "sweep %s, point %d %s (%s)\n%s: %s; local test sets: %s\n\n", s.Sweep, s.Index, s.Point, s.Label, s.Dataset, s.Scheme, s.Test)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	head := []string{"client", "group", "train", "test", "entropy"}
	for c := range s.Classes {
		head = append(head, fmt.Sprintf("c%d", c))
	}
	if s.NoiseSigmas != nil {
		head = append(head, "noise")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, c := range rep.Clients {
		cells := []string{fmt.Sprint(c.ID), fmt.Sprint(c.Group), fmt.Sprint(c.Train), fmt.Sprint(c.Test), fmt.Sprintf("%.3f", c.Entropy)}
		for _, x := range c.LabelCounts {
			cells = append(cells, fmt.Sprint(x))
		}
		if s.NoiseSigmas != nil {
			cells = append(cells, fmt.Sprintf("%.4f", s.NoiseSigmas[c.ID]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d clients; train size min %d / median %g / max %d; %d train and %d local test samples in all\n",
		len(rep.Clients), s.SizeMin, s.SizeMedian, s.SizeMax, s.TrainTotal, s.TestTotal)
	fmt.Fprint(w, "mean label entropy (nats):")
	for _, gr := range s.Groups {
		fmt.Fprintf(w, " group %d: %.3f (%d clients);", gr.Group, gr.MeanEntropy, gr.Clients)
	}
	fmt.Fprintf(w, " max possible ln %d = %.3f\n", s.Classes, lnInt(s.Classes))
	fmt.Fprintf(w, "partitions rows: %s in %s\n", s.Rows, blob)
}

// writeHeatmap renders rep as a PNG file.
func writeHeatmap(path string, rep partitionReport) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := renderHeatmap(f, rep); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
