-- The paper's Table 3 columns that do not depend on the clock: values sent and received per
-- round (MB at 4 bytes a value), round trips, and the samples passed through models per round
-- (training plus the refine phase's scoring and refinement), by method, over all scenarios.
-- Wall time per round is measured separately (results/time.txt), alone on the machine.
SELECT p.dataset, regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method,
       round(avg(r.down_floats + r.up_floats) * 4 / 1e6, 3) AS mb_per_round,
       round(avg(r.up_floats) * 4 / 1e6, 3) AS up_mb, round(avg(r.down_floats) * 4 / 1e6, 3) AS down_mb,
       avg(r.round_trips) AS trips, round(avg(r.train_samples + coalesce(r.refine_samples, 0))) AS samples_per_round
FROM points p JOIN rounds r USING (point)
WHERE r.round > 0 AND p.sweep <> 'fnrfl-central'
GROUP BY ALL ORDER BY ALL
