analyze
--heads
abc
--ctx
2048
