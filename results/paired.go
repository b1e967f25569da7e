package results

import (
	"context"
	"database/sql"
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// The paired view compares every two methods of a setting seed by seed
// (README.md, "Querying results"). A point's setting is its
// configuration without what names its method and seed: config_json with
// seed, algorithm, sampler, aggregator, server_optimizer, inspect and attack removed
// (json_merge_patch with nulls). Two points of one setting and one seed are
// a pair; with common random numbers (streams: common, the default) they
// drew the same clients and minibatches, so their difference carries only
// what the methods do. Pairs come from every sweep the DB spans (a point
// stored in several sweeps counts once), and need both points evaluated at
// the same last round.
//
// For each (setting, method, baseline, metric) with n pairs it gives the
// mean paired difference method − baseline, its sample standard deviation
// and the 95% Student-t interval
//
//	mean ± t_{0.975, n−1}·sd/√n
//
// (null for n = 1; the macro t975, macros.go), and covers_zero when the interval holds 0. Metrics,
// each at a point's last evaluated round:
//
//	final_acc          test accuracy on the test split
//	fairness_var_pct2  variance of the clients' local test accuracies, in %² (client_acc_var_pct2)
//	rounds_to_target   the first evaluated round with test accuracy ≥ getvariable('target')
//	                   (SET VARIABLE target = 0.8 first; pairs where either point never
//	                   reached it are left out, so n says how many reached it)
//
// method and baseline are the points' labels without the seed.
const pairedView = `CREATE VIEW paired AS
WITH p AS (
  SELECT DISTINCT ON (point) point, seed, label,
    trim(regexp_replace(label, '(^|\s)seed=\S+', '', 'g')) AS method,
    CASE WHEN json_valid(config_json) THEN CAST(json_merge_patch(config_json, '{"seed":null,"algorithm":null,"sampler":null,"aggregator":null,"server_optimizer":null,"inspect":null,"attack":null}') AS VARCHAR) END AS setting
  FROM points
), last AS (
  SELECT point, max(round) AS round FROM rounds WHERE evaluated GROUP BY point
), v AS (
  SELECT p.point, p.seed, p.method, p.setting, last.round AS last_round,
    any_value(r.test_acc) AS final_acc, any_value(r.client_acc_var_pct2) AS fairness_var_pct2,
    (SELECT min(t.round) FROM rounds t WHERE t.point = p.point AND t.evaluated AND t.test_acc >= getvariable('target')) AS rounds_to_target
  FROM p JOIN last USING (point) JOIN rounds r ON r.point = p.point AND r.round = last.round AND r.evaluated
  GROUP BY ALL
), d AS (
  SELECT a.setting, a.method, b.method AS baseline, a.seed,
    a.final_acc - b.final_acc AS final_acc,
    a.fairness_var_pct2 - b.fairness_var_pct2 AS fairness_var_pct2,
    CAST(a.rounds_to_target AS DOUBLE) - b.rounds_to_target AS rounds_to_target
  FROM v a JOIN v b ON a.setting = b.setting AND a.seed = b.seed AND a.method <> b.method AND a.last_round = b.last_round
), s AS (
  SELECT setting, method, baseline, metric, count(*) AS n, avg(diff) AS mean, stddev_samp(diff) AS sd, list(seed ORDER BY seed) AS seeds
  FROM (UNPIVOT d ON final_acc, fairness_var_pct2, rounds_to_target INTO NAME metric VALUE diff)
  WHERE diff IS NOT NULL AND isfinite(diff)
  GROUP BY ALL
)
SELECT setting, method, baseline, metric, n, seeds, mean, sd,
  mean - t975(n - 1) * sd / sqrt(n) AS lo, mean + t975(n - 1) * sd / sqrt(n) AS hi,
  (mean - t975(n - 1) * sd / sqrt(n) <= 0 AND mean + t975(n - 1) * sd / sqrt(n) >= 0) AS covers_zero
FROM s`

// T975 returns t_{0.975, df}, the 97.5% quantile of Student's t with df
// degrees of freedom (gonum's distuv.StudentsT).
func T975(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// createPaired creates the paired view on db; it needs the macros.
func createPaired(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, pairedView); err != nil {
		return fmt.Errorf("create view paired: %w", err)
	}
	return nil
}
