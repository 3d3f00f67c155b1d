thresholds
--wide
