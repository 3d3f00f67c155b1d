simulate
--heads
2
--ctx
8
--logits-dtype
fp16
