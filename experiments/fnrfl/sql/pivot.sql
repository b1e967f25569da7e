-- Table 2/4 as the paper lays it out: one row per dataset and scenario, one column per method, the
-- mean over seeds of the global test accuracy after round 10 (seeds per cell in n), and the
-- centralised bound.
WITH final AS (
  SELECT p.dataset, regexp_extract(p.label, 'partition=(\{[^}]*\})', 1) AS scenario,
         regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method, r.test_acc
  FROM points p JOIN rounds r USING (point)
  WHERE r.round = 10 AND p.sweep <> 'fnrfl-central'),
central AS (
  SELECT p.dataset, avg(r.test_acc) AS acc FROM points p JOIN rounds r USING (point)
  WHERE p.sweep = 'fnrfl-central' AND r.round = 10 GROUP BY p.dataset)
SELECT f.dataset, replace(replace(f.scenario, '"clients":10,', ''), '"public_per_class":100,', '') AS scenario,
       round(avg(test_acc) FILTER (WHERE method = 'fedavg'), 3) AS fedavg,
       round(avg(test_acc) FILTER (WHERE method = 'fedprox(mu=0.01)'), 3) AS fedprox,
       round(avg(test_acc) FILTER (WHERE method = 'scaffold(correction=after_step)'), 3) AS scaffold,
       round(avg(test_acc) FILTER (WHERE method = 'fednova'), 3) AS fednova,
       round(avg(test_acc) FILTER (WHERE method = 'moon(mu=1)'), 3) AS moon,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl'), 3) AS fnr_paper,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl(variant=code)'), 3) AS fnr_code,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl(variant=corrected)'), 3) AS fnr_corrected,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl(leak=true)'), 3) AS fnr_leak,
       round(any_value(c.acc), 3) AS central, count(*) FILTER (WHERE method = 'fedavg') AS n
FROM final f LEFT JOIN central c USING (dataset)
GROUP BY ALL ORDER BY ALL
