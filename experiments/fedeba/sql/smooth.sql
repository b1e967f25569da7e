-- The same figures averaged over the last five evaluations (rounds 260–300) of each run before the
-- mean ± std over seeds: with 10 of 100 clients per round the per-round variance swings, and this
-- shows how much of a difference in table1 is that swing.
WITH last AS (SELECT point, max(round) AS r FROM rounds WHERE evaluated GROUP BY point),
run AS (
  SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method, r.seed,
         avg(100 * r.client_acc_mean) AS acc, avg(r.client_acc_var_pct2) AS var,
         avg(100 * r.client_acc_worst5) AS w5, avg(100 * r.client_acc_best5) AS b5
  FROM rounds r JOIN last l ON l.point = r.point JOIN points p ON p.point = r.point
  WHERE r.evaluated AND r.round > l.r - 50 GROUP BY ALL)
SELECT method, count(*) AS seeds,
       printf('%.2f ± %.2f', avg(acc), stddev_samp(acc)) AS global_acc,
       printf('%.2f ± %.2f', avg(var), stddev_samp(var)) AS var_pct2,
       printf('%.2f ± %.2f', avg(w5), stddev_samp(w5)) AS worst5,
       printf('%.2f ± %.2f', avg(b5), stddev_samp(b5)) AS best5
FROM run GROUP BY method ORDER BY method
