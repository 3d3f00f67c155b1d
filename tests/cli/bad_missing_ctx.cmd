analyze
--heads
16
