// Package report builds `starter report`: one self-contained HTML page
// (index.html, its figures as PNG files beside it, each also as SVG) that
// summarises a sweep, finished or still running, from its Parquet tables:
// accuracy and loss per method over rounds, rounds to a target accuracy and
// the speed-up over FedAvg, the clients' final accuracies (fairness), the
// sampler's group composition, the label-recovery attacks' scores, a
// heatmap of every distinct partition, and the papers' claims that read the
// sweep with their verdicts (package claims; the caller evaluates them).
//
// Build computes the tables with SQL over package results' DuckDB views
// (rounds, clients, partitions, points, attacks) plus the sweep's stored
// spec (for the points that have not run yet); Write draws the figures and
// the page. Nothing here talks to Temporal.
//
// The figures are drawn with gonum.org/v1/plot: it is pure Go (no cgo, no
// browser, no Python), writes the same figure as PNG and SVG from one
// drawing, embeds its fonts (so pages need no network), is maintained, and
// is part of gonum, whose numerics the trainer already uses.
package report

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/claims"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/store"
)

// Options configure Build.
type Options struct {
	// Target is the test accuracy for the rounds-to-target table; 0 means
	// DefaultTargetShare times the best final mean accuracy of the sweep.
	Target float64
	// Claims are the evaluated claims of the papers that read the sweep
	// (package claims); the page lists them with their verdicts.
	Claims []claims.Result
}

// DefaultTargetShare is the default target's share of the best final mean
// accuracy of the sweep's methods.
const DefaultTargetShare = 0.9

// Report is everything the page shows, computed.
type Report struct {
	Sweep string
	// Points are the sweep's points with their status; SpecFound is false
	// when the bucket has no spec.json for the sweep, and the points are
	// then those of the points table (points that never started are
	// unknown).
	Points    []PointStatus
	SpecFound bool
	// Methods group the points by label without seed, in point order.
	Methods []Method
	// Curves holds, per metric (MetricAcc, MetricLoss, MetricTrainLoss),
	// the mean, min, max and std over seeds of each method's evaluated
	// rounds; a metric no point recorded has no entry.
	Curves map[string][]CurvePoint
	// Target is the accuracy of the rounds-to-target table; TargetDefault
	// says it is DefaultTargetShare × BestFinal.
	Target        float64
	TargetDefault bool
	BestFinal     float64
	Summary       []MethodSummary
	// Clients are the distributions of the clients' local test accuracy
	// at each point's last evaluated round, pooled over seeds, per method.
	Clients []ClientDist
	// GroupKind is "group" (the partition's groups, HiCS-FL's α-groups),
	// "cluster" (the sampler's clusters) or "" (neither: no composition).
	GroupKind   string
	Composition []Share
	ShareMeans  []ShareMean
	Attacks     []AttackMean
	Partitions  []Partition
	// Paired are the paired differences of each method against its
	// setting's baseline (the speed-up's), seed by seed, from the paired
	// view (package results): final accuracy, rounds to Target and the
	// clients' accuracy variance.
	Paired []PairedDiff
	// Claims are Options.Claims.
	Claims []claims.Result
}

// PairedDiff is one method's mean paired difference from its baseline in
// one metric over N seeds, with its 95% Student-t interval [Lo, Hi] (NaN
// for one pair); CoversZero says the interval holds 0: no difference
// shown.
type PairedDiff struct {
	Setting, Method, Baseline string
	Metric                    string
	N                         int
	Mean, Lo, Hi              float64
	CoversZero                bool
}

// The paired metrics, in the order the page shows them.
var pairedMetrics = []string{"final_acc", "rounds_to_target", "fairness_var_pct2"}

// Metric columns of the rounds table the curves show.
const (
	MetricAcc       = "test_acc"
	MetricLoss      = "test_loss"
	MetricTrainLoss = "global_train_loss"
)

var metrics = []string{MetricAcc, MetricLoss, MetricTrainLoss}

