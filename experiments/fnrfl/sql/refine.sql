-- FNR-FL's refine phase: how many parties it refined, their public accuracy against the others',
-- and the logged penalty (inert in variants paper and code), per variant and scenario.
SELECT p.dataset, regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method,
       regexp_extract(p.label, 'partition=(\{[^}]*\})', 1) AS scenario,
       round(avg(c.public_acc) FILTER (WHERE c.refined), 3) AS refined_public_acc,
       round(avg(c.public_acc) FILTER (WHERE NOT c.refined), 3) AS others_public_acc,
       round(avg(c.test_acc) FILTER (WHERE c.refined), 3) AS refined_local_test_acc,
       count(*) FILTER (WHERE c.refined) / count(DISTINCT p.point) AS refined_per_point
FROM points p JOIN clients c USING (point)
WHERE c.public_acc IS NOT NULL
GROUP BY ALL ORDER BY ALL
