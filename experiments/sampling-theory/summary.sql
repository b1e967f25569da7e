-- Final-window comparison of Fraboni et al. 2022, Figs. 1-2: per importance, the mean over the
-- last 20% of rounds of the global training loss L(θ^t) = Σ_k p_k L_k(θ^t) for each scheme and
-- seed, then across seeds the mean and the standard error of the paired (same seed: same split and
-- initial model) differences. Negative md_minus_u means MD is better (the paper's sign). sd_* is
-- the across-seed spread of the final-window means; vol_* the mean over seeds of the round-to-round
-- standard deviation of L within the final window (Uniform's random Σω shows up as spikes there).
WITH w AS (
  SELECT p.importance, p.sampler, r.seed, avg(r.global_train_loss) AS l, stddev_samp(r.global_train_loss) AS vol
  FROM rounds r JOIN points p USING (point)
  WHERE r.evaluated AND r.round > 0.8 * p.rounds
  GROUP BY ALL
), s AS (
  SELECT importance, seed,
         any_value(l) FILTER (WHERE sampler = 'md') AS md,
         any_value(l) FILTER (WHERE sampler = 'uniform') AS u,
         any_value(l) FILTER (WHERE sampler = 'clustered') AS cl,
         any_value(vol) FILTER (WHERE sampler = 'md') AS vol_md,
         any_value(vol) FILTER (WHERE sampler = 'uniform') AS vol_u,
         any_value(vol) FILTER (WHERE sampler = 'clustered') AS vol_cl
  FROM w GROUP BY ALL
), t AS (
  SELECT p.importance, p.sampler, sum(pa.importance * pa.importance) AS sp2, any_value(p.num_clients) AS n,
         any_value(p.clients_per_round) AS m, any_value(p.sampling_sigma) AS sigma,
         any_value(p.sampling_alpha) AS alpha, any_value(p.sampling_var_sum) AS var_sum
  FROM points p JOIN partitions pa USING (point)
  WHERE p.seed = 1
  GROUP BY ALL
)
SELECT s.importance, any_value(t.n) AS n, any_value(t.m) AS m, round(any_value(t.sp2), 4) AS sp2,
       round(1.0 / (any_value(t.n) - any_value(t.m) + 1), 4) AS threshold,
       CASE WHEN any_value(t.sp2) <= 1.0 / (any_value(t.n) - any_value(t.m) + 1) THEN 'uniform' ELSE 'md' END AS cor1_better,
       count(DISTINCT s.seed) AS seeds,
       round(avg(md), 4) AS l_md, round(avg(u), 4) AS l_u, round(avg(cl), 4) AS l_cl,
       round(avg(md - u), 4) AS md_minus_u, round(stddev_samp(md - u) / sqrt(count(DISTINCT s.seed)), 4) AS se_md_u,
       round(avg(cl - md), 4) AS cl_minus_md, round(stddev_samp(cl - md) / sqrt(count(DISTINCT s.seed)), 4) AS se_cl_md,
       round(avg(cl - u), 4) AS cl_minus_u, round(stddev_samp(cl - u) / sqrt(count(DISTINCT s.seed)), 4) AS se_cl_u,
       round(stddev_samp(md), 4) AS sd_md, round(stddev_samp(u), 4) AS sd_u,
       round(avg(vol_md), 4) AS vol_md, round(avg(vol_u), 4) AS vol_u, round(avg(vol_cl), 4) AS vol_cl,
       round(any_value(t.sigma) FILTER (WHERE t.sampler = 'md'), 4) AS sigma_md,
       round(any_value(t.sigma) FILTER (WHERE t.sampler = 'uniform'), 4) AS sigma_u,
       round(any_value(t.sigma) FILTER (WHERE t.sampler = 'clustered'), 4) AS sigma_cl,
       round(any_value(t.var_sum) FILTER (WHERE t.sampler = 'uniform'), 4) AS var_sum_u
FROM s JOIN t ON t.importance = s.importance
GROUP BY s.importance
ORDER BY s.importance DESC
