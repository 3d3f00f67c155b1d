analyze
--config
@DATA@/../../data/config_fields/bad-btlm-scaling-type.json
--ctx
2k
