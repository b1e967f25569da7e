-- paper-settings.yaml (HiCS-FL at the paper's setting, FMNIST settings (1) and (3), 200 rounds,
-- evaluated every 2nd round): per setting, sampler and seed, the first evaluated round whose trailing
-- 3-evaluation mean test accuracy reaches the paper's Table 2 target of 75% (NULL: not reached), the
-- mean accuracy of the last 10 rounds and the rounds done, beside random's in the same setting and
-- seed (common random numbers: the same partition, initial model and minibatch orders). paper.sql's
-- definitions; run over sweep hicsfl-paper-settings. The paired intervals: the view `paired`
-- (SET VARIABLE target = 0.75; SELECT * FROM paired). to60 is the same count for 60%, setting (3)'s
-- target: no arm reaches 75% there, and 60% is random's mean last-10 accuracy in that setting (0.64)
-- minus about 2 points, specs/hicsfl.md §6 D15's "final accuracy of random minus 2 points", rounded
-- down. Add sweep hicsfl-paper-settings-oracle for the oracle arm.
WITH acc AS (
  SELECT regexp_extract(p.label, '"scheme":"(hics-[0-9])"', 1) AS setting,
         regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, r.seed, r.round, r.test_acc,
         avg(r.test_acc) OVER (PARTITION BY r.point ORDER BY r.round ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS acc3
  FROM rounds r JOIN points p USING (point)
  WHERE r.evaluated AND r.round > 0),
per AS (
  SELECT setting, sampler, seed, max(round) AS rounds_done,
         min(round) FILTER (WHERE round >= 6 AND acc3 >= 0.75) AS to75,
         min(round) FILTER (WHERE round >= 6 AND acc3 >= 0.60) AS to60,
         avg(test_acc) FILTER (WHERE round > 190) AS last10
  FROM acc GROUP BY ALL)
SELECT a.setting, a.sampler, a.seed, a.rounds_done, a.to75, a.to60, round(a.last10, 4) AS last10,
       b.to75 AS random_to75, b.to60 AS random_to60, round(a.last10 - b.last10, 4) AS last10_minus_random
FROM per a LEFT JOIN per b ON b.setting = a.setting AND b.seed = a.seed AND b.sampler = 'random'
ORDER BY a.setting, a.sampler, a.seed
