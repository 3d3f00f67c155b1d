analyze
--ctx
2048
--logit-range
3:1
