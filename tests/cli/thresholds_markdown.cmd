thresholds
--format
markdown
