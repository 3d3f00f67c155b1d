analyze
--config
@DATA@
--ctx
1024
