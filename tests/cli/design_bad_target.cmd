design
--targets
100,600
--ctx
512
