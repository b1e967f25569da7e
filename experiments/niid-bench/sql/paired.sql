-- Each method against FedAvg of the same dataset and partition, seed by seed (the view `paired`,
-- results/paired.go): with streams: common a method and FedAvg of one seed start from the same model
-- and draw the same minibatches, so a per-seed difference carries what the methods do. The mean
-- difference in final test accuracy (points of %), its 95% Student-t interval over the seeds, and
-- whether the interval holds 0. A FedProx row per mu: the paper's "best mu" is picked on these
-- same runs, so its interval is optimistic (selection); read it with that in mind. Partitions are
-- named as in Table III by scenarios.csv; run from the repository root (it reads the CSV by a
-- relative path).
WITH s AS (
  SELECT json_extract_string(setting, '$.dataset.name') AS dataset,
         coalesce(m.scenario, CAST(json_extract(setting, '$.partition') AS VARCHAR)) AS scenario, m.ord,
         regexp_extract(method, 'algorithm=(\S+)', 1) AS method, n, seeds, mean, lo, hi, covers_zero
  FROM paired LEFT JOIN read_csv('experiments/niid-bench/scenarios.csv') m
    ON m.scheme = json_extract_string(setting, '$.partition.scheme')
   AND m.alpha IS NOT DISTINCT FROM CAST(json_extract(setting, '$.partition.alpha') AS DOUBLE)
   AND m.labels_per_client IS NOT DISTINCT FROM CAST(json_extract(setting, '$.partition.labels_per_client') AS INT)
   AND m.noise IS NOT DISTINCT FROM CAST(json_extract(setting, '$.partition.noise') AS DOUBLE)
  WHERE metric = 'final_acc' AND regexp_extract(baseline, 'algorithm=(\S+)', 1) = 'fedavg')
SELECT dataset, scenario, method, n, seeds,
       printf('%+.2f', 100 * mean) AS diff_pts,
       CASE WHEN lo IS NOT NULL THEN printf('[%+.2f, %+.2f]', 100 * lo, 100 * hi) END AS ci95,
       covers_zero
FROM s
ORDER BY dataset,
         ord, scenario,
         list_position(['fedprox(mu=0.001)', 'fedprox(mu=0.01)', 'fedprox(mu=0.1)', 'fedprox(mu=1)',
                        'scaffold(correction=after_step)', 'scaffold', 'fednova', 'moon', 'feddyn', 'feddc'], method),
         method
