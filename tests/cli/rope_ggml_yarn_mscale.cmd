rope
--config
@DATA@/../../data/configs/rope_yarn_mscale.json
--pipeline
ggml-cpu
