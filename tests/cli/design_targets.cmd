design
--targets
100,300
--ctx
512
