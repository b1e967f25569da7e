-- The share of selected clients that come from the last alpha-group (the "balanced" 20%: alpha 0.5 in
-- setting 1, 0.2 in setting 2; in setting 3 every group has alpha 0.001), over rounds 11-60 and over
-- the last 10% of rounds (specs/hicsfl.md §6 D14). Mean over seeds of each seed's share.
WITH sel AS (
  SELECT regexp_extract(p.label, 'hics-[123]') AS setting, regexp_extract(p.label, 'sampler=(\S+)', 1) AS sampler, c.seed, c.round, (pa."group" = 4)::INT AS balanced
  FROM clients c JOIN points p USING (point) JOIN partitions pa ON pa.point = c.point AND pa.client = c.client
  WHERE c.selected),
last AS (SELECT setting, max(round) AS r FROM sel GROUP BY setting),
per AS (
  SELECT s.setting, s.sampler, s.seed,
         avg(balanced) FILTER (WHERE s.round BETWEEN 11 AND 60) AS early,
         avg(balanced) FILTER (WHERE s.round > l.r - l.r / 10) AS late
  FROM sel s JOIN last l USING (setting) GROUP BY ALL)
SELECT setting, sampler, round(avg(early), 3) AS share_r11_60, round(stddev_samp(early), 3) AS sd_r11_60,
       round(avg(late), 3) AS share_last10pct, round(stddev_samp(late), 3) AS sd_last10pct
FROM per GROUP BY ALL ORDER BY setting, sampler
