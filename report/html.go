package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"f3": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.3f", v)
	},
	"pct": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", 100*v)
	},
	"pm": func(m, s float64, n int) string {
		if n < 2 {
			return fmt.Sprintf("%.3f", m)
		}
		return fmt.Sprintf("%.3f ± %.3f", m, s)
	},
	"speedup": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.2f×", v)
	},
	"rounds": func(lo, hi int) string {
		if lo == hi {
			return fmt.Sprint(lo)
		}
		return fmt.Sprintf("%d–%d", lo, hi)
	},
	"setting": displaySetting,
	"metric": func(m string) string {
		return map[string]string{"final_acc": "final accuracy", "rounds_to_target": "rounds to target", "fairness_var_pct2": "client accuracy variance (%²)"}[m]
	},
	"diff": pairedValue,
	"interval": func(metric string, lo, hi float64) string {
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return "— (one pair)"
		}
		return "[" + pairedValue(metric, lo) + ", " + pairedValue(metric, hi) + "]"
	},
}).Parse(pageTemplate))

// pairedValue formats a paired difference in its metric's unit: accuracy
// in percentage points, rounds and %² with one decimal.
func pairedValue(metric string, v float64) string {
	if metric == "final_acc" {
		return fmt.Sprintf("%+.2f pp", 100*v)
	}
	return fmt.Sprintf("%+.1f", v)
}

// section is a part of the page: its figures, in order.
type section struct {
	Figures []figure
}

// pageData is what the template reads.
type pageData struct {
	*Report
	Unfinished                             []PointStatus
	Acc, Loss, TrainLoss                   []figure
	ClientFigs, CompositionFigs, AttackFig []figure
	PartitionFigs                          []figure
	Finished                               int
	TargetShare                            float64
}

// Write draws the report's figures (PNG and SVG) and index.html into dir,
// creating it.
func Write(r *Report, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	d := pageData{Report: r, Unfinished: r.Unfinished(), TargetShare: DefaultTargetShare}
	d.Finished = len(r.Points) - len(d.Unfinished)
	d.Acc, d.Loss, d.TrainLoss = r.curveFigures(MetricAcc), r.curveFigures(MetricLoss), r.curveFigures(MetricTrainLoss)
	var err error
	if d.ClientFigs, err = r.clientFigures(); err != nil {
		return err
	}
	d.CompositionFigs, d.AttackFig = r.compositionFigures(), r.attackFigures()
	if d.PartitionFigs, err = r.partitionFigures(); err != nil {
		return err
	}
	for _, fs := range [][]figure{d.Acc, d.Loss, d.TrainLoss, d.ClientFigs, d.CompositionFigs, d.AttackFig, d.PartitionFigs} {
		for _, f := range fs {
			if err := f.write(dir); err != nil {
				return err
			}
		}
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		return fmt.Errorf("report page: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "index.html"), buf.Bytes(), 0o644)
}
