analyze
--config
@DATA@/../../data/config_fields/mpt-clip-qkv-6.json
--ctx
2k
