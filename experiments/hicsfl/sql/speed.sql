-- Table 2: rounds to a common target accuracy per setting, and the speed-up over random.
-- The target is random's final accuracy (mean over seeds of its last 10 rounds) minus 2 points
-- (specs/hicsfl.md §6 D15). A run reaches it in the first round whose trailing 5-round mean test
-- accuracy is at or above it (the per-round accuracy swings by several points under this label
-- skew; the paper smooths its curves too); a run that never does counts as not reached.
WITH acc AS (
  SELECT regexp_extract(p.label, 'hics-[123]') AS setting, regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, r.seed, r.round, r.test_acc,
         avg(r.test_acc) OVER (PARTITION BY r.point ORDER BY r.round ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) AS acc5
  FROM rounds r JOIN points p USING (point)
  WHERE r.evaluated AND r.round > 0),
last AS (SELECT setting, max(round) AS r FROM acc GROUP BY setting),
final AS (
  SELECT a.setting, a.sampler, a.seed, avg(a.test_acc) AS final_acc
  FROM acc a JOIN last l USING (setting) WHERE a.round > l.r - 10 GROUP BY ALL),
target AS (SELECT setting, avg(final_acc) - 0.02 AS target FROM final WHERE sampler = 'random' GROUP BY setting),
hit AS (
  SELECT a.setting, a.sampler, a.seed, min(a.round) FILTER (WHERE a.round >= 5 AND a.acc5 >= t.target) AS rounds
  FROM acc a JOIN target t USING (setting) GROUP BY ALL),
per AS (
  SELECT h.setting, h.sampler, avg(h.rounds) AS mean_rounds, count(h.rounds) AS reached, count(*) AS seeds,
         avg(f.final_acc) AS final_acc, stddev_samp(f.final_acc) AS final_sd
  FROM hit h JOIN final f USING (setting, sampler, seed) GROUP BY ALL)
SELECT p.setting, p.sampler, round(t.target, 4) AS target, round(p.mean_rounds, 1) AS rounds_to_target,
       p.reached || '/' || p.seeds AS reached,
       round(r.mean_rounds / p.mean_rounds, 2) AS speedup_vs_random,
       round(p.final_acc, 4) AS final_acc, round(p.final_sd, 4) AS final_acc_sd
FROM per p JOIN target t USING (setting) JOIN per r ON r.setting = p.setting AND r.sampler = 'random'
ORDER BY p.setting, p.sampler
