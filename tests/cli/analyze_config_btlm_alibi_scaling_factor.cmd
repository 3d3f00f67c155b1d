analyze
--config
@DATA@/../../data/config_fields/btlm-factor-3.json
--ctx
2k
