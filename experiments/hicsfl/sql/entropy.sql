-- HiCS-FL's entropy estimate against the true label entropy (specs/hicsfl.md §6 A5): per setting and
-- HiCS-FL variant, the mean estimate per alpha-group over the selections of the first post-warm-up
-- rounds (11-20), the group's true mean entropy, and the rank correlation of estimate and truth
-- over all of the variant's selections.
WITH e AS (
  SELECT regexp_extract(p.label, 'hics-[123]') AS setting, regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler,
         c.seed, c.round, pa."group" AS grp, c.entropy_est AS est, pa.entropy AS truth
  FROM clients c JOIN points p USING (point) JOIN partitions pa ON pa.point = c.point AND pa.client = c.client
  WHERE c.selected AND p.sampler = 'hics' AND c.entropy_est IS NOT NULL),
ranked AS (SELECT *, rank() OVER (PARTITION BY setting, sampler ORDER BY est) AS re,
                     rank() OVER (PARTITION BY setting, sampler ORDER BY truth) AS rt FROM e)
SELECT setting, sampler, grp AS alpha_group, count(*) FILTER (WHERE round BETWEEN 11 AND 20) AS n_r11_20,
       round(avg(est) FILTER (WHERE round BETWEEN 11 AND 20), 3) AS est_r11_20,
       round(avg(truth), 3) AS true_entropy,
       round(any_value(rho), 3) AS spearman_all_rounds
FROM ranked JOIN (SELECT setting, sampler, corr(re, rt) AS rho FROM ranked GROUP BY ALL) USING (setting, sampler)
GROUP BY ALL ORDER BY setting, sampler, alpha_group
