-- The leak diagnostic: FNR-FL refining on the test split (as the official code does) against the
-- honest FNR-FL, FedAvg and the centralised bound, per scenario. Every leaking round is marked.
WITH final AS (
  SELECT p.dataset, regexp_extract(p.label, 'partition=(\{[^}]*\})', 1) AS scenario,
         regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method, r.test_acc, r.public_leak
  FROM points p JOIN rounds r USING (point) WHERE r.round = 10 AND p.sweep = 'fnrfl-fmnist'),
central AS (
  SELECT p.dataset, avg(r.test_acc) AS acc FROM points p JOIN rounds r USING (point)
  WHERE p.sweep = 'fnrfl-central' AND r.round = 10 GROUP BY p.dataset)
SELECT f.dataset, f.scenario,
       round(avg(test_acc) FILTER (WHERE method = 'fedavg'), 4) AS fedavg,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl'), 4) AS fnrfl,
       round(avg(test_acc) FILTER (WHERE method = 'fnrfl(leak=true)'), 4) AS fnrfl_leak,
       round(any_value(c.acc), 4) AS central,
       bool_and(public_leak) FILTER (WHERE method = 'fnrfl(leak=true)') AS leak_marked
FROM final f LEFT JOIN central c USING (dataset)
GROUP BY ALL ORDER BY ALL
