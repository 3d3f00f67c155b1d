design
--clamp
--heads
16
--ctx
2048
--pipeline
flash2