// CurvePoint is one method's metric at one evaluated round, over the seeds
// that evaluated it (N of them; Std is the sample standard deviation, 0 for
// one seed).
type CurvePoint struct {
	Method              string
	Round               int
	Mean, Min, Max, Std float64
	N                   int
}

// MethodSummary is one line of the rounds-to-target table. Final is each
// point's accuracy at its last evaluated round, Best its highest; both are
// mean ± sample std over the method's N points with an evaluated round.
// RoundsToTarget is the first evaluated round whose mean accuracy over
// seeds reaches the target (-1: not reached); SpeedUp is the baseline's
// rounds to target over this method's (NaN when either did not reach it,
// or this method reached it at round 0).
type MethodSummary struct {
	Method, Setting, Short string
	N                      int
	FinalMean, FinalStd    float64
	BestMean, BestStd      float64
	LastRound              int // the highest evaluated round of any seed
	RoundsToTarget         int
	Baseline               string // the method of the same setting the speed-up is relative to
	SpeedUp                float64
}

// ClientDist summarises the clients' local test accuracies of a method at
// each point's last evaluated round (rounds MinRound..MaxRound over the
// seeds): N values pooled over seeds, quartiles interpolated linearly
// (DuckDB's quantile_cont, numpy's default).
type ClientDist struct {
	Method                   string
	MinRound, MaxRound       int
	N                        int
	Min, Q1, Median, Q3, Max float64
	Mean                     float64
	Values                   []float64
}

// Share is one group's (or cluster's) share among a method's selected
// clients in one round, pooled over seeds: Count of Total selected clients
// (distinct clients per point and round).
type Share struct {
	Method       string
	Round, Group int
	Count, Total int
	Share        float64
}

// ShareMean is a group's mean share over a method's rounds, beside its
// share of the population (the clients of the partition; NaN for clusters,
// which have no fixed population).
type ShareMean struct {
	Method     string
	Group      int
	Mean       float64
	Population float64
}

// AttackMean is the mean class- and instance-level accuracy of one attack
// method on one FL method's updates in one round, over N scored attacks
// (clients × seeds); NotApplicable counts the attacks that could not run.
type AttackMean struct {
	Method, Attack string
	Round          int
	CAcc, IAcc     float64
	N              int
	NotApplicable  int
}

// Partition is one distinct partition of the sweep (equal per-client label
// counts and groups), with the points that share it.
type Partition struct {
	Seed    int64
	Scheme  string
	Points  []string
	Methods []string
	Clients []PartitionClient
	Classes int
}

// PartitionClient is one client of a partition.
type PartitionClient struct {
	Client      int
	Group       int // -1 without groups
	Train       int
	LabelCounts []int
}

