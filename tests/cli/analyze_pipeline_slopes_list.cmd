analyze
--ctx
1000
--slopes
slopes:0.5,0.03125,1e-3
--pipeline
eager
