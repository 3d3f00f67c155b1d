rope
--head-dim
8
--q
@DATA@/rope_q8.npy
--k
@DATA@/rope_bad_shape.npy
