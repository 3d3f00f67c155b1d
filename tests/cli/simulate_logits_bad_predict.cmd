simulate
--logits
@DATA@/scores_zero_f32.npy
--predict
