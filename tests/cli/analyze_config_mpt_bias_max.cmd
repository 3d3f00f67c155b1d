analyze
--config
@DATA@/config_mpt_bias_max_100.json
