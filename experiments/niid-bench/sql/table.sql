-- NIID-Bench's Table III shape: the global model's test accuracy after the last round (50), in %,
-- mean and sample standard deviation over the seeds, per dataset x partition x method, beside the
-- paper's number (experiments/niid-bench/paper.csv; `checked` says whether it was checked against a
-- copy of the paper, see README "The paper's numbers"). The paper tunes FedProx's mu over
-- {0.001, 0.01, 0.1, 1} and reports the best: the row fedprox(best mu) is the mu with the highest mean
-- here, and it, not each mu, is the one to compare. NIID-Bench's numbers are SCAFFOLD with its code's
-- after-step correction; scaffold without options is the paper's gradient correction (with our lr_sum).
-- `flower` is Flower's baseline reproduction of the same table (experiments/niid-bench/flower.csv: one
-- run, seed 42, its README's "Expected Results"), a peer tool's numbers, not the paper's.
-- Partitions are named as in Table III by scenarios.csv. Run from the repository root (the two CSV
-- files are read by relative paths).
WITH sc AS (
  SELECT p.dataset, p.point, p.seed, p.final_test_acc * 100 AS acc, p.status,
         regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method,
         coalesce(m.scenario, CAST(json_extract(p.config_json, '$.partition') AS VARCHAR)) AS scenario, m.ord
  FROM points p LEFT JOIN read_csv('experiments/niid-bench/scenarios.csv') m
    ON m.scheme = json_extract_string(p.config_json, '$.partition.scheme')
   AND m.alpha IS NOT DISTINCT FROM CAST(json_extract(p.config_json, '$.partition.alpha') AS DOUBLE)
   AND m.labels_per_client IS NOT DISTINCT FROM CAST(json_extract(p.config_json, '$.partition.labels_per_client') AS INT)
   AND m.noise IS NOT DISTINCT FROM CAST(json_extract(p.config_json, '$.partition.noise') AS DOUBLE)),
agg AS (
  SELECT dataset, scenario, ord, method, avg(acc) AS acc, stddev_samp(acc) AS sd, count(*) AS seeds,
         count(*) FILTER (WHERE status = 'done') AS done
  FROM sc GROUP BY ALL),
best AS (
  SELECT dataset, scenario, ord, 'fedprox(best mu)' AS method, arg_max(acc, acc) AS acc, arg_max(sd, acc) AS sd,
         arg_max(seeds, acc) AS seeds, arg_max(done, acc) AS done, arg_max(method, acc) AS picked
  FROM agg WHERE method LIKE 'fedprox(%' GROUP BY ALL),
united AS (
  SELECT dataset, scenario, ord, method, acc, sd, seeds, done, NULL AS picked FROM agg
  UNION ALL SELECT dataset, scenario, ord, method, acc, sd, seeds, done, picked FROM best),
-- the paper's name of each row's method (NULL: a row the paper's table does not have)
rows AS (
  SELECT *, CASE method WHEN 'fedavg' THEN 'FedAvg' WHEN 'fedprox(best mu)' THEN 'FedProx'
    WHEN 'scaffold(correction=after_step)' THEN 'SCAFFOLD' WHEN 'fednova' THEN 'FedNova' END AS paper_method
  FROM united),
paper AS (SELECT * FROM read_csv('experiments/niid-bench/paper.csv', header = true, auto_detect = true)),
flower AS (SELECT * FROM read_csv('experiments/niid-bench/flower.csv', header = true, auto_detect = true))
SELECT r.dataset, r.scenario, r.method, r.seeds, r.done,
       CASE WHEN r.seeds > 1 THEN printf('%.1f ± %.1f', r.acc, r.sd) ELSE printf('%.1f', r.acc) END AS ours,
       CASE WHEN pa.acc IS NOT NULL THEN printf('%.1f ± %.1f', pa.acc, pa.sd) END AS paper,
       pa.checked AS paper_checked,
       CASE WHEN pa.acc IS NOT NULL THEN printf('%+.1f', r.acc - pa.acc) END AS diff,
       CASE WHEN fl.acc IS NOT NULL THEN printf('%.1f', fl.acc) END AS flower, r.picked
FROM rows r
LEFT JOIN paper pa ON pa.dataset = r.dataset AND pa.scenario = r.scenario AND pa.method = r.paper_method
LEFT JOIN flower fl ON fl.dataset = r.dataset AND fl.scenario = r.scenario AND fl.method = r.paper_method
ORDER BY r.dataset,
         r.ord, r.scenario,
         list_position(['fedavg', 'fedprox(best mu)', 'fedprox(mu=0.001)', 'fedprox(mu=0.01)', 'fedprox(mu=0.1)', 'fedprox(mu=1)',
                        'scaffold(correction=after_step)', 'scaffold', 'fednova', 'moon', 'feddyn', 'feddc'], r.method),
         r.method
