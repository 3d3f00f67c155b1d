analyze
--heads
