simulate
--heads
4
--ctx
64
--predict
--logit-std
2
