-- FNR-FL's refine phase: how many parties it refined, their public accuracy against the others' (the
-- local models after training), the global model's accuracy on their local test sets,
-- per variant and scenario (refined_per_point: ⌊10·0.5⌋ × 10 rounds = 50 when every round refines).
SELECT p.dataset, regexp_extract(p.label, 'algorithm=(\S+)', 1) AS method,
       regexp_extract(p.label, 'partition=(\{[^}]*\})', 1) AS scenario,
       round(avg(c.public_acc) FILTER (WHERE c.refined), 3) AS refined_public_acc,
       round(avg(c.public_acc) FILTER (WHERE NOT c.refined), 3) AS others_public_acc,
       round(avg(c.test_acc) FILTER (WHERE c.refined), 3) AS global_acc_on_their_tests,
       count(*) FILTER (WHERE c.refined) / count(DISTINCT p.point) AS refined_per_point
FROM points p JOIN clients c USING (point)
WHERE c.public_acc IS NOT NULL
GROUP BY ALL ORDER BY ALL
