-- The paper's Table 2/4 shape: global test accuracy after round 10, mean and standard deviation
-- over the seeds, per scenario and method, with FedAvg's beside it and the centralised bound
-- (one party holding the whole pool, 10 epochs; sweep fnrfl-central).
WITH final AS (
  SELECT p.sweep, p.dataset,
         regexp_extract(p.label, 'partition=(\{[^}]*\})', 1) AS scenario,
         regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method, p.seed, r.test_acc
  FROM points p JOIN rounds r USING (point)
  WHERE r.round = 10 AND p.sweep <> 'fnrfl-central'),
central AS (
  SELECT p.dataset, avg(r.test_acc) AS acc FROM points p JOIN rounds r USING (point)
  WHERE p.sweep = 'fnrfl-central' AND r.round = 10 GROUP BY p.dataset),
agg AS (
  SELECT dataset, scenario, method, avg(test_acc) AS acc, stddev_samp(test_acc) AS sd, count(*) AS seeds
  FROM final GROUP BY ALL)
SELECT a.dataset, a.scenario, a.method, round(a.acc, 4) AS acc, round(a.sd, 4) AS sd, a.seeds,
       round(a.acc - f.acc, 4) AS vs_fedavg, round(c.acc, 4) AS central
FROM agg a JOIN agg f ON f.dataset = a.dataset AND f.scenario = a.scenario AND f.method = 'fedavg'
LEFT JOIN central c ON c.dataset = a.dataset
ORDER BY a.dataset, a.scenario, a.method
