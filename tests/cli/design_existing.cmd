design
--slopes
press
--heads
16
--ctx
2048
