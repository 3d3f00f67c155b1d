analyze
--heads
16
--ctx
2048
--logit
1e
