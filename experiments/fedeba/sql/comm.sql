-- Communication per round, mean over rounds and seeds, in model-sized vectors per selected client
-- (199,210 floats): downloads, uploads, round trips, and the additional share over FedAvg's traffic
-- (the paper's "additional cost", Table 3: 50% when every round is gradient-aligned).
WITH c AS (
  SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method, avg(r.down_floats / (r.clients * p.num_params)) AS down,
         avg(r.up_floats / (r.clients * p.num_params)) AS up, avg(r.round_trips) AS trips
  FROM rounds r JOIN points p USING (point) WHERE r.round > 0 GROUP BY 1)
SELECT method, printf('%.3f', down) AS down_models, printf('%.3f', up) AS up_models, printf('%.2f', trips) AS round_trips,
       printf('%.1f%%', 100 * (1 - 2 / (down + up))) AS additional_share
FROM c ORDER BY method
