simulate
--heads
4
--logits
@DATA@/scores_bad_nan.npy
