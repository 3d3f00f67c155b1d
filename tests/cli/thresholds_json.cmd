thresholds
--format
json
