-- Client work and upload per round beyond training, relative to random (specs/hicsfl.md Table 3):
-- samples passed forward by clients (training + queries), samples also passed backward for query
-- gradients, values uploaded, and client round trips. Mean over all rounds and points.
WITH per AS (
  SELECT regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, avg(r.train_samples + r.query_samples) AS samples, avg(r.query_grad_samples) AS grad_samples,
         avg(r.up_floats) AS up, avg(r.down_floats) AS down, avg(r.round_trips) AS trips
  FROM rounds r JOIN points p USING (point) WHERE r.round > 0 GROUP BY 1)
SELECT p.sampler, round(p.samples) AS client_samples, round(p.samples / r.samples, 2) AS samples_vs_random,
       round(p.grad_samples) AS query_grad_samples, round(p.up / r.up, 2) AS upload_vs_random,
       round(p.down / r.down, 2) AS download_vs_random, round(p.trips, 2) AS round_trips
FROM per p, per r WHERE r.sampler = 'random' ORDER BY p.sampler
