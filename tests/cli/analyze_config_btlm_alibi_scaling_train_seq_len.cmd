analyze
--config
@DATA@/../../data/config_fields/btlm-train-seq-len.json
--ctx
2k
