simulate
--ctx
64
