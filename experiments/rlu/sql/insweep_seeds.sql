-- RLU's iAcc per seed (mean over the 10 clients), then mean and standard deviation over the seeds,
-- by FL algorithm and attacked round.
WITH per_seed AS (
  SELECT sweep, algorithm, round, seed, avg(iacc) AS iacc FROM attacks WHERE method = 'rlu' GROUP BY ALL)
SELECT sweep, algorithm, round, round(avg(iacc), 3) AS rlu_iacc, round(stddev_samp(iacc), 3) AS sd_over_seeds, count(*) AS seeds
FROM per_seed GROUP BY ALL ORDER BY ALL
