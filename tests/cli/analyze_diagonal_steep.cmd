analyze
--slopes
slopes:200
--ctx
64
