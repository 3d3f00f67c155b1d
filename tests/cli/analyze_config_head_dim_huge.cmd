analyze
--config
@DATA@/config_falcon_head_dim_huge.json
--ctx
64
