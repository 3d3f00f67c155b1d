simulate
--logits
@DATA@/scores_bad_h0.npy
--ctx
4
