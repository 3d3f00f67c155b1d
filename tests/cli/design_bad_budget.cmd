design
--heads
4
--ctx
512
--logit-budget
-200
