analyze
--config
@DATA@/../../data/config_fields/bad-mpt-clip-qkv.json
--ctx
2k
