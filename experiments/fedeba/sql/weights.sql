-- What the weights did: the mean entropy H(p) of the aggregation weights over the rounds (log 10 =
-- 2.303 is uniform) and the share of rounds in which the client with the largest loss after training
-- got the largest weight (§6 E check 21), per method that chooses its weights.
WITH w AS (
  SELECT c.point, c.round, c.agg_weight, c.train_loss_after,
         max(c.agg_weight) OVER (PARTITION BY c.point, c.round) AS wmax,
         max(c.train_loss_after) OVER (PARTITION BY c.point, c.round) AS lmax
  FROM clients c WHERE c.selected AND c.agg_weight IS NOT NULL),
top AS (SELECT point, round, bool_or(agg_weight = wmax AND train_loss_after = lmax) AS hit FROM w GROUP BY ALL)
SELECT regexp_replace(p.label, ' seed=\d+$', '') AS method,
       printf('%.3f', avg(r.agg_entropy)) AS mean_entropy, printf('%.3f', min(r.agg_entropy)) AS min_entropy,
       printf('%.2f', avg(CAST(t.hit AS INT))) AS top_loss_top_weight
FROM rounds r JOIN points p USING (point) JOIN top t ON t.point = r.point AND t.round = r.round
WHERE r.agg_entropy IS NOT NULL GROUP BY 1 ORDER BY 1
