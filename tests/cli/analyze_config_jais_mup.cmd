analyze
--config
@DATA@/../../data/config_fields/jais-mup.json
--ctx
2k
