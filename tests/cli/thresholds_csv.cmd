thresholds
--format
csv
