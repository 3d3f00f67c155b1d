simulate
--pipeline
flash2,pv-accumulate=bf16
--heads
4
--ctx
64
