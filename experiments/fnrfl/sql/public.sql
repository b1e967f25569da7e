-- The public-set-size ablation (check 18's second half): per label-skew scenario and public-set size,
-- FedAvg's and FNR-FL's (paper) accuracy after round 10 (mean and std over seeds) and the gain, with
-- the per-seed gain's std (the seeds pair the two methods on the same partition).
WITH final AS (
  SELECT regexp_extract(p.label, '"scheme":"([^"]*)"', 1) || coalesce(' a=' || nullif(regexp_extract(p.label, '"alpha":([0-9.]+)', 1), ''), '') AS scenario,
         CAST(regexp_extract(p.label, '"public_per_class":([0-9]+)', 1) AS INTEGER) AS per_class,
         regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method,
         regexp_extract(p.label, 'seed=([0-9]+)', 1) AS seed, r.test_acc
  FROM points p JOIN rounds r USING (point) WHERE r.round = 10),
paired AS (
  SELECT scenario, per_class, seed,
         any_value(test_acc) FILTER (WHERE method = 'fedavg') AS fedavg,
         any_value(test_acc) FILTER (WHERE method = 'fnrfl') AS fnr
  FROM final GROUP BY ALL)
SELECT scenario, per_class, per_class * 10 AS public_size,
       round(avg(fedavg), 3) AS fedavg, round(stddev_samp(fedavg), 3) AS fedavg_sd,
       round(avg(fnr), 3) AS fnr_paper, round(stddev_samp(fnr), 3) AS fnr_sd,
       round(avg(fnr - fedavg), 3) AS gain, round(stddev_samp(fnr - fedavg), 3) AS gain_sd, count(*) AS n
FROM paired GROUP BY ALL ORDER BY scenario, per_class
