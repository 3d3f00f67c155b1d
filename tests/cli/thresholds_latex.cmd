thresholds
--format
latex
