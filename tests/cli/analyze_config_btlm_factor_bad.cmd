analyze
--config
@DATA@/../../data/config_fields/bad-btlm-factor.json
--ctx
2k
