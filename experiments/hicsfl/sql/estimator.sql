-- HiCS-FL's two entropy estimates of the same stored updates (README.md, "The estimator"): after
-- each round t from the end of the warm-up (10) to 50, every client's last bias update Δb (what the
-- sampler holds when it plans round t + 1), turned into the paper's Ĥ = H(softmax(Δb/T)), T = 0.0025,
-- and our scale-free Ĥ' = H(softmax(Δb/‖Δb‖₂/T')), T' = 0.19, whichever estimator the run sampled
-- with. Per run (sampler), round and alpha-group: the mean of each, the group's true mean label
-- entropy, the mean max |Δb_c| of its clients' updates, and per run and round the AUC of each
-- estimate for telling the alpha = 0.5 group (group 4) from the single-class clients (one label).
WITH s AS (
  SELECT regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, c.point, t.t, c.client, c.bias_delta AS b
  FROM clients c JOIN points p USING (point) JOIN (SELECT unnest(range(10, 51)) AS t) t ON c.round <= t.t
  WHERE c.selected
  QUALIFY row_number() OVER (PARTITION BY c.point, t.t, c.client ORDER BY c.round DESC) = 1),
z AS (
  SELECT *, list_transform(b, x -> (x - list_max(b)) / 0.0025) AS zp,
         list_transform(b, x -> (x - list_max(b)) / sqrt(list_sum(list_transform(b, y -> y * y))) / 0.19) AS zs,
         list_max(list_transform(b, x -> abs(x))) AS maxdb
  FROM s),
h AS (
  SELECT z.sampler, z.point, z.t, z.client, pa."group" AS grp, pa.entropy AS truth, z.maxdb,
         len(list_filter(pa.label_counts, x -> x > 0)) = 1 AS single,
         ln(list_sum(list_transform(zp, x -> exp(x)))) - list_sum(list_transform(zp, x -> x * exp(x))) / list_sum(list_transform(zp, x -> exp(x))) AS h_paper,
         ln(list_sum(list_transform(zs, x -> exp(x)))) - list_sum(list_transform(zs, x -> x * exp(x))) / list_sum(list_transform(zs, x -> exp(x))) AS h_sf
  FROM z JOIN partitions pa ON pa.point = z.point AND pa.client = z.client),
auc AS (
  SELECT a.point, a.t,
         avg(CASE WHEN a.h_paper > b.h_paper THEN 1 WHEN a.h_paper = b.h_paper THEN 0.5 ELSE 0 END) AS auc_paper,
         avg(CASE WHEN a.h_sf > b.h_sf THEN 1 WHEN a.h_sf = b.h_sf THEN 0.5 ELSE 0 END) AS auc_sf
  FROM h a JOIN h b ON a.point = b.point AND a.t = b.t
  WHERE a.grp = 4 AND b.single
  GROUP BY ALL)
SELECT sampler, t AS after_round, grp AS alpha_group, count(*) AS clients, round(avg(truth), 3) AS true_entropy,
       round(avg(maxdb), 4) AS max_abs_db, round(avg(h_paper), 3) AS h_paper, round(avg(h_sf), 3) AS h_scale_free,
       round(any_value(auc_paper), 3) AS auc_paper, round(any_value(auc_sf), 3) AS auc_scale_free
FROM h JOIN auc USING (point, t)
GROUP BY ALL ORDER BY sampler, after_round, alpha_group
