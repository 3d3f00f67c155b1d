simulate
--heads
4
--logits
@DATA@/scores_bad_f64.npy
