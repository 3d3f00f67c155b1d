analyze
--ctx
2048
--slopes
slopes:0.5,0.25,1e-3
--logit
2.5
