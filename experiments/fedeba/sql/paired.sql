-- Paired differences from FedAvg, seed by seed (the same partition and initial model), averaged over
-- the last five evaluations of each run: Δacc in points, the ratio of variances, Δworst-5% in points.
-- The spec's checks (§6 E): FedEBA τ=0.1 Var below FedAvg's at accuracy ≥ FedAvg's − 0.5; FedEBA+
-- (α 0.9, τ 0.1, θ 0) Var ≤ 0.85× FedAvg's with accuracy ≥ FedAvg's and worst-5% ≥ FedAvg's − 1.
WITH last AS (SELECT point, max(round) AS r FROM rounds WHERE evaluated GROUP BY point),
run AS (
  SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method, r.seed,
         avg(100 * r.client_acc_mean) AS acc, avg(r.client_acc_var_pct2) AS var, avg(100 * r.client_acc_worst5) AS w5
  FROM rounds r JOIN last l ON l.point = r.point JOIN points p ON p.point = r.point
  WHERE r.evaluated AND r.round > l.r - 50 GROUP BY ALL),
d AS (
  SELECT m.method, m.seed, m.acc - a.acc AS dacc, m.var / a.var AS rvar, m.w5 - a.w5 AS dw5
  FROM run m JOIN run a ON a.seed = m.seed AND a.method = 'algorithm=fedavg')
SELECT method, count(*) AS seeds,
       printf('%+.2f', avg(dacc)) AS d_acc, printf('%.3f', avg(rvar)) AS var_ratio, printf('%+.2f', avg(dw5)) AS d_worst5,
       printf('%d/%d', count(*) FILTER (WHERE rvar < 1), count(*)) AS var_lower
FROM d GROUP BY method ORDER BY method
