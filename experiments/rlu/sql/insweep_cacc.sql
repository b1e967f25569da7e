-- Mean cacc of each attack on every client's update, by FL algorithm and attacked round, with the
-- global test accuracy of the attacked model (theta after round r-1) and the number of attacks
-- (clients x seeds). Rows the attacks do not model (MOON) say modelled = false.
SELECT a.sweep, a.algorithm, bool_and(a.modelled) AS modelled, a.round,
       round(avg(r.test_acc), 3) AS model_acc,
       round(avg(cacc) FILTER (WHERE method = 'rlu'), 3) AS rlu,
       round(avg(cacc) FILTER (WHERE method = 'rlu-naive'), 3) AS rlu_naive,
       round(avg(cacc) FILTER (WHERE method = 'llg+'), 3) AS llg_plus,
       round(avg(cacc) FILTER (WHERE method = 'zlg+'), 3) AS zlg_plus,
       round(avg(cacc) FILTER (WHERE method = 'ilrg'), 3) AS ilrg,
       count(*) FILTER (WHERE method = 'rlu') AS n
FROM attacks a JOIN rounds r ON r.point = a.point AND r.round = a.round - 1
GROUP BY a.sweep, a.algorithm, a.round ORDER BY a.sweep, a.algorithm, a.round
