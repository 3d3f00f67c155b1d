simulate
--logits
@DATA@/scores_zero_f32.npy
--logit-std
1
