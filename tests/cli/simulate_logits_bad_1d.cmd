simulate
--heads
4
--logits
@DATA@/scores_bad_1d.npy