// Build computes the report of sweep name in the bucket at blobURL.
func Build(ctx context.Context, blobURL, name string, o Options) (*Report, error) {
	if o.Target < 0 || o.Target > 1 || math.IsNaN(o.Target) {
		return nil, fmt.Errorf("target accuracy %v is not in [0, 1]; give a fraction such as 0.8, or 0 for %g × the best final mean accuracy", o.Target, DefaultTargetShare)
	}
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ps, paths, found, err := pointStatuses(ctx, st, name)
	if err != nil {
		return nil, err
	}
	db, err := results.Open(ctx, blobURL, []string{name}, false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if !found {
		if ps, err = pointsFromTable(ctx, db.DB); err != nil {
			return nil, err
		}
	}
	r := &Report{Sweep: name, Points: ps, SpecFound: found, Methods: groupMethods(ps, paths), Claims: o.Claims}
	if err := writeMeta(ctx, db.DB, r); err != nil {
		return nil, err
	}
	steps := []func(context.Context, *sql.DB) error{r.curves, r.summary, r.clients, r.composition, r.attacks, r.partitions}
	for _, s := range steps {
		if err := s(ctx, db.DB); err != nil {
			return nil, err
		}
	}
	if err := r.targets(o.Target); err != nil {
		return nil, err
	}
	if err := r.paired(ctx, db.DB); err != nil {
		return nil, err
	}
	return r, nil
}

// paired reads each method's paired differences from its baseline. The
// target is a session variable of the view, so one connection sets it and
// queries.
func (r *Report) paired(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET VARIABLE target = %.17g", r.Target)); err != nil {
		return fmt.Errorf("paired: %w", err)
	}
	const q = `SELECT metric, n, mean, coalesce(lo, 'NaN'::DOUBLE), coalesce(hi, 'NaN'::DOUBLE), coalesce(covers_zero, true)
		FROM paired WHERE method = ? AND baseline = ?`
	for _, s := range r.Summary {
		if s.Baseline == "" || s.Baseline == s.Method {
			continue
		}
		got := map[string]PairedDiff{}
		rows, err := conn.QueryContext(ctx, q, s.Method, s.Baseline)
		if err != nil {
			return fmt.Errorf("paired: %w", err)
		}
		for rows.Next() {
			d := PairedDiff{Setting: s.Setting, Method: s.Short, Baseline: r.method(s.Baseline).Short}
			if err := rows.Scan(&d.Metric, &d.N, &d.Mean, &d.Lo, &d.Hi, &d.CoversZero); err != nil {
				rows.Close()
				return fmt.Errorf("paired: %w", err)
			}
			got[d.Metric] = d
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, m := range pairedMetrics {
			if d, ok := got[m]; ok {
				r.Paired = append(r.Paired, d)
			}
		}
	}
	return nil
}

// Unfinished are the points that have not ended (done or diverged).
func (r *Report) Unfinished() []PointStatus {
	var u []PointStatus
	for _, p := range r.Points {
		if !p.Finished() {
			u = append(u, p)
		}
	}
	return u
}

// Settings are the methods' settings, in order of first appearance.
func (r *Report) Settings() []string {
	var s []string
	for _, m := range r.Methods {
		if !slices.Contains(s, m.Setting) {
			s = append(s, m.Setting)
		}
	}
	return s
}

func (r *Report) method(name string) *Method {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// pointsFromTable lists the points of the points table, for a sweep
// without a stored spec. A point the table says is running is incomplete.
func pointsFromTable(ctx context.Context, db *sql.DB) ([]PointStatus, error) {
	rows, err := db.QueryContext(ctx, `SELECT point, "index", label, seed, status, rounds_done, rounds FROM points ORDER BY "index", point`)
	if err != nil {
		return nil, fmt.Errorf("points table: %w", err)
	}
	defer rows.Close()
	var ps []PointStatus
	for rows.Next() {
		var p PointStatus
		if err := rows.Scan(&p.ID, &p.Index, &p.Label, &p.Seed, &p.Status, &p.Rounds, &p.Of); err != nil {
			return nil, err
		}
		if !p.Finished() {
			p.Status = "incomplete"
		}
		p.Method = StripSeed(p.Label)
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// writeMeta stores each point's method as the table report_meta (point,
// method, midx: the method's index, pidx: the point's), which the queries
// join on.
func writeMeta(ctx context.Context, db *sql.DB, r *Report) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE report_meta (point VARCHAR, method VARCHAR, midx INTEGER, pidx INTEGER)`); err != nil {
		return err
	}
	midx := map[string]int{}
	for i, m := range r.Methods {
		midx[m.Name] = i
	}
	for _, p := range r.Points {
		if _, err := db.ExecContext(ctx, `INSERT INTO report_meta VALUES (?, ?, ?, ?)`, p.ID, p.Method, midx[p.Method], p.Index); err != nil {
			return err
		}
	}
	return nil
}

// curves computes Curves. A (point, round) with several rows (a part file
// beside the compacted file after an interrupted compaction) counts once.
func (r *Report) curves(ctx context.Context, db *sql.DB) error {
	r.Curves = map[string][]CurvePoint{}
	for _, metric := range metrics {
		q := fmt.Sprintf(`WITH v AS (
  SELECT point, round, any_value(%[1]s) AS v FROM rounds
  WHERE evaluated AND %[1]s IS NOT NULL AND isfinite(%[1]s) GROUP BY point, round)
SELECT m.method, v.round, avg(v.v), min(v.v), max(v.v), coalesce(stddev_samp(v.v), 0), count(*)
FROM v JOIN report_meta m USING (point) GROUP BY m.midx, m.method, v.round ORDER BY m.midx, v.round`, metric)
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("curves of %s: %w", metric, err)
		}
		var cs []CurvePoint
		for rows.Next() {
			var c CurvePoint
			if err := rows.Scan(&c.Method, &c.Round, &c.Mean, &c.Min, &c.Max, &c.Std, &c.N); err != nil {
				rows.Close()
				return err
			}
			cs = append(cs, c)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(cs) > 0 {
			r.Curves[metric] = cs
		}
	}
	return nil
}

// summary computes each method's final and best accuracy over seeds.
func (r *Report) summary(ctx context.Context, db *sql.DB) error {
	const q = `WITH v AS (
  SELECT point, round, any_value(test_acc) AS acc FROM rounds
  WHERE evaluated AND test_acc IS NOT NULL AND isfinite(test_acc) GROUP BY point, round),
per AS (SELECT point, arg_max(acc, round) AS final, max(acc) AS best, max(round) AS last FROM v GROUP BY point)
SELECT m.method, count(*), avg(final), coalesce(stddev_samp(final), 0), avg(best), coalesce(stddev_samp(best), 0), max(last)
FROM per JOIN report_meta m USING (point) GROUP BY m.midx, m.method ORDER BY m.midx`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("final accuracy: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s MethodSummary
		if err := rows.Scan(&s.Method, &s.N, &s.FinalMean, &s.FinalStd, &s.BestMean, &s.BestStd, &s.LastRound); err != nil {
			return err
		}
		m := r.method(s.Method)
		s.Setting, s.Short = m.Setting, m.Short
		s.RoundsToTarget, s.SpeedUp = -1, math.NaN()
		r.Summary = append(r.Summary, s)
	}
	return rows.Err()
}

// targets fills the target, each method's rounds to it and its speed-up
// over its setting's baseline: the setting's FedAvg when it has one, else
// its first method.
func (r *Report) targets(target float64) error {
	for _, s := range r.Summary {
		r.BestFinal = max(r.BestFinal, s.FinalMean)
	}
	r.Target = target
	if target == 0 {
		r.Target, r.TargetDefault = DefaultTargetShare*r.BestFinal, true
	}
	reached := map[string]int{}
	for _, c := range r.Curves[MetricAcc] {
		if _, ok := reached[c.Method]; !ok && c.Mean >= r.Target {
			reached[c.Method] = c.Round
		}
	}
	baseline := map[string]string{}
	for _, m := range r.Methods {
		b, ok := baseline[m.Setting]
		if !ok || (isFedAvg(m.Short) && !isFedAvg(r.method(b).Short)) {
			if r.hasSummary(m.Name) {
				baseline[m.Setting] = m.Name
			}
		}
	}
	for i := range r.Summary {
		s := &r.Summary[i]
		if rt, ok := reached[s.Method]; ok {
			s.RoundsToTarget = rt
		}
		s.Baseline = baseline[s.Setting]
		b, ok := reached[s.Baseline]
		if ok && s.RoundsToTarget > 0 {
			s.SpeedUp = float64(b) / float64(s.RoundsToTarget)
		}
	}
	return nil
}

func (r *Report) hasSummary(method string) bool {
	return slices.ContainsFunc(r.Summary, func(s MethodSummary) bool { return s.Method == method })
}

// clients computes the client accuracy distributions at each point's last
// evaluated round.
func (r *Report) clients(ctx context.Context, db *sql.DB) error {
	const q = `WITH last AS (SELECT point, max(round) AS round FROM rounds WHERE evaluated GROUP BY point),
v AS (SELECT c.point, c.round, c.client, any_value(c.test_acc) AS acc FROM clients c JOIN last USING (point, round)
  WHERE c.test_acc IS NOT NULL AND isfinite(c.test_acc) AND coalesce(c.test_n, 1) > 0 GROUP BY c.point, c.round, c.client)
SELECT m.method, min(v.round), max(v.round), count(*), min(acc), quantile_cont(acc, 0.25), quantile_cont(acc, 0.5),
  quantile_cont(acc, 0.75), max(acc), avg(acc), list(acc ORDER BY acc)
FROM v JOIN report_meta m USING (point) GROUP BY m.midx, m.method ORDER BY m.midx`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("client accuracies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d ClientDist
		var vals []any
		if err := rows.Scan(&d.Method, &d.MinRound, &d.MaxRound, &d.N, &d.Min, &d.Q1, &d.Median, &d.Q3, &d.Max, &d.Mean, &vals); err != nil {
			return err
		}
		for _, v := range vals {
			d.Values = append(d.Values, v.(float64))
		}
		r.Clients = append(r.Clients, d)
	}
	return rows.Err()
}

// composition computes the shares of the partition's groups among the
// selected clients per round or, without groups, of the sampler's
// clusters.
func (r *Report) composition(ctx context.Context, db *sql.DB) error {
	var groups, clusters int
	if err := db.QueryRowContext(ctx, `SELECT count("group") FROM partitions`).Scan(&groups); err != nil {
		return fmt.Errorf("partition groups: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(cluster) FROM clients WHERE selected`).Scan(&clusters); err != nil {
		return fmt.Errorf("clusters: %w", err)
	}
	var sel string
	switch {
	case groups > 0:
		r.GroupKind = "group"
		sel = `SELECT DISTINCT c.point, c.round, c.client, p."group" AS g FROM clients c
  JOIN partitions p ON p.point = c.point AND p.client = c.client WHERE c.selected AND p."group" IS NOT NULL`
	case clusters > 0:
		r.GroupKind = "cluster"
		sel = `SELECT DISTINCT point, round, client, cluster AS g FROM clients WHERE selected AND cluster IS NOT NULL`
	default:
		return nil
	}
	q := `WITH s AS (` + sel + `),
n AS (SELECT m.midx, m.method, s.round, s.g, count(*) AS k FROM s JOIN report_meta m USING (point) GROUP BY ALL)
SELECT method, round, g, k, sum(k) OVER (PARTITION BY midx, round) FROM n ORDER BY midx, round, g`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("composition: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s Share
		if err := rows.Scan(&s.Method, &s.Round, &s.Group, &s.Count, &s.Total); err != nil {
			return err
		}
		s.Share = float64(s.Count) / float64(s.Total)
		r.Composition = append(r.Composition, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return r.shareMeans(ctx, db)
}

// shareMeans averages each group's share over a method's rounds (a round
// where the group had no selected client counts as 0) and adds its share
// of the population.
func (r *Report) shareMeans(ctx context.Context, db *sql.DB) error {
	pop := map[string]map[int]float64{} // method → group → share of the clients
	if r.GroupKind == "group" {
		rows, err := db.QueryContext(ctx, `WITH g AS (SELECT DISTINCT point, client, "group" AS g FROM partitions WHERE "group" IS NOT NULL)
SELECT m.method, g.g, count(*) / sum(count(*)) OVER (PARTITION BY m.method) FROM g JOIN report_meta m USING (point) GROUP BY m.method, g.g`)
		if err != nil {
			return fmt.Errorf("group sizes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var m string
			var g int
			var s float64
			if err := rows.Scan(&m, &g, &s); err != nil {
				return err
			}
			if pop[m] == nil {
				pop[m] = map[int]float64{}
			}
			pop[m][g] = s
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	type key struct {
		method string
		group  int
	}
	sum := map[key]float64{}
	rounds := map[string]map[int]bool{}
	var order []key
	for _, s := range r.Composition {
		k := key{s.Method, s.Group}
		if _, ok := sum[k]; !ok {
			order = append(order, k)
		}
		sum[k] += s.Share
		if rounds[s.Method] == nil {
			rounds[s.Method] = map[int]bool{}
		}
		rounds[s.Method][s.Round] = true
	}
	idx := map[string]int{}
	for i, m := range r.Methods {
		idx[m.Name] = i
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(idx[a.method], idx[b.method]), cmp.Compare(a.group, b.group))
	})
	for _, k := range order {
		p := math.NaN()
		if v, ok := pop[k.method][k.group]; ok {
			p = v
		}
		r.ShareMeans = append(r.ShareMeans, ShareMean{Method: k.method, Group: k.group, Mean: sum[k] / float64(len(rounds[k.method])), Population: p})
	}
	return nil
}

// attacks computes the attacks' mean scores per method, attack and round.
func (r *Report) attacks(ctx context.Context, db *sql.DB) error {
	const q = `SELECT m.method, a.method, a.round, coalesce(avg(a.cacc), 'NaN'::DOUBLE), coalesce(avg(a.iacc), 'NaN'::DOUBLE),
  count(a.iacc), count(*) FILTER (WHERE a.not_applicable <> '')
FROM attacks a JOIN report_meta m USING (point) GROUP BY m.midx, m.method, a.method, a.round ORDER BY m.midx, a.method, a.round`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("attacks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a AttackMean
		if err := rows.Scan(&a.Method, &a.Attack, &a.Round, &a.CAcc, &a.IAcc, &a.N, &a.NotApplicable); err != nil {
			return err
		}
		r.Attacks = append(r.Attacks, a)
	}
	return rows.Err()
}

// partitions reads every point's partition and keeps the distinct ones.
func (r *Report) partitions(ctx context.Context, db *sql.DB) error {
	const q = `SELECT p.point, p.seed, coalesce(any_value(t.partition), ''), m.method,
  list(p.client ORDER BY p.client), list(coalesce(p."group", -1) ORDER BY p.client),
  list(p.train ORDER BY p.client), list(p.label_counts ORDER BY p.client)
FROM partitions p JOIN report_meta m USING (point) LEFT JOIN points t USING (point)
GROUP BY m.pidx, p.point, p.seed, m.method ORDER BY m.pidx`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("partitions: %w", err)
	}
	defer rows.Close()
	at := map[string]int{}
	for rows.Next() {
		var point, method string
		var p Partition
		var clients, groups, train, counts []any
		if err := rows.Scan(&point, &p.Seed, &p.Scheme, &method, &clients, &groups, &train, &counts); err != nil {
			return err
		}
		var key strings.Builder
		for i := range clients {
			c := PartitionClient{Client: int(clients[i].(int32)), Group: int(groups[i].(int32)), Train: int(train[i].(int32))}
			for _, x := range counts[i].([]any) {
				c.LabelCounts = append(c.LabelCounts, int(x.(int32)))
			}
			p.Classes = max(p.Classes, len(c.LabelCounts))
			p.Clients = append(p.Clients, c)
			fmt.Fprintf(&key, "%d:%d:%v;", c.Client, c.Group, c.LabelCounts)
		}
		i, ok := at[key.String()]
		if !ok {
			i = len(r.Partitions)
			at[key.String()] = i
			r.Partitions = append(r.Partitions, p)
		}
		q := &r.Partitions[i]
		q.Points = append(q.Points, point)
		if !slices.Contains(q.Methods, method) {
			q.Methods = append(q.Methods, method)
		}
	}
	return rows.Err()
}
