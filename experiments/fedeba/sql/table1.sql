-- Table 1's shape: each method's fairness at the last round (300), mean ± sample std over the seeds.
-- Global Acc = mean of the 100 clients' local test accuracies (%), Var = their population variance
-- (%²), Worst/Best 5% = mean of the 5 lowest / highest (%), C_v = std/mean; test = the global model on
-- the whole FMNIST test split (%); aligned = the share of rounds FedEBA+ ran gradient alignment.
WITH last AS (SELECT point, max(round) AS r FROM rounds WHERE evaluated GROUP BY point),
f AS (
  SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method, r.seed,
         100 * r.client_acc_mean AS acc, r.client_acc_var_pct2 AS var, 100 * r.client_acc_worst5 AS w5,
         100 * r.client_acc_best5 AS b5, r.client_acc_cv AS cv, 100 * r.test_acc AS test
  FROM rounds r JOIN last l ON l.point = r.point AND l.r = r.round JOIN points p ON p.point = r.point),
al AS (SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method, avg(CAST(r.aligned AS INT)) AS aligned
       FROM rounds r JOIN points p USING (point) WHERE r.round > 0 GROUP BY 1)
SELECT f.method, count(*) AS seeds,
       printf('%.2f ± %.2f', avg(acc), stddev_samp(acc)) AS global_acc,
       printf('%.2f ± %.2f', avg(var), stddev_samp(var)) AS var_pct2,
       printf('%.2f ± %.2f', avg(w5), stddev_samp(w5)) AS worst5,
       printf('%.2f ± %.2f', avg(b5), stddev_samp(b5)) AS best5,
       printf('%.4f', avg(cv)) AS cv,
       printf('%.2f ± %.2f', avg(test), stddev_samp(test)) AS test_acc,
       CASE WHEN any_value(al.aligned) IS NULL THEN '' ELSE printf('%.2f', any_value(al.aligned)) END AS aligned
FROM f LEFT JOIN al USING (method)
GROUP BY f.method ORDER BY f.method
