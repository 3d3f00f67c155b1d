analyze
--config
@DATA@/../../data/config_fields/bad-jais-mup.json
--ctx
2k
