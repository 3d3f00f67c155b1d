analyze
--config
@DATA@/config_falcon_hidden_not_multiple.json
--ctx
64
