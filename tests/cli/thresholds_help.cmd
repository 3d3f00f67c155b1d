thresholds
--help
