-- Round-to-round fluctuation of test accuracy over rounds 50-200 (specs/hicsfl.md §6 D15): the
-- standard deviation of the change in test accuracy from one evaluation to the next (every round in
-- the MLP sweeps, every 2nd at the paper's setting), mean over seeds.
WITH a AS (
  SELECT regexp_extract(p.label, 'hics-[123]') AS setting, regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, r.seed, r.round,
         r.test_acc - lag(r.test_acc) OVER (PARTITION BY r.point ORDER BY r.round) AS d
  FROM rounds r JOIN points p USING (point) WHERE r.evaluated),
per AS (SELECT setting, sampler, seed, stddev_samp(d) AS sd FROM a WHERE round BETWEEN 50 AND 200 GROUP BY ALL)
SELECT setting, sampler, round(avg(sd), 4) AS acc_step_sd FROM per GROUP BY ALL ORDER BY setting, sampler
