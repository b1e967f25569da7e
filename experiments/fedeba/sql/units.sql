-- FedEBA+ α × τ × the units of g̃ (units.yaml; README.md, "The units of g̃"): per reading, τ and α,
-- mean ± sample std over the seeds of Global Acc (%), Var (%²) and Worst 5% (%) at the last round
-- (300), the same averaged over each run's last five evaluations (rounds 260–300) first, the seeds
-- whose last accuracy is at most 15% (a dead network), and the largest mean minibatch loss of any
-- round (a divergence shows as 10³ and more). Only finished runs (300 rounds) count.
WITH last AS (SELECT sweep, point, max(round) AS final FROM rounds WHERE evaluated AND sweep = 'fedeba-units' GROUP BY ALL HAVING max(round) = 300),
run AS (
  SELECT CASE WHEN p.label LIKE '%align_units=update%' THEN 'update (ours)' ELSE 'gradient (paper)' END AS units,
         CAST(regexp_extract(p.label, 'tau=([0-9.]+)', 1) AS DOUBLE) AS tau,
         CAST(regexp_extract(p.label, 'alpha=([0-9.]+)', 1) AS DOUBLE) AS alpha, r.seed,
         avg(100 * r.client_acc_mean) FILTER (WHERE r.round = l.final) AS acc,
         avg(r.client_acc_var_pct2) FILTER (WHERE r.round = l.final) AS var,
         avg(100 * r.client_acc_worst5) FILTER (WHERE r.round = l.final) AS w5,
         avg(100 * r.client_acc_mean) FILTER (WHERE r.round > l.final - 50) AS acc5,
         avg(r.client_acc_var_pct2) FILTER (WHERE r.round > l.final - 50) AS var5,
         avg(100 * r.client_acc_worst5) FILTER (WHERE r.round > l.final - 50) AS w55
  FROM rounds r JOIN last l USING (sweep, point) JOIN points p USING (sweep, point)
  WHERE r.evaluated GROUP BY ALL),
loss AS (
  SELECT CASE WHEN p.label LIKE '%align_units=update%' THEN 'update (ours)' ELSE 'gradient (paper)' END AS units,
         CAST(regexp_extract(p.label, 'tau=([0-9.]+)', 1) AS DOUBLE) AS tau,
         CAST(regexp_extract(p.label, 'alpha=([0-9.]+)', 1) AS DOUBLE) AS alpha, max(r.batch_loss) AS max_loss
  FROM rounds r JOIN points p USING (sweep, point) JOIN last l USING (sweep, point) GROUP BY ALL)
SELECT units, tau, alpha, count(*) AS seeds,
       printf('%.2f ± %.2f', avg(acc), stddev_samp(acc)) AS global_acc,
       printf('%.1f ± %.1f', avg(var), stddev_samp(var)) AS var_pct2,
       printf('%.1f ± %.1f', avg(w5), stddev_samp(w5)) AS worst5,
       printf('%.2f ± %.2f', avg(acc5), stddev_samp(acc5)) AS acc_last5,
       printf('%.1f ± %.1f', avg(var5), stddev_samp(var5)) AS var_last5,
       printf('%.1f ± %.1f', avg(w55), stddev_samp(w55)) AS worst5_last5,
       count(*) FILTER (WHERE acc <= 15) AS dead,
       printf('%.3g', any_value(loss.max_loss)) AS max_batch_loss
FROM run JOIN loss USING (units, tau, alpha)
GROUP BY units, tau, alpha ORDER BY tau, alpha, units
